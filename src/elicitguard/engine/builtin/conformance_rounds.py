"""Checks for the rest of the conformance family (EG113-EG122): input-required rounds,
result types, retired error codes, completions, and asking again after a refusal.

Most of these need what earlier messages said (the round a retry answers, the
``requestState`` the server issued, the ``elicitationId`` values opened and finished, the
last refused push elicitation). :mod:`elicitguard.protocol.extract` puts those facts on the
items as it updates the session state, so every check here is a few lookups.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from elicitguard.base.decision import Hit, Severity
from elicitguard.base.pointer import escape_pointer
from elicitguard.engine.context import CheckContext, check
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.session import ChainState
from elicitguard.protocol.versions import INPUT_REQUEST_METHODS, INPUT_REQUIRED_METHODS

__all__: list[str] = []

Params = Mapping[str, Any]
#: Input requests whose params the schema requires (``roots/list`` takes none).
PARAMS_REQUIRED = frozenset({"elicitation/create", "sampling/createMessage"})
MAX_KEYS_NAMED = 5


def _short(value: object, limit: int = 48) -> str:
    """A method name or key for a message: printable and short (they are names, not values)."""
    text = str(value)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@check("conformance.input_request_valid", pure=True)
def input_request_valid(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG113: an ``inputRequests`` entry that is not a valid input request (MR-03)."""
    requests = item.data.get("inputRequests") if isinstance(item.data, dict) else None
    if not isinstance(requests, dict):
        return
    for key, entry in requests.items():
        pointer = item.pointer + "/inputRequests/" + escape_pointer(str(key))
        name = _short(key)
        if not isinstance(entry, dict):
            yield Hit(pointer=pointer, args={"key": name, "problem": "is not an object"})
            continue
        method = entry.get("method")
        if not isinstance(method, str) or method not in INPUT_REQUEST_METHODS:
            what = f"`{_short(method)}`" if isinstance(method, str) else "no method"
            yield Hit(
                pointer=pointer + "/method",
                args={
                    "key": name,
                    "problem": f"has {what}, not elicitation/create, "
                    "sampling/createMessage or roots/list",
                },
            )
        for field in ("jsonrpc", "id"):
            if field in entry:
                yield Hit(
                    pointer=pointer + "/" + field,
                    args={"key": name, "problem": f"carries `{field}`; entries are bare requests"},
                )
        if (
            isinstance(method, str)
            and method in PARAMS_REQUIRED
            and not isinstance(entry.get("params"), dict)
        ):
            yield Hit(
                pointer=pointer,
                args={"key": name, "problem": f"has no `params` object, which {method} requires"},
            )


