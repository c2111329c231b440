"""Checks for identity and state (EG5xx): unverified and asserted identity, unprotected and
misused ``requestState``, URL flows completed by another user.

Thin adapters: detection lives in :mod:`elicitguard.checks.identity` and
:mod:`elicitguard.checks.request_state`; the facts about rounds come from the extractor's
chain state, and the binding outcome from :class:`~elicitguard.identity.binding.UrlBinder`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from elicitguard.base.decision import Action, Hit, Severity
from elicitguard.base.pointer import escape_pointer
from elicitguard.checks.identity import (
    identity_headers,
    identity_meta_keys,
    normalise_identity_name,
)
from elicitguard.checks.request_state import analyse_request_state
from elicitguard.engine.context import CheckContext, CheckParams, check
from elicitguard.identity.principal import principal_key
from elicitguard.protocol.envelope import Side, Transport
from elicitguard.protocol.items import Item

__all__ = ["identity_configured"]

Params = Mapping[str, Any]
#: Names that claim privileges rather than a name: never comparable with a subject.
_AUTHORITY = frozenset({"role", "roles", "groups", "isadmin", "admin"})
_MAX_NAME = 64


@check("identity.unverified_elicitation")
def unverified_elicitation(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG501: elicitation over HTTP with no verified principal.

    Servers and proxies know whether they verified a token (the envelope's principal); a
    capture only shows headers, so it reports only when the client's requests carried no
    ``Authorization`` header at all. stdio is local and out of scope.
    """
    if ctx.cache.get("EG501"):
        return
    envelope = ctx.envelope
    if ctx.side is Side.CAPTURE:
        if ctx.session.authorization is not False:
            return
        how = "the client's HTTP requests carried no Authorization header"
    else:
        if envelope.transport is not Transport.HTTP or principal_key(envelope.principal):
            return
        how = "no bearer token was verified for this request"
    ctx.cache["EG501"] = True
    repeats = ctx.action is not None and ctx.action.rank >= Action.BLOCK.rank
    if not repeats and not identity_configured(ctx.services.get("identity")):
        # Nothing could ever be verified here: a fact about the deployment, said once per
        # session (and at startup), not a finding on every elicitation. A block repeats.
        if "EG501" in ctx.session.notices:
            return
        ctx.session.notices.add("EG501")
    yield Hit(args={"how": how})


def identity_configured(identity: Any) -> bool:
    """True when the policy's ``identity`` section can verify anyone (keys or issuers)."""
    if not isinstance(identity, Mapping):
        return False
    keys = ("require_auth", "jwks", "jwks_url", "issuers", "audience")
    return any(bool(identity.get(key)) for key in keys)


def _judge(value: Any, name: str, subject: str | None) -> str | None:
    """How an asserted identity relates to the verified subject (``None``: harmless)."""
    if normalise_identity_name(name) in _AUTHORITY:
        return "claims privileges that only" if subject is None else "claims privileges beyond"
    if subject is None:
        return "stands in for"
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) == subject:
        return None
    if isinstance(value, (dict, list)):
        return None
    return "disagrees with"


class AssertedIdentityParams(CheckParams):
    """EG502: where your own deployment legitimately carries an identity."""

    #: Tool argument names that carry an identity in your tools (``on_behalf_of``).
    arguments: list[str] | None = None
    #: Headers your own authenticating gateway sets and strips from clients.
    trusted_headers: list[str] | None = None


