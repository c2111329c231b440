"""Everywhere a form answer (or a form default) can hide a credential.

Why: the plain scan reads one string as written. A user pasting a secret, or a hostile
server pre-filling one, has other places to put it: glued to other text, encoded (percent
twice, base64, hex, escapes, JSON inside a string), nested in objects or lists although the
schema is flat, split over two adjacent fields, or written as a sentence. This module looks
in each of those places, bounded in depth and count, and returns matches that carry the
value only for the caller's keyed fingerprint.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import re2

from elicitguard.checks.secrets._catalogue import catalogue
from elicitguard.checks.secrets._community import (
    community_scan,
    vendor_call_scan,
    vendor_labelled_scan,
)
from elicitguard.checks.secrets._decode import decoded_whole, json_inside, readings
from elicitguard.checks.secrets._prose import scan_prose
from elicitguard.checks.secrets._scan import scan_glued, scan_text, scan_value
from elicitguard.checks.secrets._shapes import der_private_key, printed_card, seed_phrase
from elicitguard.checks.secrets._types import SecretMatch

__all__ = ["HiddenSecret", "hidden_secret", "nested_secret", "split_secret"]

_MAX_DEPTH: Final = 8
_MAX_STRINGS: Final = 256
_MAX_SPLIT_FIELDS: Final = 32
_RANK: Final = {"high": 2, "medium": 1}
_CACHED_CHARS: Final = 4096


@dataclass(frozen=True, slots=True)
class HiddenSecret:
    """A credential found off the plain path, and how it was hidden."""

    match: SecretMatch
    how: str  # "glued", "decoded", "prose", "nested", "split", "spaced", "community", "shape"
    language: str | None = None


def _best(matches: Sequence[SecretMatch]) -> SecretMatch | None:
    kept = [m for m in matches if m.confidence in _RANK]
    return max(kept, key=lambda m: _RANK[m.confidence]) if kept else None


def _direct(text: str, key_name: str | None) -> tuple[SecretMatch, str, str | None] | None:
    """The catalogue (with key support), then glued tokens, then prose, on one reading."""
    match = _best(scan_value(text, key_name))
    if match is not None:
        return match, "value", None
    match = _best(scan_glued(text))
    if match is not None:
        return match, "glued", None
    for phrase in scan_prose(text):
        return phrase.match, "prose", phrase.language
    match = _best(community_scan(text))
    if match is not None:
        return match, "community", None
    match = _best(vendor_labelled_scan(text))
    if match is not None:
        return match, "community", None
    match = _best(vendor_call_scan(text))
    if match is not None:
        return match, "community", None
    return None


def hidden_secret(text: str, key_name: str | None = None) -> HiddenSecret | None:
    """A credential in ``text`` that the plain scan of ``text`` does not see.

    Glued tokens, prose, the community catalogue, then every decoded reading (each judged
    the same way, with ``key_name``), then JSON inside the string walked as nested content.
    Short values are cached: forms repeat their defaults and users their answers.
    """
    if len(text) < 4:
        return None
    if len(text) <= _CACHED_CHARS:
        return _hidden_cached(text, key_name)
    return _hidden(text, key_name)


@functools.lru_cache(maxsize=8192)
def _hidden_cached(text: str, key_name: str | None) -> HiddenSecret | None:
    return _hidden(text, key_name)


# What an encoded file starts with once its base64 is undone: an image or an archive pasted
# into a field is data; the vendor prefixes glued tokens are looked for ("EAAA", "AKIA")
# occur by chance inside a long run of base64, so such a run is not searched for them.
_FILE_MAGIC = (
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"%PDF",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"RIFF",
    b"\x00\x00\x00",
    b"<svg",
    b"<?xml",
)
_BASE64_RUN = re2.compile(r"(?:data:[\w/+.-]+;base64,)?([A-Za-z0-9+/]{64,}={0,2})")


def _encoded_file(text: str) -> bool:
    """Whether ``text`` is one base64 run (or data: URL) that decodes to a known file type."""
    match = _BASE64_RUN.fullmatch(text.strip())
    if match is None:
        return False
    body = match.group(1)
    try:
        head = base64.b64decode(body[:64] + "=" * (-len(body[:64]) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return head.startswith(_FILE_MAGIC)


def _hidden(text: str, key_name: str | None) -> HiddenSecret | None:
    if _encoded_file(text):
        return None
    shaped = seed_phrase(text) or printed_card(text) or der_private_key(text)
    if shaped is not None:
        return HiddenSecret(shaped, "shape", None)
    disguised = _disguised(text)
    if disguised is not None:
        return disguised
    found = _direct(text, None)
    if found is not None and found[1] != "value":
        return HiddenSecret(found[0], found[1], found[2])
    for decoded in readings(text):
        inner = _direct(decoded, key_name)
        if inner is not None:
            return HiddenSecret(inner[0], "decoded", inner[2])
        disguised = _disguised(decoded)  # an encoding of a disguise: base64 of reversed text
        if disguised is not None:
            return HiddenSecret(disguised.match, "decoded", disguised.language)
        parsed = json_inside(decoded)
        if parsed is not None:
            nested = nested_secret(parsed)
            if nested is not None:
                return HiddenSecret(nested.match, "decoded", nested.language)
    parsed = json_inside(text)
    if parsed is not None:
        nested = nested_secret(parsed)
        if nested is not None:
            return HiddenSecret(nested.match, "nested", nested.language)
    return None


_MAX_SPACED_CHARS: Final = 1024


def _disguised(text: str) -> HiddenSecret | None:
    """A token written in pieces, backwards (``xUNIp0…_phg``) or under ROT13 (``tuc_…`` for
    ``ghp_…``, the one letter cipher anyone applies by hand or with ``tr``). Text turned
    round is read by the catalogue's formats only: prose and keyed values are not written
    that way, and a vendor's prefix and shape do not appear by chance in ordinary text
    reversed or rotated."""
    spaced = _spaced_out(text)
    if spaced is not None or _TOKEN_RUN_RE.search(text) is None:
        return spaced
    return _catalogue_find(text[::-1]) or _catalogue_find(codecs.encode(text, "rot13"))


def _spaced_out(text: str) -> HiddenSecret | None:
    """A token written in pieces with spaces between them (``ghp_ wWPw5k4a XcaT…``,
    ``g h p _ w W P …``): the pieces read joined, as :func:`split_secret` reads fields."""
    if len(text) > _MAX_SPACED_CHARS or not any(ch.isspace() for ch in text):
        return None  # one space or tab is enough to cut a token in two
    pieces = [("", piece) for piece in text.split()]
    found = _joined_find(pieces, ("",))
    if found is None or found[1].match.type in _keyed_formats():
        return None  # ``Authorization: Bearer $KEY`` joined is a key and a variable, not a token
    return HiddenSecret(found[1].match, "spaced", None)


_TOKEN_RUN_RE: Final = re2.compile(r"[A-Za-z0-9_+/=.-]{20,}")


def _catalogue_find(text: str) -> HiddenSecret | None:
    """A catalogue format in ``text``, found with or without word boundaries."""
    match = _best(scan_text(text)) or _best(scan_glued(text))
    return HiddenSecret(match, "decoded", None) if match is not None else None


@functools.cache
def _keyed_formats() -> frozenset[str]:
    """Formats that are a name and a value, not a token's own shape (the generic ones)."""
    keyed = {"keyed-assignment", "labelled-token"}
    return frozenset(
        {e.id for e in catalogue() if e.structure in keyed}
        | {"url-basic-auth", "bearer-token", "authorization-header"}
    )


