"""Bearer token verification: who is calling, established from a checked access token.

MCP authorization (``basic/authorization``) makes the server an OAuth 2.1 resource server:
it must check that a token was issued for it as audience (RFC 8707; AU-02, AU-03) and answer
401 to a missing, invalid or expired one. :class:`TokenVerifier` does that for JWT access
tokens signed by the operator's authorization server, and hands opaque tokens to an
introspection hook (RFC 7662) when one is configured. Either way the result is a
:class:`~elicitguard.identity.principal.Principal` or a :class:`~elicitguard.errors.TokenError`.

What it refuses, and why:

* ``alg: none`` and every HMAC algorithm: the keys come from a JWKS of public keys, and an
  HS256 token "signed" with the RSA public key is the classic confusion attack. The
  allowlist may only name asymmetric algorithms; symmetric (``oct``) JWKS entries are ignored.
* a header algorithm outside the allowlist, or one that disagrees with the key's ``alg``;
* ``kid`` that is not a short string or names no key (the JWKS is refreshed once, at most
  every ``jwks_min_refresh_s``, to pick up a rotation); no ``kid`` when the JWKS holds more
  than one key for the algorithm;
* ``jku``, ``x5u``, ``x5c`` and ``jwk`` headers are never read: keys come only from the
  operator's JWKS file or URL, never from the token;
* tokens over ``max_token_bytes`` (before anything is decoded);
* a wrong ``iss``; an ``aud`` that does not contain the configured canonical URI of this
  server (configured by the operator, never taken from ``--upstream`` or a request); an
  expired token or one not yet valid (``exp``, ``nbf``, with ``leeway_s``); a missing ``sub``
  or ``exp``; missing required scopes (``insufficient_scope``, 403).

The JWKS comes from a file (re-read when it changes) or an HTTPS URL the operator configures
(cached for ``jwks_cache_s``; :mod:`elicitguard.identity.jwks`). Error messages never contain
the token or any claim value.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jwt

from elicitguard.base.keys import KeyRing
from elicitguard.errors import TokenError
from elicitguard.identity.jwks import ALG_FAMILY, MAX_JWKS_BYTES, JwksSource
from elicitguard.identity.principal import Principal
from elicitguard.identity.token_config import (
    ASYMMETRIC_ALGORITHMS,
    DEFAULT_ALGORITHMS,
    Introspector,
    TokenConfig,
)

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "DEFAULT_ALGORITHMS",
    "MAX_JWKS_BYTES",
    "Introspector",
    "JwksSource",
    "TokenConfig",
    "TokenVerifier",
    "bearer_token",
    "token_fingerprint",
    "unverified_claims",
]

MAX_KID_CHARS = 128
#: RFC 6750 section 2.1 ``b64token``: what a bearer token may consist of.
_B64TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer`` header (names compared case-insensitively)."""
    value = headers.get("authorization")
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
    if not isinstance(value, str):
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    return token or None


def token_fingerprint(keys: KeyRing, token: str) -> str:
    """A keyed fingerprint of a token: the same token gives the same value in this keyring."""
    return keys.id_hash("bearer\x00" + token)


def _b64json(segment: str) -> Any:
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        return json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        return None


def unverified_claims(token: str, *, max_bytes: int = 16384) -> dict[str, Any] | None:
    """The payload of a JWT-shaped token, **unverified**: for detection, never for trust.

    Rules use it to see that a token in traffic was issued for someone else (EG602) or is
    being forwarded (EG601). ``None`` for anything that is not a three-part JWS with a JSON
    header and payload.
    """
    if len(token) > max_bytes or token.count(".") != 2:
        return None
    header_s, payload_s, _ = token.split(".")
    header = _b64json(header_s)
    if not isinstance(header, dict) or "alg" not in header:
        return None
    payload = _b64json(payload_s)
    return payload if isinstance(payload, dict) else None


