"""Per-era knowledge of elicitation's restricted JSON Schema and of ``ElicitResult`` content.

Why the project carries its own validator: the SDKs validate laxly and cannot be relied on for
policy (PROTOCOL.md c.2 and e.5). The ``mcp`` wire models accept nested ``{"type": "object"}``
properties and ``pattern``, reuse the 2025-11-25 model for 2025-06-18 (so URL mode and
``mode`` pass there) and never gate features by version. A general JSON Schema validator is no
help either: elicitation's schema is a *subset* of JSON Schema, defined per protocol era, and
the question is "is this schema inside the subset", not "does a value match this schema".

Everything here is a pure function over plain JSON values (``dict``, ``list``, ``str``,
``int``, ``float``, ``bool``, ``None``). Any input, of any type or size, gives a list of
:class:`SchemaIssue` and never raises. An issue carries a JSON pointer relative to the object
passed in and a detail in plain words that may name keys and keywords but never repeats a
string value, a default or a content value (those can be secrets).

The four checks and the rules that call them:

- :func:`schema_subset_issues` (EG106): ``requestedSchema`` outside the restricted subset.
- :func:`era_feature_issues` (EG108): request features the negotiated era lacks.
- :func:`result_shape_issues` (EG109): a malformed ``ElicitResult``.
- :func:`content_issues` (EG110): accepted content that does not match ``requestedSchema``.

Shape checks that hold in every era live in :func:`schema_subset_issues`; whatever one era
lacks (titled and multi-select enums, non-boolean defaults, ``$schema`` on 2025-06-18) is
reported only by :func:`era_feature_issues`, so one defect gives one finding.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeGuard

from elicitguard.base.pointer import escape_pointer
from elicitguard.protocol.versions import V2025_06_18, V2026_07_28, elicitation_era

__all__ = [
    "KINDS",
    "MAX_ISSUES",
    "STRING_FORMATS",
    "SchemaIssue",
    "content_issues",
    "era_feature_issues",
    "result_shape_issues",
    "schema_subset_issues",
]

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


# --------------------------------------------------------------------------------------------
# Keyword tables (PROTOCOL.md a.4)
# --------------------------------------------------------------------------------------------

#: ``format`` values a ``StringSchema`` may use, in every era.
STRING_FORMATS: Final[frozenset[str]] = frozenset({"email", "uri", "date", "date-time"})

_ANNOTATIONS: Final = ("title", "description")
_TOP_ALLOWED: Final = frozenset({"$schema", "type", "properties", "required", *_ANNOTATIONS})
_COMMON: Final = frozenset({"type", "default", *_ANNOTATIONS})
_STRING_PLAIN: Final = _COMMON | {"minLength", "maxLength", "format"}
_STRING_ENUM: Final = _COMMON | {"enum", "enumNames", "oneOf"}
_NUMBER: Final = _COMMON | {"minimum", "maximum"}
_BOOLEAN: Final = _COMMON
_ARRAY: Final = _COMMON | {"minItems", "maxItems", "items"}
_OPTION_KEYS: Final = frozenset({"const", "title"})

_REF_KEYWORDS: Final = frozenset(
    {"$ref", "$defs", "definitions", "$dynamicRef", "$recursiveRef", "$anchor", "$id"}
)
_COMPOSITION_KEYWORDS: Final = frozenset(
    {
        "allOf",
        "anyOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependentRequired",
        "dependencies",
    }
)
_BOUND_PAIRS: Final = (("minLength", "maxLength"), ("minimum", "maximum"), ("minItems", "maxItems"))


# --------------------------------------------------------------------------------------------
# EG106: schema_subset_issues
# --------------------------------------------------------------------------------------------


def schema_subset_issues(requested_schema: object, era: str) -> list[SchemaIssue]:
    """Report where ``requestedSchema`` leaves elicitation's restricted schema (EG106).

    Pointers are relative to ``requested_schema``. Features that only one era lacks are left to
    :func:`era_feature_issues`; this function checks the shapes common to every era.
    """
    out = _Issues()
    era = elicitation_era(era)
    if not isinstance(requested_schema, dict):
        out.add("not_object", "", "requestedSchema is not a JSON object")
        return out.items
    _check_top(out, requested_schema, era)
    properties = requested_schema.get("properties")
    if isinstance(properties, dict):
        for key, prop in properties.items():
            if out.full:
                break
            _check_property(out, key, prop, _ptr("/properties", key))
    return out.items


def _check_top(out: _Issues, schema: dict[object, object], era: str) -> None:
    """The object level: ``type``, ``properties``, ``required``, ``$schema`` and other keys."""
    if schema.get("type") != "object":
        out.add("not_object", "/type", "requestedSchema must have type 'object'")
    if "properties" not in schema:
        out.add("properties_not_object", "/properties", "requestedSchema has no properties")
    elif not isinstance(schema["properties"], dict):
        out.add("properties_not_object", "/properties", "properties is not a JSON object")
    if "required" in schema:
        _check_required(out, schema["required"], schema.get("properties"))
    # On 2025-06-18 ``$schema`` is an era feature (era_feature_issues), not a subset issue.
    if "$schema" in schema and era != V2025_06_18 and not isinstance(schema["$schema"], str):
        out.add("bad_keyword_value", "/$schema", "$schema is not a string")
    _check_annotations(out, schema, "")
    _check_extra_keys(out, schema, "", _TOP_ALLOWED)


def _check_required(out: _Issues, required: object, properties: object) -> None:
    """``required``: a list of distinct strings, each naming a property."""
    if not isinstance(required, list):
        out.add("required_not_list", "/required", "required is not a list")
        return
    seen: set[str] = set()
    for index, name in enumerate(required):
        if out.full:
            return
        pointer = _ptr("/required", index)
        if not isinstance(name, str):
            out.add("required_not_list", pointer, "a required entry is not a string")
        elif name in seen:
            out.add("required_duplicate", pointer, f"required lists {_name(name)} twice")
        else:
            seen.add(name)
            if isinstance(properties, dict) and name not in properties:
                out.add(
                    "required_unknown_property",
                    pointer,
                    f"required names {_name(name)}, which is not in properties",
                )


def _check_annotations(out: _Issues, schema: dict[object, object], base: str) -> None:
    """``title`` and ``description`` must be strings when present."""
    for key in _ANNOTATIONS:
        if key in schema and not isinstance(schema[key], str):
            out.add("bad_keyword_value", _ptr(base, key), f"{key} is not a string")


def _check_extra_keys(
    out: _Issues,
    schema: dict[object, object],
    base: str,
    allowed: Iterable[str],
    *,
    why: str = "",
) -> None:
    """Report keys outside ``allowed``: references, composition, ``pattern`` or unknown."""
    allowed = frozenset(allowed)
    for key in schema:
        if out.full:
            return
        if isinstance(key, str) and key in allowed:
            continue
        pointer = _ptr(base, key)
        if key in _REF_KEYWORDS:
            out.add("ref", pointer, f"{_name(key)} references are not allowed")
        elif key in _COMPOSITION_KEYWORDS or key == "oneOf":
            out.add("composition", pointer, f"{_name(key)} is not allowed here")
        elif key == "pattern":
            out.add("pattern", pointer, "pattern is not in the elicitation schema", "low")
        else:
            out.add("unknown_keyword", pointer, f"{_name(key)} is not an allowed keyword{why}")


def _check_property(out: _Issues, key: object, prop: object, base: str) -> None:
    """One entry of ``properties``: dispatch on its ``type``."""
    if not isinstance(prop, dict):
        out.add("property_not_object", base, f"property {_name(key)} is not a JSON object")
        return
    kind = prop.get("type")
    if kind == "string":
        _check_string(out, prop, base)
    elif kind in ("number", "integer"):
        _check_number(out, prop, base)
    elif kind == "boolean":
        _check_boolean(out, prop, base)
    elif kind == "array":
        _check_array(out, prop, base)
    elif kind == "object" or (kind is None and "properties" in prop):
        out.add("nested_object", base, f"property {_name(key)} is a nested object")
    else:
        _check_untyped(out, key, prop, base)


def _check_untyped(out: _Issues, key: object, prop: dict[object, object], base: str) -> None:
    """A property whose ``type`` is missing, a list, ``null`` or not a primitive."""
    refs = sorted(k for k in prop if isinstance(k, str) and k in _REF_KEYWORDS)
    combos = sorted(k for k in prop if isinstance(k, str) and k in _COMPOSITION_KEYWORDS)
    for ref in refs:
        out.add("ref", _ptr(base, ref), f"{_name(ref)} references are not allowed")
    for combo in combos:
        out.add("composition", _ptr(base, combo), f"{_name(combo)} is not allowed")
    kind = prop.get("type")
    if "type" not in prop:
        if not refs and not combos:
            out.add("unsupported_type", base, f"property {_name(key)} has no type")
    elif isinstance(kind, list):
        out.add("unsupported_type", _ptr(base, "type"), "a list of types is not allowed")
    elif kind == "null":
        out.add("unsupported_type", _ptr(base, "type"), "type 'null' is not allowed")
    else:
        out.add(
            "unsupported_type",
            _ptr(base, "type"),
            "type is not one of string, number, integer, boolean, array",
        )


def _check_count(out: _Issues, prop: dict[object, object], base: str, key: str) -> None:
    """``minLength`` / ``maxLength`` / ``minItems`` / ``maxItems``: non-negative integers."""
    if key in prop and not _is_count(prop[key]):
        out.add("bad_bound", _ptr(base, key), f"{key} is not a non-negative integer")


def _check_bound_pair(out: _Issues, prop: dict[object, object], base: str) -> None:
    """A lower bound above its upper bound leaves no valid answer."""
    for low, high in _BOUND_PAIRS:
        lo, hi = prop.get(low), prop.get(high)
        if _is_number(lo) and _is_number(hi) and lo > hi:
            out.add("bound_conflict", _ptr(base, low), f"{low} is greater than {high}")


def _check_string(out: _Issues, prop: dict[object, object], base: str) -> None:
    """``StringSchema`` or one of the single-select enum schemas."""
    _check_annotations(out, prop, base)
    if "enum" in prop or "oneOf" in prop or "enumNames" in prop:
        _check_single_select(out, prop, base)
        _check_extra_keys(out, prop, base, _STRING_ENUM, why=" on an enum schema")
    else:
        for key in ("minLength", "maxLength"):
            _check_count(out, prop, base, key)
        _check_bound_pair(out, prop, base)
        if "format" in prop:
            fmt = prop["format"]
            if not isinstance(fmt, str) or fmt not in STRING_FORMATS:
                out.add(
                    "unsupported_format",
                    _ptr(base, "format"),
                    "format is not one of email, uri, date, date-time",
                )
        _check_extra_keys(out, prop, base, _STRING_PLAIN, why=" on a string schema")
    _check_default(out, prop, base)


def _check_single_select(out: _Issues, prop: dict[object, object], base: str) -> None:
    """``enum`` (with optional legacy ``enumNames``) or titled ``oneOf``, not both."""
    has_enum, has_one_of = "enum" in prop, "oneOf" in prop
    if has_enum and has_one_of:
        out.add("bad_enum", _ptr(base, "oneOf"), "enum and oneOf are both present")
    if has_enum:
        _check_enum_list(out, prop["enum"], _ptr(base, "enum"))
    if has_one_of:
        _check_options(out, prop["oneOf"], _ptr(base, "oneOf"), "oneOf")
    if "enumNames" in prop:
        _check_enum_names(out, prop, base)


def _check_enum_list(out: _Issues, values: object, base: str) -> None:
    """An ``enum``: a non-empty list of distinct strings."""
    if not isinstance(values, list) or not values:
        out.add("bad_enum", base, "enum is not a non-empty list")
        return
    seen: set[str] = set()
    for index, value in enumerate(values):
        if out.full:
            return
        if not isinstance(value, str):
            out.add("bad_enum", _ptr(base, index), "an enum member is not a string")
        elif value in seen:
            out.add("bad_enum", _ptr(base, index), "an enum member appears twice")
        else:
            seen.add(value)


def _check_options(out: _Issues, options: object, base: str, keyword: str) -> None:
    """Titled options ``[{const, title}]`` of ``oneOf`` or ``items.anyOf``."""
    if not isinstance(options, list) or not options:
        out.add("bad_enum", base, f"{keyword} is not a non-empty list")
        return
    seen: set[str] = set()
    for index, option in enumerate(options):
        if out.full:
            return
        pointer = _ptr(base, index)
        if not isinstance(option, dict):
            out.add("bad_enum", pointer, f"a {keyword} option is not a JSON object")
            continue
        const = option.get("const")
        if not isinstance(const, str):
            out.add("bad_enum", _ptr(pointer, "const"), f"a {keyword} option has no string const")
        elif const in seen:
            out.add("bad_enum", _ptr(pointer, "const"), f"a {keyword} const appears twice")
        else:
            seen.add(const)
        if not isinstance(option.get("title"), str):
            out.add("bad_enum", _ptr(pointer, "title"), f"a {keyword} option has no string title")
        _check_extra_keys(out, option, pointer, _OPTION_KEYS, why=f" in a {keyword} option")


def _check_enum_names(out: _Issues, prop: dict[object, object], base: str) -> None:
    """Legacy ``enumNames``: strings, one per ``enum`` member, and only beside ``enum``."""
    names, pointer = prop["enumNames"], _ptr(base, "enumNames")
    if "enum" not in prop:
        out.add("bad_enum", pointer, "enumNames is present without enum")
        return
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        out.add("bad_enum", pointer, "enumNames is not a list of strings")
        return
    values = prop["enum"]
    if isinstance(values, list) and len(names) != len(values):
        out.add("enum_names_mismatch", pointer, "enumNames and enum differ in length")


def _check_number(out: _Issues, prop: dict[object, object], base: str) -> None:
    """``NumberSchema`` (``number`` or ``integer``); the default's type is checked by value."""
    _check_annotations(out, prop, base)
    for key in ("minimum", "maximum"):
        if key in prop and not _is_number(prop[key]):
            out.add("bad_bound", _ptr(base, key), f"{key} is not a number")
    _check_bound_pair(out, prop, base)
    _check_extra_keys(out, prop, base, _NUMBER, why=" on a number schema")
    _check_default(out, prop, base)


