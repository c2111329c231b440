"""EG106: where a ``requestedSchema`` leaves elicitation's restricted schema subset."""

from __future__ import annotations

from collections.abc import Iterable

from elicitguard.checks.schema._content import _check_value
from elicitguard.checks.schema._issues import (
    SchemaIssue,
    _is_count,
    _is_number,
    _Issues,
    _name,
    _ptr,
)
from elicitguard.checks.schema._keywords import (
    _ANNOTATIONS,
    _ARRAY,
    _BOOLEAN,
    _BOUND_PAIRS,
    _COMPOSITION_KEYWORDS,
    _NUMBER,
    _OPTION_KEYS,
    _REF_KEYWORDS,
    _STRING_ENUM,
    _STRING_PLAIN,
    _TOP_ALLOWED,
    STRING_FORMATS,
)
from elicitguard.protocol.versions import V2025_06_18, elicitation_era

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