def _leaves(value: Any, key: str | None, depth: int = 0) -> Iterator[tuple[str | None, str]]:
    """(nearest key, text) of every string and integer in a nested value."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, bool):
        return
    elif isinstance(value, int):
        yield key, str(value)
    elif isinstance(value, Mapping):
        for child_key, child in list(value.items())[:_MAX_STRINGS]:
            yield from _leaves(child, str(child_key), depth + 1)
    elif isinstance(value, list | tuple):
        for child in value[:_MAX_STRINGS]:
            yield from _leaves(child, key, depth + 1)


def nested_secret(value: Any, key_name: str | None = None) -> HiddenSecret | None:
    """A credential anywhere inside an object or list (each string under its own key)."""
    leaves = list(itertools.islice(_leaves(value, key_name), _MAX_STRINGS))
    for key, text in leaves:
        match = _best(scan_value(text, key))
        if match is not None:
            return HiddenSecret(match, "nested")
        hidden = hidden_secret(text, key)
        if hidden is not None:
            return HiddenSecret(hidden.match, "nested", hidden.language)
    # A token cut into list items or an object's values (``["ghp_…", "…"]``, one character
    # per item): the strings read joined in order, as adjacent fields are.
    joined = _joined_find([(key or "", text) for key, text in leaves], ("",))
    return HiddenSecret(joined[1].match, "nested") if joined is not None else None


def split_secret(values: Sequence[tuple[str, str]]) -> tuple[str, HiddenSecret] | None:
    """A credential split over adjacent answer fields, as (first field, finding).

    The fields' strings are read joined in answer order; a match counts only when it
    crosses a boundary between two fields (one field alone was already judged).
    """
    pieces = [(key, text) for key, text in values if text][:_MAX_SPLIT_FIELDS]
    if len(pieces) < 2:
        return None
    # In answer order; then each part decoded on its own (two base64 halves), and two
    # halves in swapped order, read glued. Only a token's own format counts: a label in one
    # field and a value in the next ("deploy-key-2026", then a commit SHA) is no token cut
    # in two, and each field alone was already judged under its own key.
    decoded = [(key, _plain(text)) for key, text in pieces]
    versions = [pieces] if decoded == pieces else [pieces, decoded]
    if len(pieces) == 2:
        versions += [[second, first] for first, second in versions]
    for index, order in enumerate(versions):
        found = _joined_find(order, ("", " ") if index == 0 else ("",))
        if found is not None and found[1].match.type not in _keyed_formats():
            return found
    return None


def _plain(text: str) -> str:
    """``text`` decoded when it is one encoded run (base64, hex, percent), else itself."""
    if len(text) < 8 or any(ch.isspace() for ch in text):
        return text
    whole = decoded_whole(text)
    if whole is not None:
        return whole
    decoded = readings(text)
    return decoded[0] if decoded else text


def _joined_find(
    pieces: Sequence[tuple[str, str]], glues: tuple[str, ...] = ("", " ")
) -> tuple[str, HiddenSecret] | None:
    """A catalogue match in the pieces read joined that crosses a boundary between two."""
    if len(pieces) < 2:
        return None
    for glue in glues:
        joined = glue.join(text for _key, text in pieces)
        bounds: list[tuple[int, int, str]] = []
        at = 0
        for key, text in pieces:
            bounds.append((at, at + len(text), key))
            at += len(text) + len(glue)
        for match in [*scan_text(joined), *scan_glued(joined)]:
            if match.confidence not in _RANK:
                continue
            touched = [key for lo, hi, key in bounds if match.start < hi and match.end > lo]
            if len(touched) >= 2:
                return touched[0], HiddenSecret(match, "split")
    return None