def _check_boolean(out: _Issues, prop: dict[object, object], base: str) -> None:
    """``BooleanSchema``."""
    _check_annotations(out, prop, base)
    _check_extra_keys(out, prop, base, _BOOLEAN, why=" on a boolean schema")
    _check_default(out, prop, base)


def _check_array(out: _Issues, prop: dict[object, object], base: str) -> None:
    """The multi-select enum schemas: ``items`` of ``{type: string, enum}`` or ``{anyOf}``."""
    _check_annotations(out, prop, base)
    for key in ("minItems", "maxItems"):
        _check_count(out, prop, base, key)
    _check_bound_pair(out, prop, base)
    _check_items(out, prop.get("items"), _ptr(base, "items"), present="items" in prop)
    _check_extra_keys(out, prop, base, _ARRAY, why=" on a multi-select schema")
    _check_default(out, prop, base)


def _check_items(out: _Issues, items: object, base: str, *, present: bool) -> None:
    """``items`` of a multi-select: string enum options, titled or not."""
    if not present:
        out.add("array_items", base, "an array needs items listing its options")
        return
    if not isinstance(items, dict):
        out.add("array_items", base, "items is not a JSON object")
        return
    kind = items.get("type")
    if kind == "object" or "properties" in items:
        out.add("array_of_objects", base, "arrays of objects are not allowed")
    elif "anyOf" in items and kind in (None, "string"):
        _check_options(out, items["anyOf"], _ptr(base, "anyOf"), "anyOf")
        _check_extra_keys(out, items, base, {"anyOf", "type"}, why=" in titled items")
    elif kind == "string" and "enum" in items:
        _check_enum_list(out, items["enum"], _ptr(base, "enum"))
        _check_extra_keys(out, items, base, {"type", "enum"}, why=" in enum items")
    elif any(isinstance(k, str) and k in _REF_KEYWORDS for k in items):
        _check_extra_keys(out, items, base, {"type"})
    else:
        out.add("array_items", base, "items must be string enum options (enum or anyOf)")


