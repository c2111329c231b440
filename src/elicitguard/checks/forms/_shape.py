"""Reduce one ``requestedSchema`` property to the facts the classifier weighs.

The spec's primitives (PROTOCOL.md a.4) are strings, numbers, booleans and enums; anything
else is read leniently as text so that a malformed schema is still checked. What the user
can type matters more than what the field is called: a boolean or a choice among fixed
options cannot carry a typed secret, a number can carry only a numeric one (PIN, code, CVV,
card number), and a string with ``format: email|uri|date|date-time`` is not a secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import re2

Kind = Literal["text", "number", "boolean", "choice", "formatted"]

_NON_SECRET_FORMATS = frozenset(("email", "uri", "url", "date", "date-time", "time", "uuid"))
_MASK = re2.compile(r"^[*•●·xX]{4,}$")
_PEM = re2.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----|^(?:[a-z]+ ){11,23}[a-z]+$")
_TOKENISH = re2.compile(r"^[A-Za-z0-9_\-\.=+/]{20,}$")


@dataclass(frozen=True, slots=True)
class Shape:
    """The type-level facts of one property."""

    kind: Kind
    fmt: str | None
    write_only: bool
    min_len: int | None
    max_len: int | None
    maximum: float | None
    default: str | None


def _int(value: object) -> int | None:
    """A length bound, when it is a real integer."""
    return value if type(value) is int else None


def _number(value: object) -> float | None:
    """A numeric bound, when it is a real number."""
    return float(value) if type(value) is int or type(value) is float else None


def _kind(prop: Mapping[str, object], fmt: str | None) -> Kind:
    """Classify the property's input kind: what the user can type into it."""
    if "enum" in prop or "oneOf" in prop or "anyOf" in prop or "const" in prop:
        return "choice"
    items = prop.get("items")
    if items is not None and isinstance(items, Mapping) and ("enum" in items or "anyOf" in items):
        return "choice"
    declared = prop.get("type")
    if declared == "boolean":
        return "boolean"
    if declared == "number" or declared == "integer":
        return "number"
    return "formatted" if fmt in _NON_SECRET_FORMATS else "text"


@lru_cache(maxsize=4096)
def _default_signal(value: str) -> str | None:
    """What a string default's *shape* says (the value itself is never kept)."""
    if not value:
        return None
    if _MASK.search(value):
        return "mask"
    if _PEM.search(value):
        return "private_key"
    tokenish = _TOKENISH.search(value) and any(c.isdigit() for c in value)
    return "token" if tokenish and any(c.isalpha() for c in value) else None


def shape_of(prop: Mapping[str, object]) -> Shape:
    """Extract the facts of one property schema."""
    fmt = prop.get("format")
    fmt_text = fmt.casefold() if isinstance(fmt, str) else None
    default = prop.get("default")
    return Shape(  # positional: this runs for every property of every form
        _kind(prop, fmt_text),
        fmt_text,
        prop.get("writeOnly") is True,
        _int(prop.get("minLength")),
        _int(prop.get("maxLength")),
        _number(prop.get("maximum")),
        _default_signal(default) if isinstance(default, str) else None,
    )


def texts_of(prop: Mapping[str, object]) -> tuple[str, str]:
    """The title and description of a property (empty when absent or not text)."""
    title, desc = prop.get("title"), prop.get("description")
    return (title if isinstance(title, str) else ""), (desc if isinstance(desc, str) else "")


def _label_text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def labels_of(prop: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    """The option labels a client shows for a choice, as (pointer suffix, text).

    ``enumNames``, the ``title`` of each ``oneOf``/``anyOf`` option (also under ``items`` for
    multi-select), and the ``enum`` values themselves, which a client shows when no names are
    given.
    """
    found: list[tuple[str, str]] = []
    for where, holder in (("", prop), ("/items", prop.get("items"))):
        if not isinstance(holder, Mapping):
            continue
        for keyword in ("enumNames", "enum"):
            values = holder.get(keyword)
            if isinstance(values, list):
                for index, value in enumerate(values[:64]):
                    text = _label_text(value)
                    if text is not None:
                        found.append((f"{where}/{keyword}/{index}", text))
        for keyword in ("oneOf", "anyOf"):
            options = holder.get(keyword)
            if isinstance(options, list):
                for index, option in enumerate(options[:64]):
                    if isinstance(option, Mapping):
                        text = _label_text(option.get("title"))
                        if text is not None:
                            found.append((f"{where}/{keyword}/{index}/title", text))
    return tuple(found)
