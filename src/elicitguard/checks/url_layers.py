"""The layers a URL value is wrapped in: percent-encoded again, or base64 text.

Why: a secret percent-encoded twice (``%2524``), thrice, or base64-wrapped is as live as a
plain one, and detectors that read only the first decoding miss it. :func:`decoded_layers`
peels each layer until the value is stable, at most four (bounded work on hostile input);
the URL parser labels each layer ``>decoded`` so every check sees it.
"""

from __future__ import annotations

import binascii
import re
from typing import Final
from urllib.parse import unquote

__all__ = ["B64_TEXT_RE", "could_unwrap", "decode_b64", "decoded_layers", "is_pairs"]

_MAX_LAYERS: Final = 4
_PCT_RE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
#: A value that may be base64 (or base64url) text: 12 characters of its alphabet or more.
B64_TEXT_RE: Final = re.compile(r"^[A-Za-z0-9_\-+/]{12,}={0,2}$")
_PRINTABLE_RE: Final = re.compile(r"^[\x20-\x7e]+$")


def _b64_text(value: str) -> str | None:
    """Printable ASCII text that ``value`` is the base64 (or base64url) encoding of."""
    if len(value) < 12 or len(value) % 4 == 1 or not B64_TEXT_RE.match(value):
        return None
    if value.isdigit() or _HEXISH_RE.match(value):
        return None  # numbers and hex digests are not base64 text
    if not _may_be_text(value):
        return None
    try:
        raw = decode_b64(value)
        text = raw.decode("ascii")
    except (binascii.Error, ValueError):
        return None
    return text if len(text) >= 8 and _PRINTABLE_RE.match(text) else None


_HEXISH_RE: Final = re.compile(r"^[0-9a-fA-F]+$")
#: The base64 characters whose six bits can start a printable byte (0x20-0x7E): values 8
#: to 31, ``I`` to ``Z`` and ``a`` to ``f`` (the first byte is that value times four, plus
#: the top two bits of the second character).
_TEXT_FIRST: Final = frozenset("IJKLMNOPQRSTUVWXYZabcdef")
_PRINTABLE_HEAD_RE: Final = re.compile(rb"[\x20-\x7e]*")


def _may_be_text(value: str) -> bool:
    """False when the first three bytes ``value`` decodes to are not all printable ASCII.

    Why: random tokens (``state``, ``code_challenge``, ``eg_bind``) match the base64
    alphabet, and each used to be decoded whole only to fail the printable test; their
    first character or first bytes almost always fail it already. Exact: ``value`` is
    base64 alphabet from its first character (the caller matched :data:`B64_TEXT_RE`, which
    allows ``=`` only after twelve characters), and base64 decodes each four characters to
    three bytes on their own, so the first four characters give the first three bytes of
    the whole decoding.
    """
    if value[0] not in _TEXT_FIRST:
        return False
    try:
        head = decode_b64(value[:4])
    except (binascii.Error, ValueError):
        return True  # let the whole decoding decide
    return _PRINTABLE_HEAD_RE.fullmatch(head) is not None


_TO_STANDARD: Final = str.maketrans("-_", "+/")


def decode_b64(value: str) -> bytes:
    """``value`` (base64 or base64url, padding optional) decoded, as
    ``base64.urlsafe_b64decode`` of it padded decodes it: one ``binascii`` call, without
    the ``base64`` module's per-call conversions (a URL's random tokens are tried one by
    one). Raises ``binascii.Error`` (a ``ValueError``) as that does."""
    padded = value + "=" * (-len(value) % 4)
    return binascii.a2b_base64(padded.translate(_TO_STANDARD))


_INNER_PAIRS_RE: Final = re.compile(
    r"^[A-Za-z0-9_.\-\[\]]{1,64}=[^&\s]*(?:&[A-Za-z0-9_.\-\[\]]{1,64}=[^&\s]*)*$"
)


def is_pairs(text: str) -> bool:
    """A decoded ``key=value&...`` query (base64 text with ``=`` padding is not one)."""
    return "=" in text and _INNER_PAIRS_RE.match(text) is not None and not B64_TEXT_RE.match(text)


def decoded_layers(value: str) -> list[str]:
    """Each further decoding of ``value`` until it is stable: percent-decoding (a value
    encoded twice or thrice) and base64 text, at most four layers (bounded work)."""
    out: list[str] = []
    text = value
    for _ in range(_MAX_LAYERS):
        if out and is_pairs(text):
            break  # a decoded query: its values are decoded one by one, not as one text
        if "%" in text and _PCT_RE.search(text):
            decoded = unquote(text, errors="replace")
        else:
            decoded = _b64_text(text.strip()) or text
        if decoded == text:
            break
        out.append(decoded)
        text = decoded
    return out


def could_unwrap(value: str) -> bool:
    """Cheap test that :func:`decoded_layers` might decode something."""
    return ("%" in value and _PCT_RE.search(value) is not None) or (
        len(value) >= 12 and B64_TEXT_RE.match(value) is not None
    )