def _check_default(out: _Issues, prop: dict[object, object], base: str) -> None:
    """A ``default`` must itself be an answer the property accepts."""
    if "default" not in prop:
        return
    local = _Issues()
    _check_value(local, prop["default"], prop, "", "the default")
    if local.items:
        first = local.items[0]
        out.add("bad_default", _ptr(base, "default"), first.detail)


# --------------------------------------------------------------------------------------------
# EG108: era_feature_issues
# --------------------------------------------------------------------------------------------


def era_feature_issues(params: object, era: str) -> list[SchemaIssue]:
    """Report ``elicitation/create`` params features the era lacks (EG108).

    ``params`` is the request's ``params`` object; pointers are relative to it. 2025-11-25 has
    every feature. For 2025-11-25 and 2026-07-28 ``elicitationId`` on URL requests belongs to
    the URL-request rule (EG107), not here.
    """
    out = _Issues()
    if not isinstance(params, dict):
        return out.items
    era = elicitation_era(era)
    if era == V2025_06_18:
        _era_2025_06_18(out, params)
    elif era == V2026_07_28:
        _era_2026_07_28(out, params)
    return out.items


def _era_2025_06_18(out: _Issues, params: dict[object, object]) -> None:
    """2025-06-18: no modes, no ids, no tasks, no titled or multi-select enums, no defaults."""
    if "mode" in params:
        mode = params["mode"]
        if mode == "url":
            out.add("url_mode", "/mode", "URL mode does not exist in 2025-06-18")
        elif mode == "form":
            out.add("mode_field", "/mode", "mode does not exist in 2025-06-18", "low")
        else:
            out.add("mode_field", "/mode", "mode does not exist in 2025-06-18")
    if "elicitationId" in params:
        out.add("elicitation_id", "/elicitationId", "elicitationId does not exist in 2025-06-18")
    if "task" in params:
        out.add("task_field", "/task", "task-augmented requests do not exist in 2025-06-18")
    schema = params.get("requestedSchema")
    if not isinstance(schema, dict):
        return
    if "$schema" in schema:
        out.add(
            "schema_keyword", "/requestedSchema/$schema", "$schema does not exist in 2025-06-18"
        )
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for key, prop in properties.items():
            if out.full:
                return
            if isinstance(prop, dict):
                _era_property_2025_06_18(out, key, prop, _ptr("/requestedSchema/properties", key))


