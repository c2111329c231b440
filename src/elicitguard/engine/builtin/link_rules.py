"""Clickable URLs in forms (EG202): a link where a client shows text.

Why: a form request asks for values, and a URL in its title, description, option labels
or default is a link many clients render as clickable, which is the phishing step URL mode
exists to fence (only a URL-mode request's ``url`` is a link, and clients show it with its
host). The texts a client shows are walked with their pointers; URLs in them are found by
:func:`elicitguard.checks.url_text.find_urls_in_text` and kept when a renderer would
auto-link them (schemes from :mod:`elicitguard.checks.schemes`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from elicitguard.base.decision import Hit
from elicitguard.base.pointer import escape_pointer
from elicitguard.checks.schemes import AUTOLINKED_SCHEMES, DANGEROUS_LINK_SCHEMES, NAMED_SCHEMES
from elicitguard.checks.urls import (
    find_urls_in_text,
)
from elicitguard.engine.builtin.form_rules import FormParams
from elicitguard.engine.context import CheckContext, check
from elicitguard.protocol.items import Item, ItemKind

__all__: list[str] = []

Params = Mapping[str, Any]

_URI_FORMATS: Final = frozenset({"uri", "uri-reference", "iri", "iri-reference", "url"})
_LABEL_LISTS: Final = ("enum", "enumNames")
_CHOICE_LISTS: Final = ("oneOf", "anyOf")
_MAX_LABEL: Final = 40


def _label(key: str) -> str:
    clean = "".join(c if c.isprintable() else "?" for c in key[:_MAX_LABEL])
    return "`" + clean.replace("`", "'") + ("…" if len(key) > _MAX_LABEL else "") + "`"


def _choice_texts(schema: Mapping[str, Any], pointer: str) -> Iterator[tuple[str, str, str]]:
    """Labels a client shows for a choice: enum values, enumNames, oneOf/anyOf titles."""
    for name in _LABEL_LISTS:
        values = schema.get(name)
        if isinstance(values, list):
            for index, value in enumerate(values):
                if isinstance(value, str):
                    yield f"{pointer}/{name}/{index}", value, "an option label"
    for name in _CHOICE_LISTS:
        options = schema.get(name)
        if isinstance(options, list):
            for index, option in enumerate(options):
                if isinstance(option, Mapping) and isinstance(option.get("title"), str):
                    yield f"{pointer}/{name}/{index}/title", option["title"], "an option label"


def _field_texts(
    name: str, prop: Mapping[str, Any], pointer: str
) -> Iterator[tuple[str, str, str]]:
    label = _label(name)
    for key in ("title", "description"):
        if isinstance(prop.get(key), str):
            yield f"{pointer}/{key}", prop[key], f"the {key} of field {label}"
    default = prop.get("default")
    # A URI field's default is the value asked about, shown as editable text, not a link.
    fmt = prop.get("format")
    if not (isinstance(fmt, str) and fmt in _URI_FORMATS):
        if isinstance(default, str):
            yield f"{pointer}/default", default, f"the default of field {label}"
        elif isinstance(default, list):
            for index, value in enumerate(default):
                if isinstance(value, str):
                    yield f"{pointer}/default/{index}", value, f"the default of field {label}"
    for found_pointer, text, _ in _choice_texts(prop, pointer):
        yield found_pointer, text, f"an option label of field {label}"
    items = prop.get("items")
    if isinstance(items, Mapping):
        for found_pointer, text, _ in _choice_texts(items, pointer + "/items"):
            yield found_pointer, text, f"an option label of field {label}"


def _could_link(value: Any) -> bool:
    """False when no string anywhere in ``value`` has a ``:`` or ``.``: no URL can be there.

    A sound prefilter for :func:`_field_texts` (every pattern of ``find_urls_in_text`` needs
    one of the two); it spares building pointers and labels for ordinary fields (issue 9).
    """
    if isinstance(value, str):
        return ":" in value or "." in value
    if isinstance(value, (int, float, bool)) or value is None:
        return False
    if isinstance(value, (dict, Mapping)):  # dict first: the ABC check is slow
        return any(_could_link(v) for v in value.values())
    if isinstance(value, list):
        return any(_could_link(v) for v in value)
    return False


def _form_texts(item: Item) -> Iterator[tuple[str, str, str]]:
    """Every text a client shows for a request: (pointer, text, where in words)."""
    data = item.data
    if not isinstance(data, Mapping):
        return
    message = data.get("message")
    if isinstance(message, str):
        yield item.pointer + "/message", message, "the message"
    if item.kind is not ItemKind.FORM_REQUEST:
        return
    schema = data.get("requestedSchema")
    if not isinstance(schema, Mapping):
        return
    base = item.pointer + "/requestedSchema"
    for key in ("title", "description"):
        if isinstance(schema.get(key), str):
            yield f"{base}/{key}", schema[key], f"the form's {key}"
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            if isinstance(prop, Mapping) and _could_link(prop):
                pointer = f"{base}/properties/{escape_pointer(str(name))}"
                yield from _field_texts(str(name), prop, pointer)


def _clickable(url: str, text: str) -> bool:
    """True when a renderer would make ``url`` a link in ``text``.

    ``www.`` links, bare domains and http(s)/ftp/mailto URLs are auto-linked; any scheme
    is a link inside Markdown link syntax (``[x](scheme:…)`` or ``<scheme:…>``), and
    ``javascript:``-like schemes count wherever they appear. Other schemes in plain text
    (``postgres://…``, ``s3://…``) stay text.
    """
    head, colon, _ = url.partition(":")
    scheme = head.lower() if colon and "/" not in head and "." not in head else ""
    if not scheme or scheme in AUTOLINKED_SCHEMES or scheme in DANGEROUS_LINK_SCHEMES:
        return True
    return f"]({url}" in text or f"<{url}" in text


def _kind_of_link(url: str) -> str:
    head = url.split(":", 1)[0].lower() if ":" in url else ""
    if "://" in url or head in NAMED_SCHEMES:
        return f"a {head}: URL" if head in NAMED_SCHEMES else "a URL"
    return "a bare web address"


# EG202 is a form rule: it takes (and ignores) the params ``EG2*: {params: ...}`` sets.
@check("urls.clickable_in_form", pure=True, params=FormParams)
def clickable_in_form(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG202: a URL in a form request's texts, or in the message of a URL-mode request."""
    url_mode = item.kind is ItemKind.URL_REQUEST
    for pointer, text, where in _form_texts(item):
        links = [link for link in find_urls_in_text(text) if _clickable(link, text)]
        if not links:
            continue
        what = _kind_of_link(links[0])
        if url_mode:
            detail = (
                f"The message of a URL-mode request contains {what}; clients must not render "
                "it as a link (only `url` is one)"
            )
        else:
            subject = where if where.startswith("the form's") else f"{where} of a form request"
            detail = (
                f"{subject[0].upper()}{subject[1:]} contains {what}, which a client may "
                "render as a clickable link"
            )
        yield Hit(pointer=pointer, args={"detail": detail}, value=links[0])
