"""OutboundCall items: what the egress guard hands the engine about one outbound HTTP call.

A server's own calls to third-party APIs never cross the MCP transport, so proxies cannot
see them; the guard sees them in process and describes each as an ``outbound_call`` item.
The description holds no token: the tokens are compared here, against the client's token
(by keyed fingerprint) and against this server's audience (by the unverified ``aud`` claim),
and only the verdicts go into the item's facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from elicitguard.base.keys import KeyRing
from elicitguard.checks.identity import jwt_parts, query_tokens
from elicitguard.identity.principal import Principal
from elicitguard.identity.tokens import token_fingerprint
from elicitguard.protocol.items import Item, ItemKind

__all__ = ["outbound_item", "outbound_tokens"]

#: Headers other than ``Authorization`` that carry a forwarded bearer token.
_TOKEN_HEADER_HINTS = ("token", "authorization", "x-forwarded-access", "x-amzn-oidc-accesstoken")


def _credential(value: str) -> str | None:
    scheme, _, rest = value.strip().partition(" ")
    if rest and scheme.lower() in ("bearer", "token", "dpop"):
        return rest.strip() or None
    if rest:
        return None  # Basic and other schemes carry no bearer token
    return value.strip() or None


def outbound_tokens(url: str, headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(pointer, token)`` of every token an outbound call carries, headers then query."""
    found: list[tuple[str, str]] = []
    for name, value in headers.items():
        lower = name.lower()
        if lower == "authorization" or (
            lower != "cookie" and any(hint in lower for hint in _TOKEN_HEADER_HINTS)
        ):
            token = _credential(value)
            if token is not None and len(token) >= 8:
                found.append((f"/headers/{lower}", token))
    for name, value in query_tokens(url):
        found.append((f"/url/query/{name}", value))
    return found


def _audiences(token: str) -> tuple[str, ...]:
    parts = jwt_parts(token)
    if parts is None:
        return ()
    aud = parts[1].get("aud")
    if isinstance(aud, str):
        return (aud,)
    if isinstance(aud, list):
        return tuple(a for a in aud if isinstance(a, str))
    return ()


def outbound_item(
    url: str,
    headers: Mapping[str, str],
    *,
    keys: KeyRing,
    method: str = "GET",
    principal: Principal | None = None,
    audience: str | None = None,
) -> Item:
    """The ``outbound_call`` item of one call.

    ``facts["passthrough"]`` lists ``(pointer, reason)`` for each token that must not leave:
    ``client_token`` (the token the client sent this server, recognised by fingerprint) or
    ``audience_is_this_server`` (a JWT issued for this server, whoever's it is).
    ``facts["query_tokens"]`` lists the pointers of tokens in the query string.
    """
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        path = parts.path
    except ValueError:
        host, path = "", ""
    client_fp = principal.token_fingerprint if principal is not None else ""
    passthrough: list[tuple[str, str]] = []
    in_query: list[str] = []
    for pointer, token in outbound_tokens(url, headers):
        if pointer.startswith("/url/query/"):
            in_query.append(pointer)
        if client_fp and token_fingerprint(keys, token) == client_fp:
            passthrough.append((pointer, "client_token"))
        elif audience and audience in _audiences(token):
            passthrough.append((pointer, "audience_is_this_server"))
    data: dict[str, Any] = {"method": method.upper(), "host": host, "path": path}
    return Item(
        ItemKind.OUTBOUND_CALL,
        "",
        None,
        data,
        method=None,
        facts={"passthrough": passthrough, "query_tokens": in_query, "host": host},
    )