def _era_property_2025_06_18(
    out: _Issues, key: object, prop: dict[object, object], base: str
) -> None:
    """One property on 2025-06-18: titled enums, multi-select and non-boolean defaults."""
    kind = prop.get("type")
    if "oneOf" in prop and kind == "string":
        out.add("titled_enum", _ptr(base, "oneOf"), "titled enums (oneOf) arrived in 2025-11-25")
    if kind == "array":
        out.add(
            "multi_select_enum",
            _ptr(base, "type"),
            f"property {_name(key)} is a multi-select enum, which arrived in 2025-11-25",
        )
    if "default" in prop and kind != "boolean":
        out.add(
            "non_boolean_default",
            _ptr(base, "default"),
            "2025-06-18 allows default only on boolean properties",
        )


def _era_2026_07_28(out: _Issues, params: dict[object, object]) -> None:
    """2026-07-28: an ``ElicitRequest``'s params have no ``task`` and no ``_meta`` (a.1)."""
    if "task" in params:
        out.add("task_field", "/task", "2026-07-28 elicitation params have no task")
    if "_meta" in params:
        out.add("meta_field", "/_meta", "2026-07-28 elicitation params have no _meta")


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


# --------------------------------------------------------------------------------------------
# EG110: content_issues
# --------------------------------------------------------------------------------------------


