"""Tests for elicitguard.checks.schema: the per-era elicitation schema and result checks."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elicitguard.base.pointer import escape_pointer as json_pointer_escape
from elicitguard.checks.schema import (
    KINDS,
    MAX_ISSUES,
    SchemaIssue,
    content_issues,
    era_feature_issues,
    result_shape_issues,
    schema_subset_issues,
)
from elicitguard.protocol.versions import ELICITATION_ERAS as ERAS
from elicitguard.protocol.versions import LATEST_ERA, is_known_era
from elicitguard.protocol.versions import elicitation_era as normalize_era

OLD, MID, NEW = ERAS  # 2025-06-18, 2025-11-25, 2026-07-28


def kp(issues: list[SchemaIssue]) -> set[tuple[str, str]]:
    """(kind, pointer) pairs, the part of an issue a table pins down."""
    return {(i.kind, i.pointer) for i in issues}


def obj(**props: Any) -> dict[str, Any]:
    """A requestedSchema with the given properties."""
    return {"type": "object", "properties": props}


def one(prop: Any) -> dict[str, Any]:
    """A requestedSchema with a single property ``p``."""
    return {"type": "object", "properties": {"p": prop}}


P = "/properties/p"
TITLED = [{"const": "v1", "title": "One"}, {"const": "v2", "title": "Two"}]

# ---------------------------------------------------------------------------------------------
# Valid schemas
# ---------------------------------------------------------------------------------------------

#: Every primitive of PROTOCOL.md a.4 as 2025-11-25 and 2026-07-28 allow it.
FULL_PRIMITIVES: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "title": "Name",
            "description": "Your name",
            "minLength": 1,
            "maxLength": 50,
            "default": "Ann",
        },
        "email": {"type": "string", "format": "email", "default": "a@example.com"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date", "default": "2000-02-29"},
        "at": {"type": "string", "format": "date-time"},
        "score": {"type": "number", "minimum": 0, "maximum": 100.5, "default": 95.5},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150, "default": 30},
        "ok": {"type": "boolean", "description": "Agree?", "default": True},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "size": {"type": "string", "title": "Size", "oneOf": TITLED, "default": "v2"},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "a"},
        "tags": {
            "type": "array",
            "title": "Tags",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["x", "y", "z"]},
            "default": ["x"],
        },
        "picks": {"type": "array", "items": {"anyOf": TITLED}, "default": ["v1", "v2"]},
    },
    "required": ["name", "age"],
}

#: Every primitive 2025-06-18 has: no string or number defaults, no titled or multi-select.
OLD_PRIMITIVES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 50},
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "score": {"type": "number", "minimum": 0.5, "maximum": 9},
        "age": {"type": "integer", "minimum": 0},
        "ok": {"type": "boolean", "default": False},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
        "plain": {"type": "string", "enum": ["a", "b"]},
    },
    "required": ["name"],
}

#: The conformance suite's elicitation-sep1330-enums schema (all five enum shapes).
SEP1330: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}

#: The conformance suite's elicitation-sep1034-defaults schema.
SEP1034: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
    "required": ["name", "age", "score", "status", "verified"],
}

VALID_SCHEMAS = [
    # the full primitive set with defaults and $schema, on the eras that have all of it
    pytest.param(FULL_PRIMITIVES, (MID, NEW), id="full-primitives"),
    # the 2025-06-18 primitive set is valid in every era
    pytest.param(OLD_PRIMITIVES, ERAS, id="old-primitives"),
    # sep1330: untitled single, titled single, legacy enumNames, untitled multi, titled multi
    pytest.param(SEP1330, (MID, NEW), id="sep1330-enums"),
    # sep1034: defaults on every primitive
    pytest.param(SEP1034, (MID, NEW), id="sep1034-defaults"),
    # empty properties and no required: a confirmation form
    pytest.param({"type": "object", "properties": {}}, ERAS, id="empty-properties"),
    # title and description at the top level (the mcp SDK's pydantic schemas carry a title)
    pytest.param(
        {"type": "object", "title": "Model", "description": "d", "properties": {}},
        ERAS,
        id="top-annotations",
    ),
    # integer bounds written as 3.0 count as integers
    pytest.param(one({"type": "string", "minLength": 3.0, "maxLength": 3}), ERAS, id="float-int"),
    # titled multi-select items may repeat type: string beside anyOf
    pytest.param(
        one({"type": "array", "items": {"type": "string", "anyOf": TITLED}}), (MID, NEW), id="ti"
    ),
]


@pytest.mark.parametrize(("schema", "eras"), VALID_SCHEMAS)
def test_valid_schema_has_no_subset_issues(schema: dict[str, Any], eras: tuple[str, ...]) -> None:
    """A schema inside the subset gives no EG106 issue in any era."""
    for era in ERAS:
        assert schema_subset_issues(schema, era) == []


@pytest.mark.parametrize(("schema", "eras"), VALID_SCHEMAS)
def test_valid_schema_has_no_era_issues_in_its_eras(
    schema: dict[str, Any], eras: tuple[str, ...]
) -> None:
    """A schema valid for an era gives no EG108 issue there, in either mode spelling."""
    for era in eras:
        assert era_feature_issues({"message": "m", "requestedSchema": schema}, era) == []
        if era != OLD:
            params = {"mode": "form", "message": "m", "requestedSchema": schema}
            assert era_feature_issues(params, era) == []


def test_full_primitives_on_old_era_are_era_features() -> None:
    """Titled, multi-select, defaults and $schema of the full set are EG108 on 2025-06-18."""
    found = kp(era_feature_issues({"message": "m", "requestedSchema": FULL_PRIMITIVES}, OLD))
    base = "/requestedSchema/properties"
    assert found == {
        ("schema_keyword", "/requestedSchema/$schema"),
        ("non_boolean_default", f"{base}/name/default"),
        ("non_boolean_default", f"{base}/email/default"),
        ("non_boolean_default", f"{base}/born/default"),
        ("non_boolean_default", f"{base}/score/default"),
        ("non_boolean_default", f"{base}/age/default"),
        ("non_boolean_default", f"{base}/color/default"),
        ("non_boolean_default", f"{base}/size/default"),
        ("non_boolean_default", f"{base}/legacy/default"),
        ("non_boolean_default", f"{base}/tags/default"),
        ("non_boolean_default", f"{base}/picks/default"),
        ("titled_enum", f"{base}/size/oneOf"),
        ("multi_select_enum", f"{base}/tags/type"),
        ("multi_select_enum", f"{base}/picks/type"),
    }


def test_sep1330_on_old_era() -> None:
    """On 2025-06-18 the sep1330 titled single and both multi-selects are era features."""
    found = kp(era_feature_issues({"message": "m", "requestedSchema": SEP1330}, OLD))
    base = "/requestedSchema/properties"
    assert found == {
        ("titled_enum", f"{base}/titledSingle/oneOf"),
        ("multi_select_enum", f"{base}/untitledMulti/type"),
        ("multi_select_enum", f"{base}/titledMulti/type"),
    }


# ---------------------------------------------------------------------------------------------
# EG106: schema_subset_issues, the same in every era (apart from $schema)
# ---------------------------------------------------------------------------------------------

SUBSET_CASES = [
    # not an object at all
    pytest.param(["type", "object"], {("not_object", "")}, id="not-object-list"),
    # null instead of a schema
    pytest.param(None, {("not_object", "")}, id="not-object-null"),
    # top-level type is not "object"
    pytest.param({"type": "string", "properties": {}}, {("not_object", "/type")}, id="top-type"),
    # top-level type missing
    pytest.param({"properties": {}}, {("not_object", "/type")}, id="top-type-missing"),
    # properties missing
    pytest.param({"type": "object"}, {("properties_not_object", "/properties")}, id="no-props"),
    # properties is a list
    pytest.param(
        {"type": "object", "properties": []},
        {("properties_not_object", "/properties")},
        id="props-list",
    ),
    # a property schema that is a string
    pytest.param(one("string"), {("property_not_object", P)}, id="property-not-object"),
    # required is a string
    pytest.param(
        {**one({"type": "string"}), "required": "p"},
        {("required_not_list", "/required")},
        id="required-string",
    ),
    # a required entry that is a number
    pytest.param(
        {**one({"type": "string"}), "required": [1]},
        {("required_not_list", "/required/0")},
        id="required-entry-number",
    ),
    # required names a property twice
    pytest.param(
        {**one({"type": "string"}), "required": ["p", "p"]},
        {("required_duplicate", "/required/1")},
        id="required-duplicate",
    ),
    # required names an unknown property
    pytest.param(
        {**one({"type": "string"}), "required": ["q"]},
        {("required_unknown_property", "/required/0")},
        id="required-unknown",
    ),
    # a nested object property
    pytest.param(
        one({"type": "object", "properties": {"a": {"type": "string"}}}),
        {("nested_object", P)},
        id="nested-object",
    ),
    # properties without a type is still a nested object
    pytest.param(one({"properties": {}}), {("nested_object", P)}, id="nested-untyped"),
    # an array of objects
    pytest.param(
        one({"type": "array", "items": {"type": "object", "properties": {}}}),
        {("array_of_objects", f"{P}/items")},
        id="array-of-objects",
    ),
    # array items with properties but no type
    pytest.param(
        one({"type": "array", "items": {"properties": {}}}),
        {("array_of_objects", f"{P}/items")},
        id="array-of-untyped-objects",
    ),
    # an array without items
    pytest.param(one({"type": "array"}), {("array_items", f"{P}/items")}, id="array-no-items"),
    # free-text string array (no enum)
    pytest.param(
        one({"type": "array", "items": {"type": "string"}}),
        {("array_items", f"{P}/items")},
        id="array-free-strings",
    ),
    # an array of numbers
    pytest.param(
        one({"type": "array", "items": {"type": "number"}}),
        {("array_items", f"{P}/items")},
        id="array-numbers",
    ),
    # array items as a list (tuple validation)
    pytest.param(
        one({"type": "array", "items": [{"type": "string"}]}),
        {("array_items", f"{P}/items")},
        id="array-items-list",
    ),
    # items with enum but no type
    pytest.param(
        one({"type": "array", "items": {"enum": ["a"]}}),
        {("array_items", f"{P}/items")},
        id="array-enum-no-type",
    ),
    # a $ref property
    pytest.param(one({"$ref": "#/$defs/x"}), {("ref", f"{P}/$ref")}, id="ref-property"),
    # $defs at the top level
    pytest.param(
        {"type": "object", "properties": {}, "$defs": {}}, {("ref", "/$defs")}, id="top-defs"
    ),
    # $ref beside a type
    pytest.param(
        one({"type": "string", "$ref": "#/x"}), {("ref", f"{P}/$ref")}, id="ref-beside-type"
    ),
    # $ref in array items
    pytest.param(
        one({"type": "array", "items": {"$ref": "#/x"}}),
        {("ref", f"{P}/items/$ref")},
        id="ref-in-items",
    ),
    # allOf property
    pytest.param(one({"allOf": [{"type": "string"}]}), {("composition", f"{P}/allOf")}, id="allof"),
    # if/then beside a type
    pytest.param(
        one({"type": "string", "if": {}, "then": {}}),
        {("composition", f"{P}/if"), ("composition", f"{P}/then")},
        id="if-then",
    ),
    # pydantic's Optional[str]: anyOf with null
    pytest.param(
        one({"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "X"}),
        {("composition", f"{P}/anyOf")},
        id="optional-anyof",
    ),
    # oneOf on a number
    pytest.param(
        one({"type": "number", "oneOf": [{"const": 1}]}),
        {("composition", f"{P}/oneOf")},
        id="oneof-number",
    ),
    # allOf at the top level
    pytest.param(
        {"type": "object", "properties": {}, "allOf": []},
        {("composition", "/allOf")},
        id="top-allof",
    ),
    # type null
    pytest.param(one({"type": "null"}), {("unsupported_type", f"{P}/type")}, id="type-null"),
    # a list of types
    pytest.param(
        one({"type": ["string", "null"]}), {("unsupported_type", f"{P}/type")}, id="type-list"
    ),
    # an unknown type name
    pytest.param(one({"type": "date"}), {("unsupported_type", f"{P}/type")}, id="type-unknown"),
    # type not a string
    pytest.param(one({"type": 3}), {("unsupported_type", f"{P}/type")}, id="type-number"),
    # no type at all
    pytest.param(one({"title": "t"}), {("unsupported_type", P)}, id="type-missing"),
    # format ipv4
    pytest.param(
        one({"type": "string", "format": "ipv4"}),
        {("unsupported_format", f"{P}/format")},
        id="format-ipv4",
    ),
    # format not a string
    pytest.param(
        one({"type": "string", "format": 1}),
        {("unsupported_format", f"{P}/format")},
        id="format-number",
    ),
    # pattern is its own (low) kind
    pytest.param(
        one({"type": "string", "pattern": "^a$"}), {("pattern", f"{P}/pattern")}, id="pat"
    ),
    # writeOnly
    pytest.param(
        one({"type": "string", "writeOnly": True}),
        {("unknown_keyword", f"{P}/writeOnly")},
        id="writeonly",
    ),
    # readOnly on a number
    pytest.param(
        one({"type": "number", "readOnly": True}),
        {("unknown_keyword", f"{P}/readOnly")},
        id="readonly",
    ),
    # examples on a boolean
    pytest.param(
        one({"type": "boolean", "examples": [True]}),
        {("unknown_keyword", f"{P}/examples")},
        id="examples",
    ),
    # const on a string
    pytest.param(
        one({"type": "string", "const": "x"}), {("unknown_keyword", f"{P}/const")}, id="const"
    ),
    # exclusiveMinimum on an integer
    pytest.param(
        one({"type": "integer", "exclusiveMinimum": 0}),
        {("unknown_keyword", f"{P}/exclusiveMinimum")},
        id="exclusive-minimum",
    ),
    # format on a number
    pytest.param(
        one({"type": "number", "format": "email"}),
        {("unknown_keyword", f"{P}/format")},
        id="format-on-number",
    ),
    # minLength on an enum schema
    pytest.param(
        one({"type": "string", "enum": ["a"], "minLength": 1}),
        {("unknown_keyword", f"{P}/minLength")},
        id="minlength-on-enum",
    ),
    # uniqueItems on a multi-select
    pytest.param(
        one({"type": "array", "uniqueItems": True, "items": {"type": "string", "enum": ["a"]}}),
        {("unknown_keyword", f"{P}/uniqueItems")},
        id="uniqueitems",
    ),
    # enumNames inside multi-select items
    pytest.param(
        one({"type": "array", "items": {"type": "string", "enum": ["a"], "enumNames": ["A"]}}),
        {("unknown_keyword", f"{P}/items/enumNames")},
        id="enumnames-in-items",
    ),
    # an extra key in a titled option
    pytest.param(
        one({"type": "string", "oneOf": [{"const": "a", "title": "A", "description": "d"}]}),
        {("unknown_keyword", f"{P}/oneOf/0/description")},
        id="option-extra-key",
    ),
    # additionalProperties at the top level
    pytest.param(
        {"type": "object", "properties": {}, "additionalProperties": False},
        {("unknown_keyword", "/additionalProperties")},
        id="top-additional-properties",
    ),
    # properties on a string property
    pytest.param(
        one({"type": "string", "properties": {}}),
        {("unknown_keyword", f"{P}/properties")},
        id="properties-on-string",
    ),
    # a title that is not a string
    pytest.param(
        one({"type": "string", "title": 5}), {("bad_keyword_value", f"{P}/title")}, id="title-num"
    ),
    # a top-level description that is not a string
    pytest.param(
        {"type": "object", "properties": {}, "description": []},
        {("bad_keyword_value", "/description")},
        id="top-description",
    ),
    # negative minLength
    pytest.param(
        one({"type": "string", "minLength": -1}), {("bad_bound", f"{P}/minLength")}, id="neg-min"
    ),
    # fractional maxLength
    pytest.param(
        one({"type": "string", "maxLength": 1.5}), {("bad_bound", f"{P}/maxLength")}, id="frac-max"
    ),
    # minimum as a string
    pytest.param(
        one({"type": "number", "minimum": "3"}), {("bad_bound", f"{P}/minimum")}, id="min-string"
    ),
    # maximum as a boolean
    pytest.param(
        one({"type": "integer", "maximum": True}), {("bad_bound", f"{P}/maximum")}, id="max-bool"
    ),
    # minItems as a boolean
    pytest.param(
        one({"type": "array", "minItems": True, "items": {"type": "string", "enum": ["a"]}}),
        {("bad_bound", f"{P}/minItems")},
        id="minitems-bool",
    ),
    # minLength above maxLength
    pytest.param(
        one({"type": "string", "minLength": 5, "maxLength": 2}),
        {("bound_conflict", f"{P}/minLength")},
        id="length-conflict",
    ),
    # minimum above maximum
    pytest.param(
        one({"type": "number", "minimum": 5, "maximum": 2}),
        {("bound_conflict", f"{P}/minimum")},
        id="number-conflict",
    ),
    # minItems above maxItems
    pytest.param(
        one(
            {"type": "array", "minItems": 3, "maxItems": 1, "items": {"anyOf": TITLED}},
        ),
        {("bound_conflict", f"{P}/minItems")},
        id="items-conflict",
    ),
    # a non-string enum member
    pytest.param(
        one({"type": "string", "enum": ["a", 1]}), {("bad_enum", f"{P}/enum/1")}, id="enum-int"
    ),
    # an empty enum
    pytest.param(one({"type": "string", "enum": []}), {("bad_enum", f"{P}/enum")}, id="enum-empty"),
    # enum not a list
    pytest.param(one({"type": "string", "enum": "a"}), {("bad_enum", f"{P}/enum")}, id="enum-str"),
    # a duplicate enum member
    pytest.param(
        one({"type": "string", "enum": ["a", "a"]}), {("bad_enum", f"{P}/enum/1")}, id="enum-dup"
    ),
    # enum and oneOf together
    pytest.param(
        one({"type": "string", "enum": ["v1"], "oneOf": TITLED}),
        {("bad_enum", f"{P}/oneOf")},
        id="enum-and-oneof",
    ),
    # a titled option without a title
    pytest.param(
        one({"type": "string", "oneOf": [{"const": "a"}]}),
        {("bad_enum", f"{P}/oneOf/0/title")},
        id="option-no-title",
    ),
    # a titled option with a numeric const
    pytest.param(
        one({"type": "string", "oneOf": [{"const": 1, "title": "One"}]}),
        {("bad_enum", f"{P}/oneOf/0/const")},
        id="option-number-const",
    ),
    # a titled option that is a string
    pytest.param(
        one({"type": "string", "oneOf": ["a"]}), {("bad_enum", f"{P}/oneOf/0")}, id="option-str"
    ),
    # anyOf of a titled multi-select is not a list
    pytest.param(
        one({"type": "array", "items": {"anyOf": {}}}),
        {("bad_enum", f"{P}/items/anyOf")},
        id="anyof-not-list",
    ),
    # enumNames without enum
    pytest.param(
        one({"type": "string", "enumNames": ["A"]}),
        {("bad_enum", f"{P}/enumNames")},
        id="enumnames-alone",
    ),
    # enumNames holding a number
    pytest.param(
        one({"type": "string", "enum": ["a"], "enumNames": [1]}),
        {("bad_enum", f"{P}/enumNames")},
        id="enumnames-number",
    ),
    # enumNames shorter than enum
    pytest.param(
        one({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}),
        {("enum_names_mismatch", f"{P}/enumNames")},
        id="enumnames-length",
    ),
    # a string default that is a number
    pytest.param(
        one({"type": "string", "default": 3}), {("bad_default", f"{P}/default")}, id="default-type"
    ),
    # an integer default with a fraction
    pytest.param(
        one({"type": "integer", "default": 1.5}), {("bad_default", f"{P}/default")}, id="def-frac"
    ),
    # a boolean default spelled as a string
    pytest.param(
        one({"type": "boolean", "default": "true"}), {("bad_default", f"{P}/default")}, id="d-b"
    ),
    # an enum default outside the enum
    pytest.param(
        one({"type": "string", "enum": ["a"], "default": "b"}),
        {("bad_default", f"{P}/default")},
        id="default-not-member",
    ),
    # a titled default outside the consts
    pytest.param(
        one({"type": "string", "oneOf": TITLED, "default": "v9"}),
        {("bad_default", f"{P}/default")},
        id="default-not-const",
    ),
    # a multi-select default that is a string
    pytest.param(
        one({"type": "array", "items": {"anyOf": TITLED}, "default": "v1"}),
        {("bad_default", f"{P}/default")},
        id="default-multi-string",
    ),
    # a number default below the minimum
    pytest.param(
        one({"type": "number", "minimum": 5, "default": 1}),
        {("bad_default", f"{P}/default")},
        id="default-below-min",
    ),
    # a string default that is not a date
    pytest.param(
        one({"type": "string", "format": "date", "default": "tomorrow"}),
        {("bad_default", f"{P}/default")},
        id="default-format",
    ),
    # a boolean default of null
    pytest.param(
        one({"type": "boolean", "default": None}), {("bad_default", f"{P}/default")}, id="d-null"
    ),
    # a key with ~ and / is escaped in the pointer
    pytest.param(
        obj(**{"a/b~c": {"type": "object"}}),
        {("nested_object", "/properties/a~1b~0c")},
        id="pointer-escape",
    ),
    # several issues at once are all reported
    pytest.param(
        {
            "type": "object",
            "properties": {"a": {"type": "object"}, "b": {"type": "string", "pattern": "x"}},
            "required": ["c"],
        },
        {
            ("nested_object", "/properties/a"),
            ("pattern", "/properties/b/pattern"),
            ("required_unknown_property", "/required/0"),
        },
        id="several",
    ),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("schema", "expected"), SUBSET_CASES)
def test_subset_issues(schema: Any, expected: set[tuple[str, str]], era: str) -> None:
    """Each out-of-subset shape gives exactly the expected (kind, pointer) in every era."""
    assert kp(schema_subset_issues(schema, era)) == expected


SUBSET_ERA_CASES = [
    # $schema is not a subset issue on 2025-06-18 (era_feature_issues reports it)
    pytest.param(OLD, {"$schema": 1, "type": "object", "properties": {}}, set(), id="schema-old"),
    # a non-string $schema on 2025-11-25
    pytest.param(
        MID,
        {"$schema": 1, "type": "object", "properties": {}},
        {("bad_keyword_value", "/$schema")},
        id="schema-mid",
    ),
    # a non-string $schema on 2026-07-28
    pytest.param(
        NEW,
        {"$schema": None, "type": "object", "properties": {}},
        {("bad_keyword_value", "/$schema")},
        id="schema-new",
    ),
    # a string $schema is fine on 2026-07-28
    pytest.param(
        NEW, {"$schema": "x", "type": "object", "properties": {}}, set(), id="schema-new-ok"
    ),
]


@pytest.mark.parametrize(("era", "schema", "expected"), SUBSET_ERA_CASES)
def test_subset_issues_per_era(era: str, schema: Any, expected: set[tuple[str, str]]) -> None:
    """$schema is checked as a subset keyword only where the era has it."""
    assert kp(schema_subset_issues(schema, era)) == expected


def test_pattern_is_low_and_others_have_no_override() -> None:
    """Only pattern carries a severity override among subset issues."""
    issues = schema_subset_issues(
        one({"type": "string", "pattern": "a", "writeOnly": True}), LATEST_ERA
    )
    assert {(i.kind, i.severity) for i in issues} == {("pattern", "low"), ("unknown_keyword", None)}


# ---------------------------------------------------------------------------------------------
# EG108: era_feature_issues; each row gives the expected set for 2025-06-18, 2025-11-25, 2026
# ---------------------------------------------------------------------------------------------

RS = "/requestedSchema"
RP = "/requestedSchema/properties/p"
NONE: set[tuple[str, str]] = set()


def form(prop: Any, **extra: Any) -> dict[str, Any]:
    """elicitation/create params with a one-property schema."""
    return {"message": "m", "requestedSchema": one(prop), **extra}


ERA_ROWS = [
    # URL mode: only 2025-06-18 lacks it (elicitationId is EG107's business later on)
    pytest.param(
        {"mode": "url", "message": "m", "url": "https://a.example", "elicitationId": "e1"},
        {("url_mode", "/mode"), ("elicitation_id", "/elicitationId")},
        NONE,
        NONE,
        id="url-mode",
    ),
    # mode "form": low on 2025-06-18 (the mcp SDK sends it), fine later
    pytest.param(
        form({"type": "string"}, mode="form"), {("mode_field", "/mode")}, NONE, NONE, id="mf"
    ),
    # an unknown mode value on 2025-06-18 is still a mode field
    pytest.param({"mode": 3, "message": "m"}, {("mode_field", "/mode")}, NONE, NONE, id="mode-3"),
    # elicitationId on a form request of 2025-06-18
    pytest.param(
        form({"type": "string"}, elicitationId="e"),
        {("elicitation_id", "/elicitationId")},
        NONE,
        NONE,
        id="elicitation-id",
    ),
    # titled single-select enum
    pytest.param(
        form({"type": "string", "oneOf": TITLED}),
        {("titled_enum", f"{RP}/oneOf")},
        NONE,
        NONE,
        id="titled-enum",
    ),
    # untitled multi-select
    pytest.param(
        form({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
        {("multi_select_enum", f"{RP}/type")},
        NONE,
        NONE,
        id="multi-select",
    ),
    # titled multi-select
    pytest.param(
        form({"type": "array", "items": {"anyOf": TITLED}}),
        {("multi_select_enum", f"{RP}/type")},
        NONE,
        NONE,
        id="titled-multi-select",
    ),
    # a string default
    pytest.param(
        form({"type": "string", "default": "x"}),
        {("non_boolean_default", f"{RP}/default")},
        NONE,
        NONE,
        id="string-default",
    ),
    # a number default
    pytest.param(
        form({"type": "number", "default": 1}),
        {("non_boolean_default", f"{RP}/default")},
        NONE,
        NONE,
        id="number-default",
    ),
    # an enum default
    pytest.param(
        form({"type": "string", "enum": ["a"], "default": "a"}),
        {("non_boolean_default", f"{RP}/default")},
        NONE,
        NONE,
        id="enum-default",
    ),
    # a boolean default is fine everywhere
    pytest.param(form({"type": "boolean", "default": True}), NONE, NONE, NONE, id="bool-default"),
    # legacy enumNames is fine everywhere
    pytest.param(
        form({"type": "string", "enum": ["a"], "enumNames": ["A"]}), NONE, NONE, NONE, id="en"
    ),
    # $schema in requestedSchema
    pytest.param(
        {"message": "m", "requestedSchema": {"$schema": "x", "type": "object", "properties": {}}},
        {("schema_keyword", f"{RS}/$schema")},
        NONE,
        NONE,
        id="schema-keyword",
    ),
    # task augmentation: 2025-11-25 only
    pytest.param(
        form({"type": "string"}, task={"ttl": 1000}),
        {("task_field", "/task")},
        NONE,
        {("task_field", "/task")},
        id="task",
    ),
    # _meta in the params: gone in 2026-07-28
    pytest.param(
        form({"type": "string"}, _meta={"progressToken": 1}),
        NONE,
        NONE,
        {("meta_field", "/_meta")},
        id="meta",
    ),
    # a plain form request is fine everywhere
    pytest.param(form({"type": "string"}), NONE, NONE, NONE, id="plain"),
    # params not an object: nothing to say here
    pytest.param(["m"], NONE, NONE, NONE, id="params-list"),
    # requestedSchema not an object: EG105/EG106 say it
    pytest.param({"message": "m", "requestedSchema": 3}, NONE, NONE, NONE, id="schema-number"),
]


def _era_table() -> list[Any]:
    """Expand ERA_ROWS to one case per era."""
    cases = []
    for row in ERA_ROWS:
        params, *per_era = row.values
        for era, expected in zip(ERAS, per_era, strict=True):
            cases.append(pytest.param(params, era, expected, id=f"{row.id}-{era}"))
    return cases


@pytest.mark.parametrize(("params", "era", "expected"), _era_table())
def test_era_feature_issues(params: Any, era: str, expected: set[tuple[str, str]]) -> None:
    """Each era-only feature is reported exactly in the eras that lack it."""
    assert kp(era_feature_issues(params, era)) == expected


@pytest.mark.parametrize(("mode", "severity"), [("form", "low"), ("url", None), ("x", None)])
def test_mode_severity_on_old_era(mode: str, severity: str | None) -> None:
    """mode: form is low on 2025-06-18; URL mode and other values keep the rule's severity."""
    (issue,) = era_feature_issues({"mode": mode, "message": "m"}, OLD)
    assert issue.severity == severity