class TokenVerifier:
    """Verifies bearer tokens under one :class:`TokenConfig`.

    ``keys`` is the keyring whose fingerprint key fingerprints tokens; use the engine's, so
    that the egress guard recognises the client's token (EG601).
    """

    def __init__(
        self,
        config: TokenConfig,
        keys: KeyRing | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.keys = keys if keys is not None else KeyRing.random()
        self.clock = clock
        self.jwks = (
            JwksSource(config) if (config.jwks_file or config.jwks_url) is not None else None
        )

    def verify(self, token: str | None) -> Principal:
        """The principal of ``token``; raises :class:`TokenError` with a stable ``reason``."""
        if not token:
            raise TokenError("missing", "no bearer token was sent", error=None)
        if len(token) > self.config.max_token_bytes:
            raise TokenError("oversized", "the bearer token is larger than allowed")
        if not _B64TOKEN.fullmatch(token):
            raise TokenError("malformed", "the bearer token is not a valid token")
        if token.count(".") == 2:
            return self._verify_jwt(token)
        if self.config.introspect is not None:
            return self._introspect(token)
        raise TokenError("malformed", "the bearer token is not a JWT and no introspection is set")

    # --- JWT ------------------------------------------------------------------------------

    def _verify_jwt(self, token: str) -> Principal:
        if self.jwks is None:
            if self.config.introspect is not None:
                return self._introspect(token)
            raise TokenError("malformed", "JWT access tokens are not configured")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenError("malformed", "the token header cannot be read") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.config.algorithms:
            raise TokenError("disallowed_alg", "the token's signing algorithm is not accepted")
        kid = header.get("kid")
        if kid is not None and (not isinstance(kid, str) or not kid or len(kid) > MAX_KID_CHARS):
            raise TokenError("bad_kid", "the token's key id is not valid")
        key = self._key_for(alg, kid)
        try:
            claims = jwt.decode(
                token,
                key=key,
                algorithms=[alg],
                audience=self.config.audience,
                issuer=list(self.config.issuers),
                leeway=self.config.leeway_s,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenError("expired", "the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise TokenError("not_yet_valid", "the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise TokenError(
                "wrong_audience", "the token was not issued for this server", code="EG602"
            ) from None
        except jwt.InvalidIssuerError:
            raise TokenError(
                "wrong_issuer",
                "the token comes from an issuer this server does not accept",
                code="EG602",
            ) from None
        except jwt.MissingRequiredClaimError:
            raise TokenError("missing_claim", "the token lacks a required claim") from None
        except jwt.InvalidSignatureError:
            raise TokenError("bad_signature", "the token signature does not verify") from None
        except (jwt.PyJWTError, ValueError, TypeError):
            raise TokenError("invalid", "the token is not valid") from None
        return self._principal(claims, token)

    def _key_for(self, alg: str, kid: str | None) -> Any:
        jwks = self.jwks
        if jwks is None:
            raise TokenError("malformed", "JWT access tokens are not configured")
        for refresh in (False, True):
            candidates = self._candidates(jwks, jwks.keys(refresh=refresh), alg, kid)
            if len(candidates) == 1:
                return candidates[0]
            if len(candidates) > 1:
                raise TokenError("bad_kid", "the token names no key id and several keys match")
            if kid is None:
                break
        raise TokenError("unknown_key", "the token was signed with a key this server does not know")

    @staticmethod
    def _candidates(
        jwks: JwksSource, keys: Sequence[tuple[dict[str, Any], Any]], alg: str, kid: str | None
    ) -> list[Any]:
        family = ALG_FAMILY.get(alg[:2])
        found: list[Any] = []
        for index, (entry, _) in enumerate(keys):
            if kid is not None and entry.get("kid") != kid:
                continue
            if entry.get("kty") != family:
                continue
            if entry.get("alg") not in (None, alg):
                continue
            key = jwks.typed_key(index, entry, alg)
            if key is not None:
                found.append(key)
        return found

    # --- opaque tokens --------------------------------------------------------------------

    def _introspect(self, token: str) -> Principal:
        hook = self.config.introspect
        if hook is None:
            raise TokenError("malformed", "opaque tokens are not configured")
        try:
            claims = hook(token)
        except Exception:
            raise TokenError(
                "introspection_failed", "the token could not be introspected"
            ) from None
        if not claims or claims.get("active") is not True:
            raise TokenError("inactive", "the token is not active")
        claims = dict(claims)
        issuer = claims.get("iss")
        if self.config.issuers and issuer not in self.config.issuers:
            raise TokenError(
                "wrong_issuer",
                "the token comes from an issuer this server does not accept",
                code="EG602",
            )
        if not _audience_ok(claims.get("aud"), self.config.audience):
            raise TokenError(
                "wrong_audience", "the token was not issued for this server", code="EG602"
            )
        now = self.clock()
        exp = claims.get("exp")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool):
            raise TokenError("missing_claim", "the token lacks a required claim")
        if exp + self.config.leeway_s < now:
            raise TokenError("expired", "the token has expired")
        nbf = claims.get("nbf")
        if (
            isinstance(nbf, (int, float))
            and not isinstance(nbf, bool)
            and nbf - self.config.leeway_s > now
        ):
            raise TokenError("not_yet_valid", "the token is not valid yet")
        if not isinstance(issuer, str):
            claims["iss"] = self.config.issuers[0] if self.config.issuers else ""
        return self._principal(claims, token)

    # --- the principal --------------------------------------------------------------------

    def _principal(self, claims: Mapping[str, Any], token: str) -> Principal:
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise TokenError("missing_claim", "the token lacks a required claim")
        issuer = claims.get("iss")
        audience = claims.get("aud")
        audiences = (
            (audience,)
            if isinstance(audience, str)
            else tuple(a for a in audience or () if isinstance(a, str))
        )
        scopes = _scopes(claims)
        missing = [s for s in self.config.required_scopes if s not in scopes]
        if missing:
            raise TokenError(
                "insufficient_scope", "the token lacks a required scope", error="insufficient_scope"
            )
        exp = claims.get("exp")
        client = claims.get("client_id", claims.get("azp"))
        return Principal(
            issuer=issuer if isinstance(issuer, str) else "",
            subject=subject,
            audience=audiences,
            scopes=scopes,
            token_fingerprint=token_fingerprint(self.keys, token),
            expires_at=float(exp)
            if isinstance(exp, (int, float)) and not isinstance(exp, bool)
            else None,
            client_id=client if isinstance(client, str) else None,
        )


def _audience_ok(audience: Any, wanted: str) -> bool:
    if isinstance(audience, str):
        return audience == wanted
    if isinstance(audience, list):
        return wanted in audience
    return False


def _scopes(claims: Mapping[str, Any]) -> tuple[str, ...]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return tuple(s for s in scope.split() if s)
    scp = claims.get("scp")
    if isinstance(scp, list):
        return tuple(s for s in scp if isinstance(s, str))
    if isinstance(scp, str):
        return tuple(s for s in scp.split() if s)
    return ()
