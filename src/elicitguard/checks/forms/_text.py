"""Text normalisation shared by the lexicon compiler and the scanner.

Lexicon terms and form text go through the same function, so matching is a plain substring
search: NFKC folds full-width and compatibility forms, casefold and an accent table make
"Contraseña", "CONTRASENA" and "contraseña" equal, and word separation is encoded in the
text itself. Every run of spaced-script letters (Latin, Greek, Cyrillic, Hangul) is written
as `` word `` (one space on each side), so a bounded term `` pin `` cannot match inside
"pinned" while CJK and kana runs stay as they are and match anywhere (no ``\\b`` for CJK).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from elicitguard.checks.visible import visible_form

# CJK ideographs, kana, CJK symbols with letters (々, 〆), compatibility ideographs, ext. B+.
_UNSPACED = "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3040-\u30ff\u31f0-\u31ff\u3400-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_CAMEL = re.compile(
    r"(?<=[a-zß-öø-ÿ0-9])(?=[A-ZÀ-ÖØ-Þ])|(?<=[A-ZÀ-ÖØ-Þ])(?=[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ])"
)
_LETTER_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)")
_SEPARATORS = re.compile(r"[\W_]+")
_RUNS = re.compile(rf"([^\s{_UNSPACED}]+)|([{_UNSPACED}]+)")
_LIGATURES = {"æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ı": "i", "ŀ": "l"}


def _accent_table() -> dict[int, str]:
    """Map accented Latin letters to their base letter ("é" -> "e", "ü" -> "u")."""
    table: dict[int, str] = {}
    for code in range(0xC0, 0x250):
        char = chr(code)
        base = unicodedata.normalize("NFKD", char)[0]
        if base != char and base.isascii() and base.isalpha():
            table[code] = base.casefold()
    table.update({ord(k): v for k, v in _LIGATURES.items()})
    return table


_FOLD = _accent_table()


@lru_cache(maxsize=16384)
def normalize(text: str, *, identifier: bool = False) -> str:
    """Return the matching form of ``text``; ``identifier`` also splits camelCase keys."""
    folded = visible_form(text)
    if identifier:
        folded = _CAMEL.sub(" ", folded)
    folded = _LETTER_DIGIT.sub(" ", folded)
    folded = folded.casefold().translate(_FOLD)
    folded = _SEPARATORS.sub(" ", folded)
    return "".join(
        f" {spaced} " if spaced else unspaced for spaced, unspaced in _RUNS.findall(folded)
    )


def squeeze(gap: str) -> tuple[str, ...]:
    """Split the text between two matches into its words (CJK runs count as one word)."""
    return tuple(gap.split())