@check("conformance.retry_new_id")
def retry_new_id(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG114: a retry that reuses the JSON-RPC id of the request it retries (MR-11)."""
    if item.facts.get("reused_id"):
        yield Hit(pointer="/id")


@check("conformance.request_state_echo")
def request_state_echo(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG115: ``requestState`` not echoed exactly, dropped, or invented (MR-10)."""
    if item.method not in INPUT_REQUIRED_METHODS:
        return
    echo = item.facts.get("state_echo")
    problem = {
        "modified": "differs from the one the server issued",
        "dropped": "is missing, though the server issued one",
        "invented": "is present, though the server issued none",
    }.get(echo or "")
    if problem is not None:
        pointer = item.pointer if echo == "dropped" else item.pointer + "/requestState"
        yield Hit(pointer=pointer, args={"problem": problem})


def _names(keys: list[str]) -> str:
    shown = ", ".join(f"`{_short(k, 32)}`" for k in keys[:MAX_KEYS_NAMED])
    return shown + (f" and {len(keys) - MAX_KEYS_NAMED} more" if len(keys) > MAX_KEYS_NAMED else "")


@check("conformance.input_responses_match")
def input_responses_match(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG116: requested keys left unanswered (MR-09) or answers never asked for (MR-13)."""
    chain = item.facts.get("chain")
    if not isinstance(chain, ChainState) or not isinstance(item.data, dict):
        return
    responses = item.data.get("inputResponses")
    answered = set(responses) if isinstance(responses, dict) else set()
    asked = set(chain.requests)
    missing = sorted(asked - answered - chain.removed)
    extra = sorted(answered - asked)
    if missing:
        yield Hit(
            pointer=item.pointer + ("/inputResponses" if isinstance(responses, dict) else ""),
            args={"problem": f"leaves requested input {_names(missing)} unanswered (MR-09)"},
        )
    for key in extra[:MAX_KEYS_NAMED]:
        yield Hit(
            pointer=item.pointer + "/inputResponses/" + escape_pointer(key),
            args={"problem": f"answers `{_short(key, 32)}`, which the server never asked (MR-13)"},
            severity=Severity.LOW,
        )


@check("conformance.result_type_known")
def result_type_known(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG117: a 2026-07-28 result whose ``resultType`` the client cannot recognise (RT-01)."""
    value = item.data
    if value == "task" and item.facts.get("tasks_in_use"):
        return
    if not isinstance(value, str):
        yield Hit(args={"value": "a non-string value"})
    else:
        yield Hit(args={"value": f"`{_short(value, 32)}`"})


@check("conformance.retired_error_code", pure=True)
def retired_error_code(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG118: an error code 2026-07-28 retired or never defined (CP-05)."""
    code = item.data.get("code") if isinstance(item.data, dict) else None
    if not isinstance(code, int) or isinstance(code, bool):
        return
    if code == -32042:
        why = "URL-elicitation-required was 2025-11-25 only; return an InputRequiredResult"
    elif code == -32002:
        why = "it is reserved and must not be emitted"
    else:
        why = "the -32020..-32099 range is reserved and the spec does not define this code"
    yield Hit(pointer=item.pointer + "/code", args={"code": code, "why": why})


@check("conformance.completion_known")
def completion_known(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG119: a completion notification for an unknown or finished ``elicitationId`` (CX-01)."""
    data = item.data
    eid = data.get("elicitationId") if isinstance(data, dict) else None
    if not isinstance(eid, str) or not eid:
        yield Hit(args={"problem": "carries no `elicitationId` string"})
        return
    status = item.facts.get("elicitation_status")
    if status in ("completed", "decline", "cancel"):
        finished = {"completed": "already completed", "decline": "declined", "cancel": "cancelled"}
        yield Hit(
            pointer=item.pointer + "/elicitationId",
            args={"problem": f"names an elicitation that was {finished[status]}"},
        )
    elif status is None and item.facts.get("session_observed"):
        yield Hit(
            pointer=item.pointer + "/elicitationId",
            args={"problem": "names an elicitationId no URL request of this session opened"},
        )


@check("conformance.url_required_error_valid", pure=True)
def url_required_error_valid(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG120: a -32042 error whose ``data.elicitations`` is not a list of URL requests (CX-02)."""
    error = item.data if isinstance(item.data, dict) else {}
    data = error.get("data")
    if not isinstance(data, dict):
        yield Hit(args={"problem": "has no `data` object"})
        return
    elicitations = data.get("elicitations")
    if not isinstance(elicitations, list):
        yield Hit(pointer="/error/data", args={"problem": "has no `data.elicitations` list"})
        return
    if not elicitations:
        yield Hit(
            pointer="/error/data/elicitations",
            args={"problem": "lists no elicitation, so the client has nothing to open"},
        )
    for index, entry in enumerate(elicitations):
        pointer = f"/error/data/elicitations/{index}"
        if not isinstance(entry, dict):
            yield Hit(pointer=pointer, args={"problem": f"entry {index} is not an object"})
        elif entry.get("mode") != "url":
            yield Hit(
                pointer=pointer + ("/mode" if "mode" in entry else ""),
                args={"problem": f"entry {index} is not a URL-mode request"},
            )


@check("conformance.draft_shape")
def draft_shape(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG121: a pre-release (working-group draft) MRTR shape."""
    if not item.draft:
        return
    if item.kind is ItemKind.RETRY:
        if item.method == "tasks/input_response":
            yield Hit(
                pointer="/method", args={"shape": "`tasks/input_response` (now tasks/update)"}
            )
    elif item.kind is ItemKind.ELICIT_RESULT:
        if item.pointer.endswith("/result"):
            yield Hit(args={"shape": 'an answer wrapped in `{"result": ...}`'})
    elif item.kind is ItemKind.INPUT_REQUIRED:
        yield Hit(args={"shape": "an IncompleteResult without `resultType`"})


@check("conformance.asked_again_after_refusal")
def asked_again_after_refusal(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG122: the same push elicitation again, right after the user declined or cancelled it."""
    refused = item.facts.get("asked_again_after")
    if refused in ("decline", "cancel"):
        answer = "declined" if refused == "decline" else "cancelled"
        yield Hit(args={"answer": answer})