@pytest.mark.parametrize("era", ["draft", "2099-01-01", "", None, 7])
def test_draft_and_unknown_eras_act_like_newest(era: Any) -> None:
    """draft, unknown strings and non-strings are treated as 2026-07-28."""
    params = form({"type": "string"}, task={}, mode="url")
    assert kp(era_feature_issues(params, era)) == {("task_field", "/task")}


# ---------------------------------------------------------------------------------------------
# EG109: result_shape_issues; per row: result, request mode, expected per era
# ---------------------------------------------------------------------------------------------

RESULT_ROWS = [
    # a plain accept with content
    pytest.param({"action": "accept", "content": {"a": "x"}}, None, NONE, NONE, NONE, id="ok"),
    # decline and cancel without content
    pytest.param({"action": "decline"}, None, NONE, NONE, NONE, id="decline"),
    # cancel, answering a URL request
    pytest.param({"action": "cancel"}, "url", NONE, NONE, NONE, id="cancel"),
    # URL accept without content
    pytest.param({"action": "accept"}, "url", NONE, NONE, NONE, id="url-accept"),
    # form accept with no content (content is optional)
    pytest.param({"action": "accept"}, "form", NONE, NONE, NONE, id="form-no-content"),
    # not an object
    pytest.param(
        "accept", None, {("not_object", "")}, {("not_object", "")}, {("not_object", "")}, id="str"
    ),
    # action missing
    pytest.param(
        {"content": {}},
        None,
        {("missing_action", "/action")},
        {("missing_action", "/action")},
        {("missing_action", "/action")},
        id="missing-action",
    ),
    # an unknown action
    pytest.param(
        {"action": "approve"},
        None,
        {("unknown_action", "/action")},
        {("unknown_action", "/action")},
        {("unknown_action", "/action")},
        id="unknown-action",
    ),
    # an action that is not a string
    pytest.param(
        {"action": ["accept"]},
        None,
        {("unknown_action", "/action")},
        {("unknown_action", "/action")},
        {("unknown_action", "/action")},
        id="action-list",
    ),
    # content on decline
    pytest.param(
        {"action": "decline", "content": {"a": "x"}},
        None,
        {("content_not_allowed", "/content")},
        {("content_not_allowed", "/content")},
        {("content_not_allowed", "/content")},
        id="content-on-decline",
    ),
    # content on cancel, even empty
    pytest.param(
        {"action": "cancel", "content": {}},
        "form",
        {("content_not_allowed", "/content")},
        {("content_not_allowed", "/content")},
        {("content_not_allowed", "/content")},
        id="content-on-cancel",
    ),
    # content on a URL accept
    pytest.param(
        {"action": "accept", "content": {"a": "x"}},
        "url",
        {("content_on_url_accept", "/content")},
        {("content_on_url_accept", "/content")},
        {("content_on_url_accept", "/content")},
        id="content-on-url-accept",
    ),
    # content a list
    pytest.param(
        {"action": "accept", "content": ["x"]},
        None,
        {("content_not_object", "/content")},
        {("content_not_object", "/content")},
        {("content_not_object", "/content")},
        id="content-list",
    ),
    # a null content value
    pytest.param(
        {"action": "accept", "content": {"a": None}},
        None,
        {("content_value_type", "/content/a")},
        {("content_value_type", "/content/a")},
        {("content_value_type", "/content/a")},
        id="null-value",
    ),
    # a list of numbers
    pytest.param(
        {"action": "accept", "content": {"a": [1]}},
        None,
        {("content_value_type", "/content/a")},
        {("content_value_type", "/content/a")},
        {("content_value_type", "/content/a")},
        id="list-of-numbers",
    ),
    # a nested object value
    pytest.param(
        {"action": "accept", "content": {"a": {"b": "c"}}},
        None,
        {("nested_content", "/content/a")},
        {("nested_content", "/content/a")},
        {("nested_content", "/content/a")},
        id="nested-content",
    ),
    # a list of objects
    pytest.param(
        {"action": "accept", "content": {"a": [{"b": 1}]}},
        None,
        {("nested_content", "/content/a")},
        {("nested_content", "/content/a")},
        {("nested_content", "/content/a")},
        id="list-of-objects",
    ),
    # a list of strings: only 2025-06-18 lacks it
    pytest.param(
        {"action": "accept", "content": {"a": ["x", "y"]}},
        None,
        {("content_array_era", "/content/a")},
        NONE,
        NONE,
        id="string-list",
    ),
    # an empty list: also an array on 2025-06-18
    pytest.param(
        {"action": "accept", "content": {"a": []}},
        "form",
        {("content_array_era", "/content/a")},
        NONE,
        NONE,
        id="empty-list",
    ),
    # booleans, ints and floats are all fine
    pytest.param(
        {"action": "accept", "content": {"a": True, "b": 1, "c": 1.5, "d": ""}},
        None,
        NONE,
        NONE,
        NONE,
        id="primitives",
    ),
    # decline with nested content: both the content and its value are reported
    pytest.param(
        {"action": "decline", "content": {"a": {}}},
        None,
        {("content_not_allowed", "/content"), ("nested_content", "/content/a")},
        {("content_not_allowed", "/content"), ("nested_content", "/content/a")},
        {("content_not_allowed", "/content"), ("nested_content", "/content/a")},
        id="decline-nested",
    ),
    # resultType and _meta are other rules' business
    pytest.param(
        {"action": "accept", "resultType": "complete", "_meta": {}}, None, NONE, NONE, NONE, id="rt"
    ),
]


