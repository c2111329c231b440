"""EG109: the shape of an ``ElicitResult`` (action, content) for its mode and era."""

from __future__ import annotations

from typing import Final

from elicitguard.checks.schema._issues import (
    SchemaIssue,
    _is_number,
    _Issues,
    _name,
    _ptr,
    _type_name,
)
from elicitguard.protocol.versions import V2025_06_18, elicitation_era

# --------------------------------------------------------------------------------------------
# EG109: result_shape_issues
# --------------------------------------------------------------------------------------------

_ACTIONS: Final = frozenset({"accept", "decline", "cancel"})


def result_shape_issues(result: object, *, mode: str | None, era: str) -> list[SchemaIssue]:
    """Report a malformed ``ElicitResult`` (EG109); pointers are relative to ``result``.

    ``mode`` is the mode of the request being answered (``None`` means form). ``resultType``
    is another rule's business and is ignored here.
    """
    out = _Issues()
    era = elicitation_era(era)
    if not isinstance(result, dict):
        out.add("not_object", "", "the result is not a JSON object")
        return out.items
    action = result.get("action")
    if "action" not in result:
        out.add("missing_action", "/action", "the result has no action")
    elif not isinstance(action, str) or action not in _ACTIONS:
        out.add("unknown_action", "/action", "action is not one of accept, decline, cancel")
    if "content" not in result:
        return out.items
    if action in ("decline", "cancel"):
        out.add("content_not_allowed", "/content", f"content is not allowed with {action}")
    elif action == "accept" and mode == "url":
        out.add("content_on_url_accept", "/content", "a URL-mode accept carries no content")
    _check_content_values(out, result["content"], era)
    return out.items


def _check_content_values(out: _Issues, content: object, era: str) -> None:
    """Content is a flat object of strings, numbers, booleans and (2025-11-25+) string lists."""
    if not isinstance(content, dict):
        out.add("content_not_object", "/content", "content is not a JSON object")
        return
    for key, value in content.items():
        if out.full:
            return
        pointer = _ptr("/content", key)
        if isinstance(value, str | bool) or _is_number(value):
            continue
        if isinstance(value, dict):
            out.add("nested_content", pointer, f"content {_name(key)} is a nested object")
        elif isinstance(value, list):
            _check_content_list(out, key, value, pointer, era)
        else:
            out.add(
                "content_value_type",
                pointer,
                f"content {_name(key)} is {_type_name(value)}, not a string, number or boolean",
            )


def _check_content_list(
    out: _Issues, key: object, value: list[object], pointer: str, era: str
) -> None:
    """A content array: only lists of strings, and only from 2025-11-25 on."""
    if any(isinstance(item, dict) for item in value):
        out.add("nested_content", pointer, f"content {_name(key)} holds objects")
    elif not all(isinstance(item, str) for item in value):
        out.add("content_value_type", pointer, f"content {_name(key)} is not a list of strings")
    elif era == V2025_06_18:
        out.add("content_array_era", pointer, "2025-06-18 content has no arrays")
