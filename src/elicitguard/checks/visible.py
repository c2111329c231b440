"""The visible form of text: what a person reads, not what a rule can be fooled by.

Zero-width, bidi, soft-hyphen, variation-selector, tag and filler characters are invisible,
so they must not split a word a lexicon looks for or a token the secret catalogue knows;
full-width and other compatibility forms read as their plain letters (NFKC). One definition,
shared by the form classifier and the secret scan.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["INVISIBLE", "visible_form"]

#: Invisible format characters: soft hyphen, combining grapheme joiner, Hangul and Khmer
#: fillers, Mongolian vowel separator, zero-width and directional marks, bidi embeddings and
#: isolates, word joiners and invisible operators, variation selectors, the byte-order mark,
#: musical formatting controls and the tag characters.
INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def visible_form(text: str) -> str:
    """``text`` without invisible format characters, in NFKC."""
    return unicodedata.normalize("NFKC", INVISIBLE.sub("", text))