def _result_table() -> list[Any]:
    """Expand RESULT_ROWS to one case per era."""
    cases = []
    for row in RESULT_ROWS:
        result, mode, *per_era = row.values
        for era, expected in zip(ERAS, per_era, strict=True):
            cases.append(pytest.param(result, mode, era, expected, id=f"{row.id}-{era}"))
    return cases


@pytest.mark.parametrize(("result", "mode", "era", "expected"), _result_table())
def test_result_shape_issues(
    result: Any, mode: str | None, era: str, expected: set[tuple[str, str]]
) -> None:
    """Each ElicitResult defect is reported in the eras where it is one."""
    assert kp(result_shape_issues(result, mode=mode, era=era)) == expected


# ---------------------------------------------------------------------------------------------
# EG110: content_issues, the same in every era
# ---------------------------------------------------------------------------------------------

CONTENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 4},
        "mail": {"type": "string", "format": "email"},
        "home": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "when": {"type": "string", "format": "date-time"},
        "age": {"type": "integer", "minimum": 18, "maximum": 99},
        "score": {"type": "number", "minimum": 0.5, "maximum": 1.5},
        "ok": {"type": "boolean"},
        "color": {"type": "string", "enum": ["red", "green"]},
        "size": {"type": "string", "oneOf": TITLED},
        "tags": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["x", "y", "z"]},
        },
        "picks": {"type": "array", "items": {"anyOf": TITLED}},
    },
    "required": ["name", "age"],
}