@check("identity.asserted_identity", params=AssertedIdentityParams)
def asserted_identity(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG502: a client says who the user is (``_meta``, headers, named arguments)."""
    principal = ctx.envelope.principal
    subject = principal.subject if principal_key(principal) is not None else None
    message = item.data if isinstance(item.data, dict) else {}
    msg_params = message.get("params")
    msg_params = msg_params if isinstance(msg_params, dict) else {}
    found: list[tuple[str, str, str, Any]] = []
    for key, value in identity_meta_keys(msg_params.get("_meta")):
        found.append(("/params/_meta/" + escape_pointer(key), "`_meta` key", key, value))
    trusted = frozenset(str(h).lower() for h in params.get("trusted_headers") or ())
    for name, value in identity_headers(ctx.envelope.headers, trusted):
        found.append((f"/http/headers/{name}", "header", name, value))
    names = [str(n) for n in params.get("arguments") or ()]
    arguments = msg_params.get("arguments")
    if names and item.method == "tools/call" and isinstance(arguments, dict):
        for name in names:
            if name in arguments:
                pointer = "/params/arguments/" + escape_pointer(name)
                found.append((pointer, "tool argument", name, arguments[name]))
    for pointer, where, name, value in found:
        how = _judge(value, name, subject)
        if how is None:
            continue
        yield Hit(
            pointer=pointer,
            args={"where": where, "name": name[:_MAX_NAME], "how": how},
            value=str(value) if isinstance(value, (str, int)) else None,
        )


_PROTECTION_TEXT = {
    "none": "not integrity-protected",
    "signed": "signed but readable by the client",
}


@check("identity.request_state_integrity")
def request_state_integrity(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG503: ``requestState`` without integrity protection on the wire.

    Integrations that see the state before the SDK seals it (``MCPServer`` middleware) mark
    their envelopes with ``location={"request_state": "plaintext"}``; they are skipped.
    """
    if ctx.envelope.location.get("request_state") == "plaintext":
        return
    holder = item.data
    value = holder.get("requestState") if isinstance(holder, dict) else None
    if not isinstance(value, str):
        return
    analysis = analyse_request_state(value)
    if analysis.protection not in _PROTECTION_TEXT:
        return
    if analysis.protection == "none":
        severity = Severity.HIGH if analysis.sensitive else Severity.MEDIUM
    else:
        severity = Severity.MEDIUM if "credential" in analysis.sensitive else Severity.LOW
    carrying = ""
    if analysis.sensitive:
        carrying = " and carries " + ", ".join(s.replace("-", " ") for s in analysis.sensitive)
        if analysis.evidence:
            carrying += f" (`{analysis.evidence[:_MAX_NAME]}`)"
    yield Hit(
        pointer=item.pointer + "/requestState",
        args={
            "protection": _PROTECTION_TEXT[analysis.protection],
            "form": analysis.form,
            "carrying": carrying,
        },
        severity=severity,
    )


@check("identity.request_state_misuse")
def request_state_misuse(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG504: ``requestState`` replayed, presented by another principal, on another request,
    on another session than the one it was issued in, or never issued at all."""
    facts = item.facts
    if facts.get("state_echo") == "unissued":
        yield from _unissued_state(item, ctx)
        return
    if facts.get("state_echo") != "exact":
        return
    chain = facts.get("chain")
    pointer = item.pointer + "/requestState"
    if (facts.get("prior_uses") or 0) > 0:
        yield Hit(
            pointer=pointer, args={"misuse": "was presented again after a retry already used it"}
        )
    origin = getattr(chain, "origin_key", None)
    if origin is not None and facts.get("request_key") not in (None, origin):
        yield Hit(
            pointer=pointer,
            args={"misuse": "was issued for another request (method, name or arguments differ)"},
        )
    issued_to = principal_key(getattr(chain, "principal", None))
    if issued_to is not None and principal_key(ctx.envelope.principal) != issued_to:
        yield Hit(pointer=pointer, args={"misuse": "was issued to another principal"})


def _unissued_state(item: Item, ctx: CheckContext) -> Iterator[Hit]:
    """A ``requestState`` no round of this session issued: provenance decides.

    Issued in another session of this engine: misused, whatever the history. Otherwise it
    is a forgery or a replay from elsewhere when the engine sees every session from its
    start (a proxy or SDK relay), and probably one when the capture holds the session's
    start (``initialize`` or ``server/discover``): reported at medium severity there, since
    a capture may have lost a line. A capture that begins later says nothing.
    """
    pointer = item.pointer + "/requestState"
    key = item.facts.get("chain_key")
    issued = ctx.services.get("issued_states")
    where = issued.get(key) if issued is not None and isinstance(key, str) else None
    if where is not None and where != (ctx.envelope.session or ""):
        yield Hit(
            pointer=pointer,
            args={"misuse": "was issued in another session or connection than this one"},
        )
    elif ctx.services.get("whole_sessions"):
        yield Hit(
            pointer=pointer,
            args={
                "misuse": "was never issued by the server on this connection (forged or replayed)"
            },
        )
    elif item.facts.get("history_from_start"):
        yield Hit(
            pointer=pointer,
            args={
                "misuse": "was never issued in this capture, which holds the session's start "
                "(forged, replayed, or a line is missing)"
            },
            severity=Severity.MEDIUM,
        )


_BINDING = {
    "other_user": (
        "was completed by a different user than the one it was issued to",
        Severity.HIGH,
    ),
    "reused": ("was used a second time", Severity.HIGH),
    "unknown": (
        "names a handle that was never issued (an edited or made-up link)",
        Severity.MEDIUM,
    ),
    "unauthenticated": ("was opened by a user who is not signed in", Severity.LOW),
}


@check("identity.url_binding")
def url_binding(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG505: a URL-mode flow completed by another user (or with a reused or forged handle)."""
    outcome = item.facts.get("outcome")
    if outcome not in _BINDING:
        return
    text, severity = _BINDING[outcome]
    yield Hit(args={"outcome": text}, severity=severity)
