"""Checks for token and credential flow (EG6xx): passthrough, foreign audiences,
third-party credentials sent to the client, tokens in query strings.

Thin adapters: the outbound call's verdicts come from
:func:`~elicitguard.identity.outbound.outbound_item` (which compares tokens by keyed
fingerprint), the credential search from the
:class:`~elicitguard.identity.vault.CredentialVault` the integration lends the engine.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from elicitguard.base.decision import Hit, Severity
from elicitguard.base.pointer import escape_pointer
from elicitguard.checks.identity import jwt_parts, query_tokens
from elicitguard.checks.secrets import scan_text
from elicitguard.engine.context import CheckContext, CheckParams, check
from elicitguard.identity.principal import principal_key
from elicitguard.identity.tokens import bearer_token
from elicitguard.protocol.items import Item, ItemKind

__all__: list[str] = []

Params = Mapping[str, Any]
_REASONS = {
    "client_token": "the token the MCP client sent this server",
    "audience_is_this_server": "a token issued for this server",
}
_MAX_NAME = 64


@check("token.passthrough")
def passthrough(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG601: an outbound call carries the client's token or one issued for this server."""
    for pointer, reason in item.facts.get("passthrough") or ():
        yield Hit(pointer=pointer, args={"what": _REASONS.get(reason, reason)})


def _audiences(claims: Mapping[str, Any]) -> tuple[str, ...] | None:
    aud = claims.get("aud")
    if isinstance(aud, str):
        return (aud,)
    if isinstance(aud, list):
        return tuple(a for a in aud if isinstance(a, str))
    return None


class ForeignAudienceParams(CheckParams):
    """EG602: the audience tokens must be for (default: the policy's ``identity.audience``)."""

    audience: str | None = None


@check("token.foreign_audience", params=ForeignAudienceParams)
def foreign_audience(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG602: the inbound bearer token was not issued for this server (AU-02, AU-03).

    A verified principal means the verifier already checked the audience. Otherwise the
    token's unverified claims are compared with the configured audience (and issuers); an
    opaque token cannot be judged from traffic.
    """
    if principal_key(ctx.envelope.principal) is not None:
        return
    identity = ctx.services.get("identity") or {}
    audience = params.get("audience") or identity.get("audience")
    if not audience:
        return
    token = bearer_token(ctx.envelope.headers)
    parts = jwt_parts(token) if token else None
    if parts is None:
        return
    claims = parts[1]
    pointer = "/http/headers/authorization"
    audiences = _audiences(claims)
    if audiences is None:
        yield Hit(pointer=pointer, args={"problem": "carries no audience (`aud`)"}, value=token)
        return
    if audience not in audiences:
        yield Hit(
            pointer=pointer,
            args={"problem": "was issued for another audience"},
            value=token,
        )
        return
    issuers = identity.get("issuers") or ()
    if issuers and claims.get("iss") not in issuers:
        yield Hit(
            pointer=pointer,
            args={"problem": "comes from an issuer this server does not accept"},
            value=token,
        )


def _pointer_of(value: Any, needle: str, path: str = "", depth: int = 0) -> str | None:
    """The JSON pointer of the first string in ``value`` that contains ``needle``."""
    if depth > 64:
        return None
    if isinstance(value, str):
        return path if needle in value else None
    if isinstance(value, dict):
        for key, child in value.items():
            found = _pointer_of(child, needle, f"{path}/{escape_pointer(str(key))}", depth + 1)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found = _pointer_of(child, needle, f"{path}/{index}", depth + 1)
            if found is not None:
                return found
    return None


def _text(message: Any) -> str:
    try:
        return orjson.dumps(message).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return repr(message)


class CredentialToClientParams(CheckParams):
    """EG603: also search every message for the secret catalogue's formats."""

    catalogue: bool = False


@check("token.credential_to_client", params=CredentialToClientParams)
def credential_to_client(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG603: a result, error or notification carries a third-party credential.

    The vault's tokens are found with one multi-string search over the serialised message;
    with ``catalogue: true`` the secrets catalogue is searched as well.
    """
    message = item.data
    text = _text(message)
    seen: set[str] = set()
    vault = ctx.services.get("vault")
    if vault is not None and len(vault):
        for match in vault.search(text):
            token = text[match.start : match.end]
            if token in seen:
                continue
            seen.add(token)
            pointer = _pointer_of(message, token) or item.pointer
            yield Hit(
                pointer=pointer,
                args={"what": f"a registered {match.label[:_MAX_NAME]}"},
                value=token,
            )
    if params.get("catalogue"):
        for secret in scan_text(text):
            if secret.confidence == "low" or secret.value in seen:
                continue
            seen.add(secret.value)
            yield Hit(
                pointer=_pointer_of(message, secret.value) or item.pointer,
                args={"what": f"a credential ({secret.type})"},
                value=secret.value,
                severity=Severity.MEDIUM,
            )


@check("token.query_string")
def query_string(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG604: an access token in the query string of an MCP HTTP request or an egress call."""
    if item.kind is ItemKind.OUTBOUND_CALL:
        for pointer in item.facts.get("query_tokens") or ():
            name = pointer.rsplit("/", 1)[-1]
            yield Hit(pointer=pointer, args={"where": "an outbound call", "name": name[:_MAX_NAME]})
        return
    path = ctx.envelope.headers.get(":path")
    if not path or "?" not in path:
        return
    for name, value in query_tokens(path):
        yield Hit(
            pointer=f"/http/query/{escape_pointer(name)}",
            args={"where": "the MCP HTTP request", "name": name[:_MAX_NAME]},
            value=value,
        )
