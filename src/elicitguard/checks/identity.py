"""Identity and token facts in traffic: asserted identities, tokens in URLs, token shapes.

Pure functions, no engine imports. They answer questions the EG5xx and EG6xx rules ask:

* which ``_meta`` keys and HTTP headers assert who the user is (a client's claim, never
  proof: ID-01, CP-04), by normalised name;
* which query parameters carry an access token (AU-07), by name and by the value's shape;
* whether a string is shaped like a JWT, and what its unverified header and claims say.

Values are returned to callers for comparison and fingerprinting only; they never go into
messages.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

from elicitguard.checks.urls import decoded_layers

__all__ = [
    "IDENTITY_HEADERS",
    "IDENTITY_NAMES",
    "META_STANDARD_PREFIX",
    "identity_headers",
    "identity_meta_keys",
    "is_identity_name",
    "jwt_parts",
    "looks_like_jwt",
    "normalise_identity_name",
    "query_tokens",
]

META_STANDARD_PREFIX: Final = "io.modelcontextprotocol/"
#: ``_meta`` keys the protocol itself defines outside the reserved prefix.
META_STANDARD_KEYS: Final = frozenset({"progressToken"})

#: Normalised names (lower case, no separators) that say who the user is.
IDENTITY_NAMES: Final = frozenset(
    {
        "user",
        "userid",
        "username",
        "useremail",
        "userprincipal",
        "uid",
        "sub",
        "subject",
        "principal",
        "principalid",
        "identity",
        "email",
        "login",
        "account",
        "accountid",
        "actor",
        "actorid",
        "onbehalfof",
        "impersonate",
        "impersonateuser",
        "runas",
        "tenant",
        "tenantid",
        "org",
        "orgid",
        "organization",
        "organizationid",
        "customerid",
        "employeeid",
        "owner",
        "ownerid",
        "role",
        "roles",
        "groups",
        "isadmin",
        "admin",
        "authenticateduser",
        "remoteuser",
    }
)

#: Headers that assert an identity; ``x-user-*`` is matched by prefix as well.
IDENTITY_HEADERS: Final = frozenset(
    {
        "x-user",
        "x-remote-user",
        "x-forwarded-user",
        "x-forwarded-email",
        "x-forwarded-preferred-username",
        "x-auth-user",
        "x-auth-request-user",
        "x-auth-request-email",
        "x-authenticated-user",
        "x-authenticated-userid",
        "remote-user",
        "x-ms-client-principal-name",
        "x-ms-client-principal-id",
        "x-goog-authenticated-user-email",
        "x-goog-authenticated-user-id",
        "x-amzn-oidc-identity",
        "x-email",
        "x-principal",
        "x-tenant-id",
        "x-on-behalf-of",
        "x-impersonate-user",
    }
)

_SEPARATORS = re.compile(r"[^a-z0-9]")


def normalise_identity_name(name: str) -> str:
    """``com.acme/User-ID`` -> ``userid``: the last path segment, lower case, no separators."""
    last = name.rsplit("/", 1)[-1]
    return _SEPARATORS.sub("", last.lower())


def is_identity_name(name: str) -> bool:
    """True when a key called ``name`` asserts who the user is."""
    return normalise_identity_name(name) in IDENTITY_NAMES


def identity_meta_keys(meta: Any) -> Iterator[tuple[str, Any]]:
    """``(key, value)`` of the identity-named keys of a ``_meta`` object.

    Keys under the protocol's reserved prefix (``io.modelcontextprotocol/``) are the
    protocol's own (``clientInfo`` included: self-reported, but a different rule's business).
    """
    if not isinstance(meta, Mapping):
        return
    for key, value in meta.items():
        if not isinstance(key, str) or key.startswith(META_STANDARD_PREFIX):
            continue
        if key in META_STANDARD_KEYS:
            continue
        if is_identity_name(key):
            yield key, value


def identity_headers(
    headers: Mapping[str, str], trusted: frozenset[str] = frozenset()
) -> Iterator[tuple[str, str]]:
    """``(name, value)`` of the headers that assert an identity, except ``trusted`` ones."""
    for name, value in headers.items():
        lower = name.lower()
        if lower in trusted or lower.startswith(":"):
            continue
        if lower in IDENTITY_HEADERS or lower.startswith("x-user-"):
            yield lower, value


# --- tokens -----------------------------------------------------------------------------

_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")
#: Query parameters whose name alone says "access token" (RFC 6750 section 2.3 and kin).
TOKEN_PARAM_NAMES: Final = frozenset(
    {
        "access_token",
        "accesstoken",
        "id_token",
        "refresh_token",
        "bearer",
        "bearer_token",
        "auth_token",
        "authtoken",
        "authorization",
        "jwt",
        "token",
        "api_token",
        "session_token",
    }
)
#: Names where a short or plain value is still a token (the rest need a token-like value).
_ALWAYS_TOKEN: Final = frozenset({"access_token", "accesstoken", "bearer", "bearer_token"})
_TOKEN_VALUE = re.compile(r"^[A-Za-z0-9._~+/=-]{16,}$")


def _b64json(segment: str) -> Any:
    if not segment or not _B64URL.match(segment):
        return None
    try:
        return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        return None


def jwt_parts(value: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The unverified header and claims of a JWS-shaped JWT, or ``None``."""
    if len(value) > 16384 or value.count(".") != 2:
        return None
    head, body, _ = value.split(".")
    header = _b64json(head)
    if not isinstance(header, dict) or not isinstance(header.get("alg"), str):
        return None
    claims = _b64json(body)
    if not isinstance(claims, dict):
        return None
    return header, claims


def looks_like_jwt(value: str) -> bool:
    """True for a string shaped like a JWT (``eyJ...`` three parts with a JSON header)."""
    return value.startswith("eyJ") and jwt_parts(value) is not None


def query_tokens(url: str) -> list[tuple[str, str]]:
    """``(name, value)`` of the query parameters of ``url`` (or a bare ``path?query``) that
    carry an access token: a token-named parameter with a token-like value, or any JWT."""
    try:
        query = urlsplit(url).query if "://" in url or url.startswith("/") else url
        pairs = parse_qsl(query, keep_blank_values=False)
    except ValueError:
        return []
    found: list[tuple[str, str]] = []
    for name, value in pairs:
        lower = name.lower()
        # A value percent-encoded again or base64-wrapped is judged as it finally reads.
        readings = (value, *decoded_layers(value)) if "%" in value or len(value) >= 12 else (value,)
        if any(
            (lower in _ALWAYS_TOKEN and text.strip())
            or (lower in TOKEN_PARAM_NAMES and _TOKEN_VALUE.match(text))
            or looks_like_jwt(text)
            for text in readings
        ):
            found.append((name, value))
    return found
