"""EG108: request features the negotiated protocol era does not have."""

from __future__ import annotations

from elicitguard.checks.schema._issues import SchemaIssue, _Issues, _name, _ptr
from elicitguard.protocol.versions import V2025_06_18, V2026_07_28, elicitation_era

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