CONTENT_CASES = [
    # all fields valid
    pytest.param(
        {
            "name": "Ann",
            "mail": "ann@example.com",
            "home": "https://example.com/x?y=1#z",
            "day": "2024-02-29",
            "when": "2024-02-29T23:59:60.5+05:30",
            "age": 18,
            "score": 1.5,
            "ok": False,
            "color": "red",
            "size": "v1",
            "tags": ["x", "z"],
            "picks": ["v1", "v2"],
        },
        NONE,
        id="all-valid",
    ),
    # an integer written as 30.0 is an integer
    pytest.param({"name": "Ann", "age": 30.0}, NONE, id="integral-float"),
    # a required key missing
    pytest.param({"name": "Ann"}, {("required_missing", "/age")}, id="required-missing"),
    # both required keys missing
    pytest.param(
        {}, {("required_missing", "/name"), ("required_missing", "/age")}, id="both-missing"
    ),
    # a key not in properties
    pytest.param(
        {"name": "Ann", "age": 20, "extra": "x"},
        {("unknown_property", "/extra")},
        id="unknown-property",
    ),
    # a number where a string belongs
    pytest.param({"name": 5, "age": 20}, {("type_mismatch", "/name")}, id="string-got-number"),
    # a boolean is not an integer
    pytest.param({"name": "Ann", "age": True}, {("type_mismatch", "/age")}, id="int-got-bool"),
    # a fraction is not an integer
    pytest.param({"name": "Ann", "age": 20.5}, {("type_mismatch", "/age")}, id="int-got-frac"),
    # a numeric string is not a number
    pytest.param(
        {"name": "Ann", "age": 20, "score": "1"}, {("type_mismatch", "/score")}, id="num-got-str"
    ),
    # a boolean is not a number
    pytest.param(
        {"name": "Ann", "age": 20, "score": False}, {("type_mismatch", "/score")}, id="num-bool"
    ),
    # 1 is not a boolean
    pytest.param({"name": "Ann", "age": 20, "ok": 1}, {("type_mismatch", "/ok")}, id="bool-got-1"),
    # a string where a multi-select list belongs
    pytest.param(
        {"name": "Ann", "age": 20, "tags": "x"}, {("type_mismatch", "/tags")}, id="array-got-str"
    ),
    # a number inside a multi-select
    pytest.param(
        {"name": "Ann", "age": 20, "tags": [1]}, {("type_mismatch", "/tags/0")}, id="array-item"
    ),
    # an enum value outside the enum
    pytest.param(
        {"name": "Ann", "age": 20, "color": "blue"}, {("enum_mismatch", "/color")}, id="enum"
    ),
    # a titled value outside the consts (the title is not the value)
    pytest.param(
        {"name": "Ann", "age": 20, "size": "One"}, {("enum_mismatch", "/size")}, id="oneof"
    ),
    # a multi-select item outside the enum
    pytest.param(
        {"name": "Ann", "age": 20, "tags": ["x", "w"]},
        {("enum_mismatch", "/tags/1")},
        id="items-enum",
    ),
    # a titled multi-select item outside the consts
    pytest.param(
        {"name": "Ann", "age": 20, "picks": ["v3"]}, {("enum_mismatch", "/picks/0")}, id="anyof"
    ),
    # the same option twice
    pytest.param(
        {"name": "Ann", "age": 20, "tags": ["x", "x"]},
        {("duplicate_item", "/tags/1")},
        id="duplicate-item",
    ),
    # shorter than minLength
    pytest.param({"name": "A", "age": 20}, {("too_short", "/name")}, id="too-short"),
    # longer than maxLength
    pytest.param({"name": "Annie", "age": 20}, {("too_long", "/name")}, id="too-long"),
    # four astral code points fit maxLength 4 (they are 8 UTF-16 units)
    pytest.param({"name": "😀😀😀😀", "age": 20}, NONE, id="code-points"),
    # below the minimum
    pytest.param({"name": "Ann", "age": 17}, {("below_minimum", "/age")}, id="below-minimum"),
    # above the maximum
    pytest.param(
        {"name": "Ann", "age": 20, "score": 1.6}, {("above_maximum", "/score")}, id="above-max"
    ),
    # fewer than minItems
    pytest.param(
        {"name": "Ann", "age": 20, "tags": []}, {("too_few_items", "/tags")}, id="too-few-items"
    ),
    # more than maxItems
    pytest.param(
        {"name": "Ann", "age": 20, "tags": ["x", "y", "z"]},
        {("too_many_items", "/tags")},
        id="too-many-items",
    ),
    # a bad email
    pytest.param(
        {"name": "Ann", "age": 20, "mail": "ann at example"},
        {("format_mismatch", "/mail")},
        id="email",
    ),
    # a relative URI
    pytest.param(
        {"name": "Ann", "age": 20, "home": "/relative"}, {("format_mismatch", "/home")}, id="uri"
    ),
    # a non-existent date
    pytest.param(
        {"name": "Ann", "age": 20, "day": "2025-02-29"}, {("format_mismatch", "/day")}, id="date"
    ),
    # a date-time without an offset
    pytest.param(
        {"name": "Ann", "age": 20, "when": "2025-01-01T10:00:00"},
        {("format_mismatch", "/when")},
        id="date-time",
    ),
    # content keys with ~ and / are escaped
    pytest.param(
        {"name": "Ann", "age": 20, "a/b~": 1}, {("unknown_property", "/a~1b~0")}, id="escape"
    ),
    # content not an object: EG109's business
    pytest.param(["x"], NONE, id="content-list"),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("content", "expected"), CONTENT_CASES)
