"""Checks on the JSON-RPC frame that carries elicitation, rather than on what it asks.

Elicitation is a request and its answer: a server-to-client ``elicitation/create`` (or, in
2026-07-28, an ``InputRequiredResult`` that answers the client's request), and the client's
answer. Each of them needs an id to be matched with the other. A frame that carries
elicitation without one is a notification in disguise: a strict peer drops it, a lenient one
shows the form anyway, and the two then disagree about what was asked. The extractor still
reads such frames (every other rule judges their content) and marks the first item;
:func:`request_without_id` turns the mark into EG125.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from elicitguard.base.decision import Hit
from elicitguard.engine.context import CheckContext, check
from elicitguard.protocol.items import Item, ItemKind

__all__: list[str] = []

Params = Mapping[str, Any]

_WHAT = {
    ItemKind.FORM_REQUEST: "an elicitation request",
    ItemKind.URL_REQUEST: "an elicitation request",
    ItemKind.INPUT_REQUIRED: "an input-required result",
    ItemKind.ELICIT_RESULT: "an elicitation answer",
    ItemKind.RETRY: "a retry with input responses",
    ItemKind.URL_REQUIRED_ERROR: "a URL-elicitation-required error",
    ItemKind.TASK_CREATED: "a task for an elicitation",
}
_PROBLEM = {
    "missing": "has no `id` (it is a notification)",
    "null": "has `id: null`",
    "invalid": "has an `id` that is neither a string nor an integer",
}


@check("conformance.request_without_id")
def request_without_id(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG125: elicitation carried by a frame without a usable JSON-RPC id (JR-01)."""
    problem = item.facts.get("without_id")
    if not isinstance(problem, str):
        return
    yield Hit(
        pointer="",
        args={
            "what": _WHAT.get(item.kind, "elicitation"),
            "problem": _PROBLEM.get(problem, _PROBLEM["invalid"]),
        },
    )
