"""Invisible, bidi-control and delimiter look-alike characters anywhere in a URL (EG405).

Why: a URL shown for consent must read as what it is.  Bidi controls reorder what a person
sees (``https://evil.example/‮moc.lapyap``), zero-width and other invisible characters hide
differences, and slash, dot, colon or at-sign look-alikes (U+2044 FRACTION SLASH, U+3002
IDEOGRAPHIC FULL STOP, U+FF20 FULLWIDTH COMMERCIAL AT) make ``evil.example⁄paypal.com`` look
like a path on paypal.com.  These are checked on the raw URL text, not on the parsed host,
because parsers map or drop several of them before a host check could see them.

Categories: ``bidi_control``, ``invisible``, ``control``, ``whitespace``,
``slash_lookalike``, ``dot_lookalike``, ``delimiter_lookalike``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

__all__ = ["CharIssue", "find_invisible_or_deceptive_chars"]


@dataclass(frozen=True, slots=True)
class CharIssue:
    """One suspicious character: position in the text, ``U+XXXX``, name, category."""

    index: int
    codepoint: str
    name: str
    category: str


def _cps(*items: int | tuple[int, int]) -> frozenset[str]:
    out: set[str] = set()
    for item in items:
        lo, hi = item if isinstance(item, tuple) else (item, item)
        out.update(chr(c) for c in range(lo, hi + 1))
    return frozenset(out)


_BIDI = _cps(0x061C, 0x200E, 0x200F, (0x202A, 0x202E), (0x2066, 0x2069))
_INVISIBLE = _cps(
    0x00AD,  # soft hyphen
    0x034F,  # combining grapheme joiner
    0x115F,
    0x1160,  # Hangul fillers
    0x17B4,
    0x17B5,  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200D),  # zero-width space, ZWNJ, ZWJ
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x206A, 0x206F),  # deprecated format characters
    0x3164,  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    0xFEFF,  # zero-width no-break space / BOM
    0xFFA0,  # half-width Hangul filler
    (0xFFF9, 0xFFFB),  # interlinear annotation
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0000, 0xE007F),  # tags
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
_SLASH = _cps(
    0x0337,
    0x0338,  # combining short/long solidus overlay
    0x1735,  # Philippine single punctuation
    0x2044,  # fraction slash
    0x2215,  # division slash
    0x2216,  # set minus (backslash-like)
    0x2571,
    0x2572,  # box drawings diagonals
    0x27CB,
    0x27CD,  # mathematical rising/falling diagonal
    0x29F5,
    0x29F8,
    0x29F9,  # reverse solidus operator, big solidus, big reverse solidus
    0x2AFB,
    0x2AFD,  # triple/double solidus
    0x2F03,  # Kangxi radical slash
    0x3033,  # vertical kana repeat mark upper half
    0xFE68,  # small reverse solidus
    0xFF0F,  # fullwidth solidus
    0xFF3C,  # fullwidth reverse solidus
)
_DOT = _cps(
    0x06D4,  # Arabic full stop
    0x0701,
    0x0702,  # Syriac supralinear/sublinear full stop
    0x2024,  # one dot leader
    0x2219,  # bullet operator
    0x22C5,  # dot operator
    0x2E33,  # raised dot
    0x3002,  # ideographic full stop
    0xA4F8,  # Lisu letter tone mya ti
    0xA60E,  # Vai full stop
    0xFE52,  # small full stop
    0xFF0E,  # fullwidth full stop
    0xFF61,  # halfwidth ideographic full stop
    0x10A50,  # Kharoshthi punctuation dot
    0x1D16D,  # musical symbol combining augmentation dot
)
_DELIMITER = _cps(
    0x02D0,
    0x02F8,
    0x0589,  # Armenian full stop looks like a colon
    0x05C3,
    0x2236,
    0xA789,
    0xFE13,
    0xFE55,
    0xFF1A,  # colon look-alikes
    0xFE6B,
    0xFF20,  # at-sign look-alikes
    0x037E,
    0xFE56,
    0xFF1F,  # question mark look-alikes (Greek question mark, small, fullwidth)
    0xFE5F,
    0xFF03,  # number sign look-alikes
    0xFE6A,
    0xFF05,  # percent look-alikes
    0xFE60,
    0xFF06,  # ampersand look-alikes
    0xFE66,
    0xFF1D,  # equals look-alikes
)


def _category(ch: str) -> str | None:
    if ch in _BIDI:
        return "bidi_control"
    if ch in _INVISIBLE:
        return "invisible"
    if ch in _SLASH:
        return "slash_lookalike"
    if ch in _DOT:
        return "dot_lookalike"
    if ch in _DELIMITER:
        return "delimiter_lookalike"
    cat = unicodedata.category(ch)
    if cat == "Cf":
        return "invisible"
    if cat == "Cc":
        return "control"
    if cat in ("Zs", "Zl", "Zp") and ch != " ":
        return "whitespace"
    return None


def find_invisible_or_deceptive_chars(text: str) -> list[CharIssue]:
    """Every invisible, bidi-control or delimiter look-alike character in ``text``.

    ``index`` is the position in ``text`` (Python string index).  An ASCII space is not
    reported here (URL parsers reject or encode it); ASCII controls are (``control``).
    """
    if text.isascii() and text.isprintable():
        return []
    issues: list[CharIssue] = []
    for index, ch in enumerate(text):
        category = _category(ch)
        if category is not None:
            cp = ord(ch)
            issues.append(
                CharIssue(
                    index=index,
                    codepoint=f"U+{cp:04X}",
                    name=unicodedata.name(ch, f"<control-{cp:04X}>"),
                    category=category,
                )
            )
    return issues
