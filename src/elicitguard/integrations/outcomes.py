"""Outcomes: what an integration sends once the engine decided, and the errors it sends.

:class:`Forward`, :class:`Replace`, :class:`Reply` and :class:`Drop` are the four things a
relay can do with a message (:mod:`elicitguard.integrations.actions` describes when each
happens); the JSON-RPC errors a block produces (:func:`blocked_error`,
:func:`withheld_error`) name the rule that blocked and never repeat the blocked message;
:func:`recover_id` finds the id of a frame that could not be parsed, so that its sender can
be answered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from elicitguard.base.decision import Action, Decision, Finding
from elicitguard.engine.policy import Policy

if TYPE_CHECKING:
    pass

__all__ = [
    "PARSE_ERROR",
    "WITHHELD",
    "Drop",
    "Forward",
    "Outcome",
    "Replace",
    "Reply",
    "block_reason",
    "blocked_error",
    "blocking_findings",
    "dumps",
    "error_response",
    "recover_id",
    "withheld_error",
]

PARSE_ERROR = -32700
_NO_ID = object()


# --- outcomes -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Forward:
    """Send the message on unchanged: its original bytes, never a re-serialisation."""

    decision: Decision | None = None
    close: bool = False


@dataclass(frozen=True, slots=True)
class Replace:
    """Send ``message`` on instead of the original, in the same direction."""

    message: dict[str, Any]
    decision: Decision | None = None
    close: bool = False

    def to_bytes(self) -> bytes:
        """The replacement as compact JSON (no trailing newline)."""
        return dumps(self.message)


@dataclass(frozen=True, slots=True)
class Reply:
    """Forward nothing; send ``message`` back to whoever sent the original."""

    message: dict[str, Any]
    decision: Decision | None = None
    close: bool = False

    def to_bytes(self) -> bytes:
        """The reply as compact JSON (no trailing newline)."""
        return dumps(self.message)


@dataclass(frozen=True, slots=True)
class Drop:
    """Send nothing. ``jsonrpc_id`` is an id recovered from an unparseable frame, if any."""

    reason: str
    decision: Decision | None = None
    close: bool = False
    jsonrpc_id: Any = None


Outcome = Forward | Replace | Reply | Drop


def dumps(message: Mapping[str, Any]) -> bytes:
    """Serialise a message; the standard library takes what orjson refuses.

    orjson refuses lone surrogates and integers past 64 bits; both are valid JSON and may sit
    in a value elicitguard must pass on unchanged (an id, ``requestState``).
    """
    try:
        return orjson.dumps(message)
    except TypeError:
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"))
        return text.encode("ascii")


def error_response(jsonrpc_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": jsonrpc_id, "error": error}


def blocking_findings(decision: Decision) -> list[Finding]:
    """The findings that made ``decision`` a block, most severe first.

    A decision is as severe as its most severe finding, so these are the findings whose own
    action is ``block``; the others (a warning beside the block) stay in the audit record.
    A block that no single finding asked for (a required key that a redaction would remove)
    names every finding.
    """
    blocking = [f for f in decision.findings if f.action is Action.BLOCK] or list(decision.findings)
    return sorted(blocking, key=lambda f: -f.severity.rank)


def block_reason(decision: Decision) -> str:
    """One line for the person who sees the error: which rule blocked, and why.

    Finding messages name fields and rules, never a value from the message, so the line is
    safe to show; ``decision_id`` leads to the whole audit record.
    """
    blocking = blocking_findings(decision)
    if not blocking:
        return "Blocked by elicitguard policy"
    first = blocking[0]
    line = f"Blocked by elicitguard policy: {first.code} {first.name}: {first.message}"
    others = list(dict.fromkeys(f.code for f in blocking[1:] if f.code != first.code))
    if others:
        line += f" (also {', '.join(others)})"
    return line


WITHHELD = "elicitguard withheld the user's answer"


def withheld_error(jsonrpc_id: Any, decision: Decision, policy: Policy) -> dict[str, Any]:
    """The error that replaces an answer elicitguard will not pass on (EG204, in both eras).

    A ``decline`` in its place would tell the server, and through it the user, that the user
    refused, when the user answered and elicitguard kept the answer back. So the server (push
    era: the answer to its ``elicitation/create``) or the client (2026-07-28: the retry that
    carried the answer, which then never reaches the server) gets the policy's error code,
    a message that says the answer was withheld and by which rule, and
    ``data.elicitguard.withheld: true``.
    """
    error = blocked_error(jsonrpc_id, decision, policy)
    body = error["error"]
    body["message"] = WITHHELD + body["message"].removeprefix("Blocked by elicitguard policy")
    body["data"]["elicitguard"]["withheld"] = True
    return error


def blocked_error(jsonrpc_id: Any, decision: Decision, policy: Policy) -> dict[str, Any]:
    """The error a block produces: the policy's code and ``data.elicitguard``.

    The message is one human line naming the rule that blocked and why (:func:`block_reason`);
    ``data.elicitguard.codes`` lists the codes that blocked, ``decision_id`` the audit record
    that holds every finding. Nothing from the blocked message is repeated.
    """
    codes = list(dict.fromkeys(f.code for f in blocking_findings(decision)))
    data = {"elicitguard": {"codes": codes, "decision_id": decision.decision_id}}
    return error_response(jsonrpc_id, policy.push_error_code, block_reason(decision), data)


# --- unparseable frames ---------------------------------------------------------------------

_ID = re.compile(rb'"id"\s*:\s*(-?[0-9]{1,19}(?![0-9.eE])|"(?:[^"\\\x00-\x1f]|\\.){0,256}")')
_METHOD = re.compile(rb'"method"\s*:\s*"')
_SCAN = 8192


def recover_id(raw: bytes) -> tuple[Any, bool]:
    """An id found near the start of a broken frame, and whether it looks like a request.

    Returns ``(None, False)`` when no id can be recovered. Only the first
    kilobytes are looked at: an id comes early in every frame an SDK writes.
    """
    head = raw[:_SCAN]
    found = _ID.search(head)
    if found is None:
        return None, False
    token = found.group(1)
    try:
        value = json.loads(token)
    except ValueError:
        return None, False
    return value, _METHOD.search(head) is not None
