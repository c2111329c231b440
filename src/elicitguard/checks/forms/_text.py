"""Text normalisation shared by the lexicon compiler and the scanner.

Lexicon terms and form text go through the same function, so matching is a plain substring
search: NFKC folds full-width and compatibility forms, casefold and an accent table make
"Contraseña", "CONTRASENA" and "contraseña" equal (and Greek tonos, Vietnamese tone marks,
Arabic vowel marks and hamza seats, Persian and Arabic yeh/kaf), and word separation is
encoded in the text itself. Every run of spaced-script letters (Latin, Greek, Cyrillic,
Hangul, Arabic, Hebrew, Indic) is written as `` word `` (one space on each side), so a
bounded term `` pin `` cannot match inside "pinned", while runs of scripts written without
spaces (CJK, kana, Thai, Lao, Khmer, Myanmar) stay as they are and match anywhere.

Combining marks of Indic and Southeast Asian scripts are letters for this purpose: "पासवर्ड"
is one word, not five. The *disguised* reading lives in :mod:`._reveal`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from elicitguard.checks.visible import visible_form

# CJK ideographs, kana, CJK symbols with letters (々, 〆), compatibility ideographs, ext. B+,
# and the Southeast Asian scripts written without spaces between words.
_UNSPACED = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
)
# Marks that belong to the letter before them (not separators): Indic, Thai, Lao, Khmer,
# Myanmar, Hebrew points, Arabic marks, kana voicing (not the Indic, Myanmar and Khmer full
# stops: those end a sentence).
_MARKS = (
    "\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0900-\u0963\u0966-\u0dff"
    "\u0e00-\u0eff\u1000-\u1049\u104c-\u109f\u1780-\u17d3\u17d7-\u17ff\u3099\u309a"
)
_CAMEL = re.compile(
    r"(?<=[a-zß-öø-ÿ0-9])(?=[A-ZÀ-ÖØ-Þ])|(?<=[A-ZÀ-ÖØ-Þ])(?=[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ])"
)
_LETTER_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)")
_SEPARATORS = re.compile(rf"(?:[^\w{_MARKS}]|_)+")
_RUNS = re.compile(rf"([^\s{_UNSPACED}]+)|([{_UNSPACED}]+)")
_LIGATURES = {"æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ı": "i", "ŀ": "l"}
#: Arabic-script spelling variants that readers treat as one letter.
_ARABIC = {
    "\u0623": "\u0627",  # alef with hamza above -> alef
    "\u0625": "\u0627",  # alef with hamza below -> alef
    "\u0622": "\u0627",  # alef with madda -> alef
    "\u0671": "\u0627",  # alef wasla -> alef
    "\u064a": "\u06cc",  # Arabic yeh -> Farsi yeh
    "\u0649": "\u06cc",  # alef maksura -> Farsi yeh
    "\u0643": "\u06a9",  # Arabic kaf -> keheh
    "\u0629": "\u0647",  # teh marbuta -> heh
}
#: Pictographs that stand for a secret word in a label ("Your 🔑", "🔐 Master"): read as
#: the word, so a title made of the picture asks as plainly as one made of letters.
_SYMBOL_WORDS = {
    "\U0001f511": " secret key ",  # key
    "\U0001f5dd": " secret key ",  # old key
    "\U0001f510": " password ",  # closed lock with key
}
#: Ranges whose precomposed letters fold to their base letter: Latin-1 to Latin Extended-B,
#: Greek, Cyrillic, Latin Extended Additional (Vietnamese) and Greek Extended.
_FOLDED_RANGES = ((0xC0, 0x250), (0x370, 0x400), (0x400, 0x500), (0x1E00, 0x2000))


def _accent_table() -> dict[int, str | None]:
    """Map accented letters to their base letter ("é" -> "e", "ά" -> "α", "ậ" -> "a")."""
    table: dict[int, str | None] = {}
    for lo, hi in _FOLDED_RANGES:
        for code in range(lo, hi):
            char = chr(code)
            base = unicodedata.normalize("NFKD", char)[:1]
            if base and base != char and base.isalpha() and unicodedata.combining(base) == 0:
                table[code] = base.casefold()
    table.update({ord(k): v for k, v in _LIGATURES.items()})
    table.update({ord(k): v for k, v in _ARABIC.items()})
    table.update({ord(k): v for k, v in _SYMBOL_WORDS.items()})
    for code in range(0x300, 0x370):  # combining accents left by casefold ("İ" -> "i̇")
        table[code] = None
    for code in (0x640, *range(0x64B, 0x653)):  # tatweel and Arabic short vowels
        table[code] = None
    return table


_FOLD = _accent_table()


@lru_cache(maxsize=16384)
def normalize(text: str, *, identifier: bool = False) -> str:
    """Return the matching form of ``text``; ``identifier`` also splits camelCase keys."""
    return _normalize_visible(visible_form(text), identifier)


def _normalize_visible(folded: str, identifier: bool) -> str:
    """:func:`normalize` of text that is already in visible form."""
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