def test_content_issues(content: Any, expected: set[tuple[str, str]], era: str) -> None:
    """Each mismatch between content and requestedSchema gives the expected issue."""
    assert kp(content_issues(content, CONTENT_SCHEMA, era)) == expected


@pytest.mark.parametrize(
    "schema",
    [
        # not an object
        pytest.param("schema", id="string"),
        # properties missing
        pytest.param({"type": "object"}, id="no-properties"),
        # properties a list
        pytest.param({"type": "object", "properties": ["a"]}, id="properties-list"),
    ],
)
def test_content_issues_without_usable_schema(schema: Any) -> None:
    """Without a properties object there is nothing to compare content with."""
    assert content_issues({"a": 1}, schema, LATEST_ERA) == []


def test_required_names_outside_properties_are_not_demanded() -> None:
    """A required name missing from properties is EG106's finding, not a missing answer."""
    schema = {**obj(a={"type": "string"}), "required": ["a", "ghost", 3]}
    assert kp(content_issues({}, schema, LATEST_ERA)) == {("required_missing", "/a")}


def test_content_issues_skip_out_of_subset_properties() -> None:
    """A property whose schema is outside the subset is checked only for presence."""
    schema = obj(a={"type": "object"}, b={"anyOf": []}, c="x")
    assert content_issues({"a": {"x": 1}, "b": [1], "c": 2}, schema, LATEST_ERA) == []