def content_issues(content: object, requested_schema: object, era: str) -> list[SchemaIssue]:
    """Report where accepted ``content`` does not match ``requestedSchema`` (EG110).

    Pointers are relative to ``content`` (``/age``). When ``content`` is not an object or the
    schema has no ``properties`` object nothing is reported: EG109 and EG106 cover those.
    Properties whose schema is outside the subset are not checked beyond presence.
    """
    out = _Issues()
    del era  # the same in every era: arrays on 2025-06-18 are EG109's business
    if not isinstance(content, dict) or not isinstance(requested_schema, dict):
        return out.items
    properties = requested_schema.get("properties")
    if not isinstance(properties, dict):
        return out.items
    _check_required_present(out, content, requested_schema.get("required"), properties)
    for key, value in content.items():
        if out.full:
            break
        pointer = _ptr("", key)
        if key not in properties:
            out.add("unknown_property", pointer, f"{_name(key)} is not in requestedSchema")
            continue
        prop = properties[key]
        if isinstance(prop, dict):
            _check_value(out, value, prop, pointer, f"{_name(key)}")
    return out.items


def _check_required_present(
    out: _Issues, content: dict[object, object], required: object, properties: dict[object, object]
) -> None:
    """Every required property must be a key of ``content``.

    A required name that is not a property is EG106's finding; demanding it here would
    contradict ``unknown_property``.
    """
    if not isinstance(required, list):
        return
    seen: set[str] = set()
    for name in required:
        if out.full:
            return
        if (
            isinstance(name, str)
            and name in properties
            and name not in seen
            and name not in content
        ):
            seen.add(name)
            out.add("required_missing", _ptr("", name), f"required {_name(name)} is missing")


