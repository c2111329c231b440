"""How the operator configures bearer-token checks (``identity.tokens`` in the policy).

Why: the verifier (:mod:`elicitguard.identity.tokens`) and the JWKS source
(:mod:`elicitguard.identity.jwks`) both read these settings; they live below both. The
algorithm allowlist may only name asymmetric algorithms (an HS256 token "signed" with an
RSA public key is the classic confusion attack).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from elicitguard.errors import KeyConfigError

__all__ = ["ASYMMETRIC_ALGORITHMS", "DEFAULT_ALGORITHMS", "Introspector", "TokenConfig"]

ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")

#: ``token -> claims`` for opaque tokens (RFC 7662 introspection response), or ``None``
#: when the authorization server does not know the token.
Introspector = Callable[[str], Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class TokenConfig:
    """What a token must be to be accepted.

    ``audience`` is this server's canonical URI (RFC 8707), e.g. ``https://mcp.example.com/mcp``.
    """

    audience: str
    issuers: tuple[str, ...] = ()
    jwks_file: str | None = None
    jwks_url: str | None = None
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    leeway_s: float = 30.0
    max_token_bytes: int = 8192
    jwks_cache_s: float = 300.0
    jwks_min_refresh_s: float = 30.0
    required_scopes: tuple[str, ...] = ()
    introspect: Introspector | None = field(default=None, repr=False, compare=False)
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.audience:
            raise KeyConfigError("identity.audience must be this server's canonical URI")
        bad = [a for a in self.algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if bad or not self.algorithms:
            msg = (
                f"identity.algorithms may only name asymmetric algorithms "
                f"({', '.join(sorted(ASYMMETRIC_ALGORITHMS))}); `none` and HMAC are refused"
            )
            raise KeyConfigError(msg)
        if self.jwks_url is not None and urlsplit(self.jwks_url).scheme != "https":
            raise KeyConfigError("identity.jwks_url must be an https:// URL")
        if self.jwks_file is None and self.jwks_url is None and self.introspect is None:
            msg = "identity needs `jwks` (a file), `jwks_url` (https) or an introspection hook"
            raise KeyConfigError(msg)
        if (self.jwks_file is not None or self.jwks_url is not None) and not self.issuers:
            raise KeyConfigError("identity.issuers must name the accepted token issuer(s)")

    @classmethod
    def from_policy(
        cls, identity: Mapping[str, Any], *, introspect: Introspector | None = None
    ) -> TokenConfig:
        """Build from a policy's compiled ``identity`` section."""
        audience = identity.get("audience")
        if not isinstance(audience, str) or not audience:
            msg = "identity.audience is required: this server's canonical URI (RFC 8707)"
            raise KeyConfigError(msg)
        kwargs: dict[str, Any] = {"audience": audience, "introspect": introspect}
        for key, name in (
            ("jwks", "jwks_file"),
            ("jwks_url", "jwks_url"),
            ("leeway_s", "leeway_s"),
            ("max_token_bytes", "max_token_bytes"),
            ("jwks_cache_s", "jwks_cache_s"),
        ):
            if identity.get(key) is not None:
                kwargs[name] = identity[key]
        for key in ("issuers", "algorithms", "required_scopes"):
            if identity.get(key):
                kwargs[key] = tuple(identity[key])
        return cls(**kwargs)
