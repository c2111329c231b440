"""Whether a value is an unguessable random handle (EG305's magic links, EG306's binding).

Why: a login, reset or invitation link is live because of a random token in it, and a
URL-mode target is bound to its user by one; both checks ask the same question of a value,
answered here once: at least 64 bits by a conservative estimate of its alphabet, not
words, not a counter, not a placeholder.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Final

from elicitguard.checks.secrets import is_placeholder, shannon_entropy

__all__ = ["is_opaque_handle"]

_UUID_RE: Final = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[1-8][0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$", re.I
)
_HEX_RE: Final = re.compile(r"^[0-9a-f]+$", re.I)
_OPAQUE_ALPHABET_RE: Final = re.compile(r"^[A-Za-z0-9_~.+/=-]+$")


_ASCII_LOWER_RE: Final = re.compile(r"[a-z]")
_ASCII_UPPER_RE: Final = re.compile(r"[A-Z]")
_ASCII_DIGIT_RE: Final = re.compile(r"[0-9]")
_ASCII_OTHER_RE: Final = re.compile(r"[^A-Za-z0-9]")


def _estimated_bits(value: str) -> float:
    """Bits of a random string of this length over the alphabet it uses (ASCII ``value``)."""
    if value.isdigit():
        return len(value) * math.log2(10)
    if _HEX_RE.match(value):
        return len(value) * 4.0
    alphabet = 26 * (
        (_ASCII_LOWER_RE.search(value) is not None) + (_ASCII_UPPER_RE.search(value) is not None)
    )
    alphabet += 10 * (_ASCII_DIGIT_RE.search(value) is not None)
    alphabet += 4 * (_ASCII_OTHER_RE.search(value) is not None)
    return len(value) * math.log2(max(alphabet, 2))


_HANDLE_SPLIT_RE: Final = re.compile(r"[-_.~+/=]")
_DIGIT_RE: Final = re.compile(r"[0-9]")


@functools.lru_cache(maxsize=16384)
def is_opaque_handle(value: str, min_bits: float = 64.0) -> bool:
    """True for an unguessable random-looking handle (≥ 64 bits, not words, not a counter).

    Every test must pass, so the cheap ones run first and the placeholder test last.
    """
    text = value.strip()
    if _UUID_RE.match(text):
        return True
    if len(text) < 12 or not _OPAQUE_ALPHABET_RE.match(text):
        return False
    parts = [p for p in _HANDLE_SPLIT_RE.split(text) if p]
    if all(p.isalpha() and p.islower() for p in parts) or (
        all(p.isalpha() for p in parts) and len(parts) > 1
    ):
        return False
    # The alphabet test above makes ``text`` ASCII, so ``[0-9]`` is ``str.isdigit`` here.
    if len(text) < 20 and not _DIGIT_RE.search(text):
        return False
    # The alphabet test above makes ``text`` ASCII, as :func:`_estimated_bits` needs.
    if _estimated_bits(text) < min_bits or shannon_entropy(text) < 3.0:
        return False
    return not is_placeholder(text)