def _check_value(
    out: _Issues, value: object, prop: dict[object, object], pointer: str, label: str
) -> None:
    """One value against one property schema; ``label`` names it in details."""
    kind = prop.get("type")
    if kind == "string":
        _value_string(out, value, prop, pointer, label)
    elif kind in ("number", "integer"):
        _value_number(out, value, prop, pointer, label, integer=kind == "integer")
    elif kind == "boolean":
        if not isinstance(value, bool):
            out.add("type_mismatch", pointer, f"{label} is {_type_name(value)}, not a boolean")
    elif kind == "array":
        _value_array(out, value, prop, pointer, label)


def _string_options(prop: Mapping[object, object]) -> list[str] | None:
    """The allowed strings of a single-select (``enum`` or ``oneOf`` consts), else None."""
    if "enum" in prop:
        values = prop["enum"]
        return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []
    if "oneOf" in prop:
        return _consts(prop["oneOf"])
    return None


def _item_options(prop: Mapping[object, object]) -> list[str] | None:
    """The allowed strings of a multi-select (``items.enum`` or ``items.anyOf``), else None."""
    items = prop.get("items")
    if not isinstance(items, dict):
        return None
    if "enum" in items:
        values = items["enum"]
        return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []
    if "anyOf" in items:
        return _consts(items["anyOf"])
    return None


def _consts(options: object) -> list[str]:
    """The string ``const`` of each titled option."""
    if not isinstance(options, list):
        return []
    return [o["const"] for o in options if isinstance(o, dict) and isinstance(o.get("const"), str)]


def _value_string(
    out: _Issues, value: object, prop: dict[object, object], pointer: str, label: str
) -> None:
    """A string answer: type, enum membership, length in code points and format."""
    if not isinstance(value, str):
        out.add("type_mismatch", pointer, f"{label} is {_type_name(value)}, not a string")
        return
    options = _string_options(prop)
    if options is not None:
        if value not in options:
            out.add("enum_mismatch", pointer, f"{label} is not one of the allowed options")
        return
    min_len, max_len = prop.get("minLength"), prop.get("maxLength")
    if _is_number(min_len) and len(value) < min_len:
        out.add("too_short", pointer, f"{label} is shorter than minLength {_num(min_len)}")
    if _is_number(max_len) and len(value) > max_len:
        out.add("too_long", pointer, f"{label} is longer than maxLength {_num(max_len)}")
    fmt = prop.get("format")
    if isinstance(fmt, str) and fmt in _FORMAT_CHECKS and not _FORMAT_CHECKS[fmt](value):
        out.add("format_mismatch", pointer, f"{label} is not a valid {fmt}")