FORMAT_CASES = [
    # plain address
    ("email", "a.b+c@example.co.uk", True),
    # dotless domain, as RFC 5321 allows
    ("email", "root@localhost", True),
    # address literal
    ("email", "a@[192.0.2.1]", True),
    # no @
    ("email", "example.com", False),
    # two @
    ("email", "a@@example.com", False),
    # empty local part
    ("email", "@example.com", False),
    # empty domain
    ("email", "a@", False),
    # empty label
    ("email", "a@example..com", False),
    # space
    ("email", "a b@example.com", False),
    # longer than the 320 characters an address can have
    ("email", "a" * 310 + "@example.com", False),
    # newline (header injection)
    ("email", "a@example.com\nBcc: x@y.z", False),
    # https URL with all parts
    ("uri", "https://user@example.com:8443/p/a%20t?q=1&r=2#frag", True),
    # mailto
    ("uri", "mailto:a@example.com", True),
    # urn
    ("uri", "urn:isbn:0451450523", True),
    # no scheme
    ("uri", "example.com/path", False),
    # relative reference
    ("uri", "//example.com", False),
    # scheme starting with a digit
    ("uri", "1http://example.com", False),
    # space
    ("uri", "http://exa mple.com", False),
    # broken percent escape
    ("uri", "http://example.com/%zz", False),
    # non-ASCII (an IRI, not a URI)
    ("uri", "https://例え.jp/", False),
    # empty
    ("uri", "", False),
    # leap day
    ("date", "2024-02-29", True),
    # not a leap year
    ("date", "2023-02-29", False),
    # month 13
    ("date", "2025-13-01", False),
    # day 0
    ("date", "2025-01-00", False),
    # short year
    ("date", "25-01-01", False),
    # fullwidth digits are not ASCII digits
    ("date", "２０２５-01-01", False),
    # a date-time is not a date
    ("date", "2025-01-01T00:00:00Z", False),
    # Z offset
    ("date-time", "2025-06-18T12:00:00Z", True),
    # lower-case t and z
    ("date-time", "2025-06-18t12:00:00z", True),
    # fraction and negative offset
    ("date-time", "2025-06-18T12:00:00.123456-08:00", True),
    # leap second
    ("date-time", "2016-12-31T23:59:60Z", True),
    # no offset
    ("date-time", "2025-06-18T12:00:00", False),
    # space instead of T
    ("date-time", "2025-06-18 12:00:00Z", False),
    # hour 24
    ("date-time", "2025-06-18T24:00:00Z", False),
    # minute 60
    ("date-time", "2025-06-18T12:60:00Z", False),
    # offset hour 24
    ("date-time", "2025-06-18T12:00:00+24:00", False),
    # invalid calendar date
    ("date-time", "2025-02-30T12:00:00Z", False),
    # no seconds
    ("date-time", "2025-06-18T12:00Z", False),
]


