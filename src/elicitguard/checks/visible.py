"""The visible form of text: what a person reads, not what a rule can be fooled by.

Zero-width, bidi and soft-hyphen characters are invisible, so they must not split a word a
lexicon looks for or a token the secret catalogue knows; full-width and other compatibility
forms read as their plain letters (NFKC). One definition, shared by the form classifier and
the secret scan.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["INVISIBLE", "visible_form"]

#: Invisible format characters: soft hyphen, Mongolian vowel separator, zero-width and
#: directional marks, bidi embeddings and isolates, word joiners, the byte-order mark.
INVISIBLE: Final = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def visible_form(text: str) -> str:
    """``text`` without invisible format characters, in NFKC."""
    return unicodedata.normalize("NFKC", INVISIBLE.sub("", text))
