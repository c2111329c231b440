"""Checks for protocol conformance (EG1xx): capabilities, modes, required fields, schemas,
results and the 2026-07-28 input-required round trip.

Each check is a thin adapter: the per-era knowledge lives in
:mod:`elicitguard.protocol.versions` and :mod:`elicitguard.checks.schema`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from elicitguard.base.decision import Hit, Severity
from elicitguard.base.pointer import escape_pointer
from elicitguard.checks import schema as schema_checks
from elicitguard.engine.context import CheckContext, check
from elicitguard.protocol.items import ABSENT, Item, ItemKind
from elicitguard.protocol.versions import (
    INPUT_REQUIRED_METHODS,
    V2025_06_18,
    V2025_11_25,
    features,
    is_modern,
)

__all__: list[str] = []

Params = Mapping[str, Any]
NEWEST = "2026-07-28"


def _what(item: Item) -> str:
    return "a URL-mode request" if item.kind is ItemKind.URL_REQUEST else "a form request"


def _severity(value: str | None) -> Severity | None:
    return Severity(value) if value in {s.value for s in Severity} else None


@check("conformance.capability_declared", pure=True)
def capability_declared(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG101: the server elicits from a client that declared no ``elicitation`` capability."""
    if item.capabilities is ABSENT:
        where = "on this request's _meta" if is_modern(item.era) else "in initialize"
        yield Hit(args={"what": _what(item), "where": where})


def _declared_modes(capabilities: Any) -> set[str] | None:
    if not isinstance(capabilities, dict):
        return None
    modes = {m for m in ("form", "url") if isinstance(capabilities.get(m), dict)}
    if not modes and not any(m in capabilities for m in ("form", "url")):
        modes = {"form"}  # `{}` means form only (EL-08)
    return modes