@pytest.mark.parametrize(("fmt", "value", "valid"), FORMAT_CASES)
def test_format_checks(fmt: str, value: str, valid: bool) -> None:
    """Each format accepts what its RFC allows and refuses the rest."""
    schema = one({"type": "string", "format": fmt})
    expected = NONE if valid else {("format_mismatch", "/p")}
    assert kp(content_issues({"p": value}, schema, LATEST_ERA)) == expected


# ---------------------------------------------------------------------------------------------
# Details never hold values
# ---------------------------------------------------------------------------------------------

SECRET = "sk-live-9f8e7d6c5b4a"


def _all_issues_with_secret() -> list[SchemaIssue]:
    """Run every function over inputs that carry SECRET in every value position."""
    schema = {
        "$schema": SECRET,
        "type": "object",
        "properties": {
            "s": {"type": "string", "default": SECRET, "format": SECRET, "pattern": SECRET},
            "e": {"type": "string", "enum": [SECRET, SECRET, 1], "default": SECRET + "x"},
            "o": {"type": "string", "oneOf": [{"const": SECRET, "title": SECRET, "x": SECRET}]},
            "n": {"type": "number", "minimum": 5, "default": SECRET},
            "a": {"type": "array", "items": {"anyOf": [{"const": SECRET}]}, "default": [SECRET]},
            "t": {"type": SECRET, "title": SECRET},
            "f": {"type": "string", "format": "email", "minLength": 99, "maxLength": 1},
            "u": {"type": "string", "format": "uri"},
        },
        "required": [1],
    }
    params = {"mode": SECRET, "message": SECRET, "elicitationId": SECRET, "requestedSchema": schema}
    content = {
        "s": SECRET,
        "e": SECRET + "y",
        "o": SECRET + "z",
        "n": SECRET,
        "a": [SECRET, SECRET],
        "f": SECRET,
        "u": SECRET,
        "z": SECRET,
    }
    result = {"action": SECRET, "content": {**content, "l": [SECRET, 1], "d": {"k": SECRET}}}
    issues: list[SchemaIssue] = []
    for era in ERAS:
        issues += schema_subset_issues(schema, era)
        issues += era_feature_issues(params, era)
        issues += result_shape_issues(result, mode="url", era=era)
        issues += result_shape_issues({"action": "decline", "content": SECRET}, mode=None, era=era)
        issues += content_issues(content, schema, era)
    return issues


def test_details_never_include_values() -> None:
    """No detail or pointer repeats a string value, default, enum member or content value."""
    issues = _all_issues_with_secret()
    assert len(issues) > 30
    for issue in issues:
        assert SECRET not in issue.detail
        assert SECRET not in issue.pointer


def test_details_name_keys_and_constraints() -> None:
    """A content detail names the key and the constraint, so a user can fix it."""
    (issue,) = content_issues({"name": "A", "age": 20}, CONTENT_SCHEMA, LATEST_ERA)
    assert issue.detail == "'name' is shorter than minLength 2"


def test_huge_bounds_do_not_break_details() -> None:
    """Ints too long for str() still give a detail (Python refuses past 4300 digits)."""
    schema = one({"type": "integer", "minimum": 10**5000})
    (issue,) = content_issues({"p": 1}, schema, LATEST_ERA)
    assert issue.kind == "below_minimum"
    assert "very large" in issue.detail


def test_odd_keys_are_shortened_and_printable() -> None:
    """Keys in details are cut to 64 characters and control characters are masked."""
    key = "\x1b[31m" + "k" * 100
    (issue,) = schema_subset_issues(obj(**{key: {"type": "object"}}), LATEST_ERA)
    assert "\x1b" not in issue.detail
    assert len(issue.detail) < 120
    assert issue.pointer == "/properties/" + key


