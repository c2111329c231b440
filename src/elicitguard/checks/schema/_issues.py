"""Issues and the collector: what every schema check reports, and the bounded list it reports into."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypeGuard

from elicitguard.base.pointer import escape_pointer

# --------------------------------------------------------------------------------------------
# Issues and the collector
# --------------------------------------------------------------------------------------------

#: Every ``SchemaIssue.kind`` this module emits, so rule files and docs can be checked.
KINDS: Final[frozenset[str]] = frozenset(
    {
        # schema_subset_issues (EG106)
        "not_object",
        "properties_not_object",
        "property_not_object",
        "required_not_list",
        "required_duplicate",
        "required_unknown_property",
        "nested_object",
        "array_of_objects",
        "array_items",
        "ref",
        "composition",
        "unsupported_type",
        "unsupported_format",
        "unknown_keyword",
        "pattern",
        "bad_keyword_value",
        "bad_bound",
        "bound_conflict",
        "bad_enum",
        "enum_names_mismatch",
        "bad_default",
        # era_feature_issues (EG108)
        "url_mode",
        "mode_field",
        "titled_enum",
        "multi_select_enum",
        "non_boolean_default",
        "schema_keyword",
        "elicitation_id",
        "task_field",
        "meta_field",
        # result_shape_issues (EG109)
        "missing_action",
        "unknown_action",
        "content_not_allowed",
        "content_on_url_accept",
        "content_not_object",
        "content_value_type",
        "nested_content",
        "content_array_era",
        # content_issues (EG110)
        "required_missing",
        "unknown_property",
        "type_mismatch",
        "enum_mismatch",
        "duplicate_item",
        "too_short",
        "too_long",
        "below_minimum",
        "above_maximum",
        "too_few_items",
        "too_many_items",
        "format_mismatch",
        # any function
        "truncated",
    }
)

#: At most this many issues per call; one more issue of kind ``truncated`` says so.
MAX_ISSUES: Final = 200


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    """One way a schema, request or result falls outside what its era allows.

    Attributes:
        kind: a short slug from :data:`KINDS`, e.g. ``nested_object``.
        pointer: RFC 6901 JSON pointer relative to the object that was checked.
        detail: plain words naming keys and keywords, never a value.
        severity: an override for the rule's severity (``"low"`` for ``pattern``), else None.
    """

    kind: str
    pointer: str
    detail: str
    severity: str | None = None


class _Issues:
    """Collects issues up to :data:`MAX_ISSUES`, then records one ``truncated`` issue."""

    __slots__ = ("full", "items")

    def __init__(self) -> None:
        self.items: list[SchemaIssue] = []
        self.full = False

    def add(self, kind: str, pointer: str, detail: str, severity: str | None = None) -> None:
        if self.full:
            return
        if len(self.items) >= MAX_ISSUES:
            self.items.append(
                SchemaIssue("truncated", "", "too many issues; the rest are left out")
            )
            self.full = True
            return
        self.items.append(SchemaIssue(kind, pointer, detail, severity))


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _ptr(base: str, *tokens: object) -> str:
    """Append reference tokens to a pointer; a non-string token is written with ``str``."""
    return base + "".join("/" + escape_pointer(str(t)) for t in tokens)


_NAME_LIMIT: Final = 64


def _name(key: object) -> str:
    """A key, quoted and shortened, for a detail; non-printable characters become ``?``."""
    text = key if isinstance(key, str) else str(key)
    short = "".join(c if c.isprintable() else "?" for c in text[:_NAME_LIMIT])
    return f"'{short}…'" if len(text) > _NAME_LIMIT else f"'{short}'"


def _num(value: int | float) -> str:
    """A schema bound for a detail; Python refuses ``str`` on ints past 4300 digits."""
    try:
        return str(value)
    except ValueError:
        return "a very large number"


def _is_number(value: object) -> TypeGuard[int | float]:
    """A JSON number: ``int`` or ``float`` but not ``bool``."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integral(value: object) -> bool:
    """A JSON number with no fractional part (``3.0`` counts, as JSON Schema says)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def _is_count(value: object) -> bool:
    """A non-negative integer, as ``minLength`` and ``minItems`` need."""
    return _is_integral(value) and _is_number(value) and value >= 0


def _type_name(value: object) -> str:
    """The JSON type name of a value, for details (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "unknown"
