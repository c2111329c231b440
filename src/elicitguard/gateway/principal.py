"""The principal Envoy's ``jwt_authn`` filter verified, read from its dynamic metadata.

Only used when the operator says Envoy's verification is to be trusted (``serve ext-proc
--trust-envoy-jwt KEY``, the filter's ``payload_in_metadata``): then Envoy is the one
checking the token and this service takes the verified claims. A client's own headers never
become a principal here.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from elicitguard.base.keys import KeyRing
from elicitguard.identity.principal import Principal

__all__ = ["JWT_AUTHN", "principal_from_metadata"]

#: The namespace Envoy's ``jwt_authn`` filter writes its ``payload_in_metadata`` under.
JWT_AUTHN = "envoy.filters.http.jwt_authn"


def principal_from_metadata(
    metadata: Any, key: str, keys: KeyRing | None = None
) -> Principal | None:
    """The principal in ``metadata.filter_metadata[jwt_authn][key]``, or ``None``."""
    del keys  # no token reaches the service: nothing to fingerprint
    namespaces = metadata.filter_metadata
    if JWT_AUTHN not in namespaces:
        return None
    payload = json_format.MessageToDict(namespaces[JWT_AUTHN]).get(key)
    if not isinstance(payload, dict):
        return None
    return principal_from_claims(payload)


def principal_from_claims(claims: dict[str, Any]) -> Principal | None:
    """A principal from verified claims (``iss`` and ``sub`` are required)."""
    issuer, subject = claims.get("iss"), claims.get("sub")
    if not isinstance(issuer, str) or not isinstance(subject, str) or not subject:
        return None
    audience = claims.get("aud")
    audiences = (
        (audience,)
        if isinstance(audience, str)
        else tuple(a for a in audience or () if isinstance(a, str))
    )
    scope = claims.get("scope", claims.get("scp"))
    scopes = (
        tuple(scope.split())
        if isinstance(scope, str)
        else tuple(s for s in scope or () if isinstance(s, str))
    )
    expires = claims.get("exp")
    client = claims.get("client_id", claims.get("azp"))
    return Principal(
        issuer=issuer,
        subject=subject,
        audience=audiences,
        scopes=scopes,
        expires_at=float(expires) if isinstance(expires, int | float) else None,
        client_id=client if isinstance(client, str) else None,
    )
