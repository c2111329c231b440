"""EG110: accepted ``content`` checked against the ``requestedSchema`` it answers."""

from __future__ import annotations

from collections.abc import Mapping

from elicitguard.checks.schema._formats import _FORMAT_CHECKS
from elicitguard.checks.schema._issues import (
    SchemaIssue,
    _is_integral,
    _is_number,
    _Issues,
    _name,
    _num,
    _ptr,
    _type_name,
)

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