@check("conformance.mode_declared", pure=True)
def mode_declared(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG102: the request uses a mode the client did not declare."""
    modes = _declared_modes(item.capabilities)
    if modes is None:
        return
    mode = item.mode if isinstance(item.mode, str) else "form"
    if mode not in modes:
        declared = ", ".join(sorted(modes)) or "none"
        pointer = item.pointer + "/mode" if item.facts.get("mode_present") else item.pointer
        yield Hit(pointer=pointer, args={"mode": mode[:32], "declared": declared})


@check("conformance.capability_usable", pure=True)
def capability_usable(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG103: an ``elicitation`` capability that leaves no usable mode."""
    value = item.data
    if value is ABSENT or value is None:
        return
    if not isinstance(value, dict):
        yield Hit(args={"problem": "is not an object"})
        return
    present = [m for m in ("form", "url") if m in value]
    if present and not any(isinstance(value[m], dict) for m in present):
        yield Hit(args={"problem": "declares " + " and ".join(present) + " with non-object values"})
    elif not present and value and item.era != V2025_06_18:
        yield Hit(args={"problem": "holds neither `form` nor `url`, only unknown keys"})


@check("conformance.message_present", pure=True)
def message_present(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG104: an elicitation request without a ``message``."""
    data = item.data
    if not isinstance(data, dict):
        yield Hit(args={"what": _what(item), "problem": "has no params object"})
        return
    message = data.get("message")
    if message is None:
        yield Hit(args={"what": _what(item), "problem": "has no `message`"})
    elif not isinstance(message, str):
        yield Hit(
            pointer=item.pointer + "/message",
            args={"what": _what(item), "problem": "has a `message` that is not a string"},
        )
    elif not message.strip():
        yield Hit(
            pointer=item.pointer + "/message",
            args={"what": _what(item), "problem": "has an empty `message`"},
        )


@check("conformance.form_schema_present", pure=True)
def form_schema_present(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG105: a form request without a ``requestedSchema`` object."""
    if item.mode not in ("form", None) or not isinstance(item.data, dict):
        return
    schema = item.data.get("requestedSchema")
    if schema is None:
        yield Hit(args={"problem": "has no `requestedSchema`"})
    elif not isinstance(schema, dict):
        yield Hit(
            pointer=item.pointer + "/requestedSchema",
            args={"problem": "has a `requestedSchema` that is not an object"},
        )


@check("conformance.schema_subset", pure=True)
def schema_subset(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG106: ``requestedSchema`` outside the era's restricted subset."""
    schema = item.data.get("requestedSchema") if isinstance(item.data, dict) else None
    if not isinstance(schema, dict):
        return
    for issue in schema_checks.schema_subset_issues(schema, item.era or NEWEST):
        yield Hit(
            pointer=item.pointer + "/requestedSchema" + issue.pointer,
            args={"detail": issue.detail, "kind": issue.kind},
            severity=_severity(issue.severity),
        )


@check("conformance.url_request_valid", pure=True)
def url_request_valid(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG107: a URL request without a usable absolute ``url`` or with the wrong id field."""
    data = item.data
    if not isinstance(data, dict):
        yield Hit(args={"problem": "has no params object"})
        return
    url = data.get("url")
    if not isinstance(url, str) or not url:
        yield Hit(args={"problem": "has no `url` string"})
    else:
        problem = _url_problem(url)
        if problem:
            yield Hit(pointer=item.pointer + "/url", args={"problem": problem}, value=url)
    has_id = "elicitationId" in data
    if item.era == V2025_11_25 or item.facts.get("in_error"):
        eid = data.get("elicitationId")
        if not isinstance(eid, str) or not eid:
            yield Hit(args={"problem": "has no `elicitationId` string, which 2025-11-25 requires"})
    elif is_modern(item.era) and has_id:
        yield Hit(
            pointer=item.pointer + "/elicitationId",
            args={"problem": "carries `elicitationId`, which 2026-07-28 removed"},
        )


# ``\s`` is exactly ``str.isspace``; one regex pass instead of a Python loop per character
# (this runs on every URL-mode request).
_SPACE_OR_CONTROL_RE = re.compile(r"[\s\x00-\x1f\x7f]")


def _url_problem(url: str) -> str | None:
    if _SPACE_OR_CONTROL_RE.search(url):
        return "has a `url` containing whitespace or control characters"
    try:
        parts = urlsplit(url)
    except ValueError:
        return "has a `url` that cannot be parsed"
    if not parts.scheme:
        return "has a `url` that is not absolute (no scheme)"
    if parts.scheme.lower() in ("http", "https") and not parts.hostname:
        return "has a `url` with no host"
    return None


@check("conformance.era_features", pure=True)
def era_features(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG108: a feature the negotiated era does not have."""
    era = item.era
    info = features(era)
    if era is None or info is None:
        return
    if item.kind is ItemKind.COMPLETION:
        if not info.completion_notification:
            yield Hit(
                args={"detail": f"notifications/elicitation/complete does not exist in {era}"}
            )
        return
    if is_modern(era) and item.facts.get("pushed"):
        yield Hit(
            pointer="/method",
            args={
                "detail": "servers send no requests in 2026-07-28; return an InputRequiredResult (MR-01)"
            },
        )
    if not is_modern(era) and item.facts.get("embedded"):
        yield Hit(
            pointer=item.pointer,
            args={
                "detail": f"inputRequests (InputRequiredResult) do not exist in {era}; send elicitation/create"
            },
        )
    if not info.elicitation and item.facts.get("pushed"):
        yield Hit(pointer="/method", args={"detail": f"elicitation does not exist in {era}"})
    if item.kind in (ItemKind.FORM_REQUEST, ItemKind.URL_REQUEST) and isinstance(item.data, dict):
        for issue in schema_checks.era_feature_issues(item.data, era):
            yield Hit(
                pointer=item.pointer + issue.pointer,
                args={"detail": issue.detail},
                severity=_severity(issue.severity),
            )


@check("conformance.result_valid", pure=True)
def result_valid(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG109: an ``ElicitResult`` with an unknown action or content where none belongs."""
    for issue in schema_checks.result_shape_issues(
        item.data, mode=item.request_mode, era=item.era or NEWEST
    ):
        yield Hit(
            pointer=item.pointer + issue.pointer,
            args={"detail": issue.detail},
            severity=_severity(issue.severity),
        )


@check("conformance.content_matches_schema", pure=True)
def content_matches_schema(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG110: accepted content that does not match the ``requestedSchema`` it answers."""
    data = item.data
    if not isinstance(data, dict) or data.get("action") != "accept":
        return
    schema = item.schema
    content = data.get("content")
    if not isinstance(schema, dict) or item.request_mode == "url":
        return
    if content is None:
        content = {}
    if not isinstance(content, dict):
        return  # EG109 reports the shape
    for issue in schema_checks.content_issues(content, schema, item.era or NEWEST):
        yield Hit(
            pointer=item.pointer + "/content" + issue.pointer,
            args={"detail": issue.detail},
            severity=_severity(issue.severity),
        )


@check("conformance.input_required_method")
def input_required_method(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG111: an ``InputRequiredResult`` answering a method that may not carry one."""
    if not item.facts.get("origin_known") or item.method is None:
        return
    if item.method in INPUT_REQUIRED_METHODS:
        return
    if item.method == "tasks/get" and item.facts.get("task_status") == "input_required":
        return
    yield Hit(args={"method": item.method[:64]})


@check("conformance.input_required_nonempty", pure=True)
def input_required_nonempty(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG112: an ``InputRequiredResult`` with neither ``inputRequests`` nor ``requestState``."""
    data = item.data
    if not isinstance(data, dict):
        return
    requests = data.get("inputRequests")
    state = data.get("requestState")
    has_requests = isinstance(requests, dict) and bool(requests)
    has_state = isinstance(state, str) and bool(state)
    if not has_requests and not has_state:
        yield Hit()


@check("conformance.meta_required")
def meta_required(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG124: a 2026-07-28 request without a required ``_meta`` key."""
    if item.facts.get("source") != "meta":
        return
    for key in item.facts.get("missing_meta", ()):
        yield Hit(pointer="/params/_meta/" + escape_pointer(key), args={"key": key})