# ---------------------------------------------------------------------------------------------
# Helpers, limits and robustness
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "escaped"),
    [
        # nothing to escape
        ("plain", "plain"),
        # slash
        ("a/b", "a~1b"),
        # tilde
        ("a~b", "a~0b"),
        # tilde before one: must not become a slash
        ("~1", "~01"),
        # empty key
        ("", ""),
    ],
)
def test_json_pointer_escape(key: str, escaped: str) -> None:
    """RFC 6901: ~ becomes ~0 first, then / becomes ~1."""
    assert json_pointer_escape(key) == escaped


@pytest.mark.parametrize(
    ("era", "known", "normal"),
    [
        # each released era
        (OLD, True, OLD),
        (MID, True, MID),
        (NEW, True, NEW),
        # draft is 2026-07-28, and so are the other aliases of protocol.versions
        ("draft", True, NEW),
        ("latest", True, NEW),
        ("modern", True, NEW),
        # an unknown string
        ("2024-11-05", False, NEW),
        # not a string
        (None, False, NEW),
    ],
)
def test_eras(era: Any, known: bool, normal: str) -> None:
    """is_known_era and normalize_era agree with the brief's era rules."""
    assert is_known_era(era) is known
    assert normalize_era(era) == normal


def test_unknown_era_behaves_like_newest_everywhere() -> None:
    """Content arrays are fine and $schema is checked, as on 2026-07-28."""
    result = {"action": "accept", "content": {"a": ["x"]}}
    assert result_shape_issues(result, mode=None, era="2030-01-01") == []
    schema = {"$schema": 1, "type": "object", "properties": {}}
    assert kp(schema_subset_issues(schema, "draft")) == {("bad_keyword_value", "/$schema")}


def test_schema_issue_is_frozen() -> None:
    """SchemaIssue is immutable and has no __dict__ (slots)."""
    issue = SchemaIssue("pattern", "/p", "d", "low")
    with pytest.raises(dataclasses.FrozenInstanceError):
        issue.kind = "x"  # type: ignore[misc]
    assert not hasattr(issue, "__dict__")


def test_huge_schema_is_truncated() -> None:
    """Ten thousand bad properties give MAX_ISSUES issues and one truncated marker."""
    schema = obj(**{f"k{i}": {"type": "object"} for i in range(10_000)})
    issues = schema_subset_issues(schema, LATEST_ERA)
    assert len(issues) == MAX_ISSUES + 1
    assert issues[-1].kind == "truncated"


def test_inputs_are_not_mutated() -> None:
    """The checks read their inputs and never change them."""
    schema = copy.deepcopy(FULL_PRIMITIVES)
    content = {"name": "A", "tags": ["x", "x"]}
    schema_subset_issues(schema, OLD)
    era_feature_issues({"requestedSchema": schema}, OLD)
    content_issues(content, schema, OLD)
    assert schema == FULL_PRIMITIVES
    assert content == {"name": "A", "tags": ["x", "x"]}


def _kinds_in_tables() -> set[str]:
    """Every kind some table row above expects."""
    kinds: set[str] = set()
    for case in SUBSET_CASES + SUBSET_ERA_CASES + CONTENT_CASES:
        kinds |= {k for k, _ in cast("set[tuple[str, str]]", case.values[-1])}
    for case in ERA_ROWS + RESULT_ROWS:
        for expected in case.values[-3:]:
            kinds |= {k for k, _ in cast("set[tuple[str, str]]", expected)}
    return kinds | {"truncated"}


def test_every_kind_is_covered_by_a_table() -> None:
    """KINDS lists exactly the kinds the tables exercise, so none goes untested."""
    assert _kinds_in_tables() == KINDS


# Hypothesis: arbitrary JSON, biased towards schema keywords so deep paths are reached.
KEYWORDS = [
    "type", "properties", "required", "items", "enum", "enumNames", "oneOf", "anyOf", "const",
    "title", "default", "format", "minLength", "maxLength", "minimum", "maximum", "minItems",
    "maxItems", "$schema", "$ref", "pattern", "mode", "action", "content", "requestedSchema",
    "task", "_meta", "elicitationId", "p",
]  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(
        [
            "object", "string", "number", "integer", "boolean", "array", "null", "email",
            "uri", "date", "date-time", "accept", "decline", "cancel", "url", "form",
        ]
    ),
)  # fmt: skip
KEYS = st.one_of(st.sampled_from(KEYWORDS), st.text(alphabet="ab/~", max_size=3))
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=25,
)
ERA_VALUES = st.one_of(st.sampled_from([*ERAS, "draft", "x"]), st.none())


def _check_well_formed(issues: object) -> None:
    """Results are lists of SchemaIssue with known kinds and well-formed pointers."""
    assert isinstance(issues, list)
    for issue in issues:
        assert isinstance(issue, SchemaIssue)
        assert issue.kind in KINDS
        assert issue.pointer == "" or issue.pointer.startswith("/")
        assert issue.severity in (None, "low")
        assert isinstance(issue.detail, str)
        assert issue.detail


@settings(max_examples=200, deadline=None)
@given(
    schema=JSON,
    other=JSON,
    era=ERA_VALUES,
    mode=st.one_of(st.none(), st.sampled_from(["url", "form"])),
)
def test_never_raises_on_arbitrary_json(schema: Any, other: Any, era: Any, mode: Any) -> None:
    """No JSON input, in any position, makes a check raise."""
    wrapped = {"type": "object", "properties": {"p": schema}, "required": ["p"]}
    for candidate in (schema, wrapped):
        _check_well_formed(schema_subset_issues(candidate, era))
        _check_well_formed(
            era_feature_issues({"requestedSchema": candidate, **_as_dict(other)}, era)
        )
        _check_well_formed(content_issues(other, candidate, era))
        _check_well_formed(content_issues({"p": other}, candidate, era))
    _check_well_formed(era_feature_issues(schema, era))
    _check_well_formed(result_shape_issues(schema, mode=mode, era=era))
    _check_well_formed(
        result_shape_issues({"action": "accept", "content": other}, mode=mode, era=era)
    )


MARK = "zqxv"
MARKED = st.recursive(
    st.one_of(
        SCALARS.filter(lambda v: not isinstance(v, str)), st.text(max_size=6).map(MARK.__add__)
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(schema=MARKED, content=MARKED, era=ERA_VALUES)
def test_values_never_reach_details(schema: Any, content: Any, era: Any) -> None:
    """With every string value marked, no detail ever contains the mark."""
    wrapped = {"type": "object", "properties": {"p": schema, "q": schema}}
    issues = [
        *schema_subset_issues(wrapped, era),
        *era_feature_issues({"mode": schema, "requestedSchema": wrapped}, era),
        *result_shape_issues({"action": content, "content": content}, mode=None, era=era),
        *content_issues({"p": content, "q": content}, wrapped, era),
    ]
    for issue in issues:
        assert MARK not in issue.detail


def _as_dict(value: Any) -> dict[str, Any]:
    """value if it is a dict with string keys, else an empty dict."""
    return value if isinstance(value, dict) else {}
