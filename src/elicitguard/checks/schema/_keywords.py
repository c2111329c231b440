"""Keyword tables of elicitation's restricted schema (PROTOCOL.md a.4), per field type."""

from __future__ import annotations

from typing import Final

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