def _value_number(
    out: _Issues,
    value: object,
    prop: dict[object, object],
    pointer: str,
    label: str,
    *,
    integer: bool,
) -> None:
    """A number answer: type (integral for ``integer``), ``minimum`` and ``maximum``."""
    if not _is_number(value):
        wanted = "an integer" if integer else "a number"
        out.add("type_mismatch", pointer, f"{label} is {_type_name(value)}, not {wanted}")
        return
    if integer and not _is_integral(value):
        out.add("type_mismatch", pointer, f"{label} is not an integer")
        return
    low, high = prop.get("minimum"), prop.get("maximum")
    if _is_number(low) and value < low:
        out.add("below_minimum", pointer, f"{label} is below minimum {_num(low)}")
    if _is_number(high) and value > high:
        out.add("above_maximum", pointer, f"{label} is above maximum {_num(high)}")


def _value_array(
    out: _Issues, value: object, prop: dict[object, object], pointer: str, label: str
) -> None:
    """A multi-select answer: a list of distinct allowed strings within the item bounds."""
    if not isinstance(value, list):
        out.add("type_mismatch", pointer, f"{label} is {_type_name(value)}, not an array")
        return
    options = _item_options(prop)
    seen: set[str] = set()
    for index, item in enumerate(value):
        if out.full:
            return
        item_pointer = _ptr(pointer, index)
        if not isinstance(item, str):
            out.add("type_mismatch", item_pointer, f"an item of {label} is not a string")
        elif options is not None and item not in options:
            out.add("enum_mismatch", item_pointer, f"an item of {label} is not an allowed option")
        elif item in seen:
            out.add("duplicate_item", item_pointer, f"{label} selects the same option twice")
        else:
            seen.add(item)
    min_items, max_items = prop.get("minItems"), prop.get("maxItems")
    if _is_number(min_items) and len(value) < min_items:
        out.add("too_few_items", pointer, f"{label} has fewer than minItems {_num(min_items)}")
    if _is_number(max_items) and len(value) > max_items:
        out.add("too_many_items", pointer, f"{label} has more than maxItems {_num(max_items)}")


# --------------------------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------------------------

_EMAIL_RE: Final = re.compile(
    r"[^@\s\x00-\x1f\x7f]+@(?:\[[^\[\]\s]+\]|[^@\s\x00-\x1f\x7f.\[\]]+(?:\.[^@\s\x00-\x1f\x7f.\[\]]+)*)"
)
_URI_RE: Final = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*"
)
_DATE_RE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATE_TIME_RE: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|[+\-]([0-9]{2}):([0-9]{2}))"
)
_EMAIL_MAX: Final = 320


def _valid_date(year: str, month: str, day: str) -> bool:
    """A real calendar date (leap years included)."""
    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def _is_email(value: str) -> bool:
    """Light syntax: one ``@``, a non-empty local part, dotted labels or an address literal."""
    return len(value) <= _EMAIL_MAX and _EMAIL_RE.fullmatch(value) is not None


def _is_uri(value: str) -> bool:
    """An absolute URI (RFC 3986): a scheme, then only URI characters or ``%XX`` escapes."""
    return _URI_RE.fullmatch(value) is not None


def _is_date(value: str) -> bool:
    """RFC 3339 ``full-date``: ``YYYY-MM-DD`` and a valid calendar date."""
    match = _DATE_RE.fullmatch(value)
    return match is not None and _valid_date(*match.group(1, 2, 3))


def _is_date_time(value: str) -> bool:
    """RFC 3339 ``date-time``: date, ``T``, time with seconds, and ``Z`` or an offset."""
    match = _DATE_TIME_RE.fullmatch(value)
    if match is None or not _valid_date(*match.group(1, 2, 3)):
        return False
    hour, minute, second = (int(g) for g in match.group(4, 5, 6))
    if hour > 23 or minute > 59 or second > 60:  # 60: a leap second
        return False
    off_hour, off_minute = match.group(7, 8)
    return off_hour is None or (int(off_hour) <= 23 and int(off_minute) <= 59)


_FORMAT_CHECKS: Final = {
    "email": _is_email,
    "uri": _is_uri,
    "date": _is_date,
    "date-time": _is_date_time,
}
