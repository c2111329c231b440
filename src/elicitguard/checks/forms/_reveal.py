"""The disguised readings of a text: what it says once its disguise is undone.

A hostile server that knows the lexicons writes "p4ssw0rd", "p a s s w o r d", "p-a-s-s",
"pаssword" with a Cyrillic "а", or "&#112;assword"; a person reads each as "password". This
module produces those readings, as *additional* texts to scan next to the plain one, so a word
that only appears once the disguise is undone is found and marked: needing the fold is itself
a sign of evasion, and the finding says so.

The steps, in order: percent-escapes decoded ("Enter%20your%20password", twice for
"%2570"); HTML character references decoded (twice, for "&amp;#112;"); runs of
three or more single letters separated by spaces or punctuation joined ("p.a.s.s"), and one
mark inside a word dropped ("pass-word"); look-alike
letters of other scripts inside a Latin word (or a word made only of look-alikes) mapped to
their UTS 39 confusable skeleton with the tables in ``checks/data/unicode``; and, as a second
reading, digits and symbols inside words folded to letters (4→a, 0→o, 3→e, 1→i or l, 5→s,
7→t, @→a, $→s, |→l, !→i; inside a Cyrillic word 0→о, 3→з, 4→ч, 6→б, @→а). Digits standing alone ("4 digit PIN") are never folded. Text
inside a right-to-left override is read the way it is displayed, reversed. Last, a word one
slip away from a long secret word ("pasword", "passwrod", "credentails": one letter dropped,
added, changed or two swapped) is read as that word: a reader's eye corrects it, a lexicon
does not. Only words of seven letters or more, against a short list; real words one slip
away ("passport", one letter from German "Passwort") stay themselves.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import cache, lru_cache
from urllib.parse import unquote

from elicitguard.checks.forms._text import _normalize_visible
from elicitguard.checks.visible import visible_form

_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_SPACED = re.compile(r"(?<![^\W_])[^\W_](?:[ \t.\-_*·•|/+~][^\W_](?![^\W_])){2,}")
_CJK = "\u3040-\u30ff\u3400-\u9fff"
_CJK_SPACED = re.compile(f"[{_CJK}](?:[ \\t]+[{_CJK}])+")
_JOINERS = re.compile(r"[ \t.\-_*·•|/+~]")
_GAPS = re.compile(r"[ \t]{2,}")
_CHUNKED = re.compile(r"(?<![^\W_])[^\W\d_]{1,3}(?:[ \t.\-_][^\W\d_]{1,3}){2,}(?![^\W_])")
"""Three or more pieces of one to three letters ("pa ss wo rd", "pri vat eke y")."""
_SPACED_PAIR = re.compile(r"(?<![^\W_])[^\W_](?:[ \t.\-_*·•|/+~][^\W_](?![^\W_]))+")
_LEET_TOKEN = re.compile(r"[A-Za-zÀ-ɏ0-9@$|!]*[A-Za-zÀ-ɏ][A-Za-zÀ-ɏ0-9@$|!]*")
"""A word of Latin letters (accented ones too: "c0ntr4s3ñ4") with digits or symbols in it."""
_LEET_CHARS = re.compile(r"[013457@$|!]")
_INNER_MARK = re.compile(r"(?<=[^\W\d_])[-.·*_'’](?=[^\W\d_])")
_LEET_NEAR = re.compile(r"[A-Za-zÀ-ɏ][013457@$|!]|[013457@$|!][A-Za-zÀ-ɏ]")
_LEET_I = str.maketrans("0134578@$|!", "oieastbaslI")
_LEET_L = str.maketrans("0134578@$|!", "oleastbaslI")
_WORD = re.compile(r"[^\W\d_]+")
_CYRILLIC_LEET_TOKEN = re.compile("[\u0400-\u04ff0-9@]*[\u0400-\u04ff][\u0400-\u04ff0-9@]*")
"""A Cyrillic word with digits or ``@`` in it ("пар0ль", "п@роль")."""
_CYRILLIC_LEET_NEAR = re.compile("[\u0400-\u04ff][0346@]|[0346@][\u0400-\u04ff]")
_CYRILLIC_LEET = str.maketrans("0346@", "озчба")
_LONG_WORD = re.compile(r"(?<![^\W\d_*])[A-Za-z][A-Za-z*]{5,}[A-Za-z](?![^\W\d_*])")
"""A long Latin word; a ``*`` in it stands for a masked letter ("passw*rd")."""
_SLIP_TARGETS = (
    "password",
    "passwords",
    "passphrase",
    "passcode",
    "passwort",
    "wachtwoord",
    "contrasena",
    "credential",
    "credentials",
    "mnemonic",
    "authenticator",
)
_REAL_WORDS = frozenset(("passport", "passports", "passworte"))
"""Words one slip from a target that are words in their own right ("passport": "passwort")."""


@cache
def _lookalikes() -> dict[int, str]:
    """Non-ASCII letters whose UTS 39 skeleton is one or two ASCII letters ("а" -> "a")."""
    from elicitguard.checks.domains._unicode import _tables  # the project's generated tables

    table: dict[int, str] = {}
    for char, skel in _tables().skeleton_map.items():
        folded = skel.casefold()
        ascii_letters = folded.isascii() and folded.isalpha() and len(folded) <= 2
        if ascii_letters and not char.isascii() and char.isalpha():
            table[ord(char)] = folded
    # Small capitals ("ᴘᴀꜱꜱᴡᴏʀᴅ") read as their letter but have no confusable entry (UTS 39
    # lists only the few that look like another letter): their Unicode names say which.
    for lo, hi in _SMALL_CAPITAL_BLOCKS:
        for code in range(lo, hi):
            name = unicodedata.name(chr(code), "")
            letter = name.removeprefix("LATIN LETTER SMALL CAPITAL ")
            if letter != name and len(letter) == 1 and letter.isascii():
                table.setdefault(code, letter.casefold())
    # Letters of other scripts that stand in for a Latin one by their look although UTS 39
    # does not list them ("ρassωord", "тoken"); used only inside a word that has Latin
    # letters too, like every entry here.
    for char, latin in _FAUX_LATIN.items():
        table.setdefault(ord(char), latin)
    # The same stand-ins with an accent ("pάssword": Greek alpha with tonos, "ё"): read as
    # their base letter once the accent is gone.
    for lo, hi in _ACCENTED_STAND_IN_BLOCKS:
        for code in range(lo, hi):
            base = unicodedata.normalize("NFD", chr(code))[:1]
            if base != chr(code) and ord(base) in table:
                table.setdefault(code, table[ord(base)])
    return table


@cache
def _enclosed() -> dict[int, str]:
    """Enclosed letters NFKC leaves alone ("🅟🅐🅢🅢", "🅿") and regional indicators, as the
    Latin letter they show."""
    table: dict[int, str] = {}
    for code in range(0x1F100, 0x1F200):
        name = unicodedata.name(chr(code), "")
        letter = name.rsplit(" ", 1)[-1]
        if "LATIN CAPITAL LETTER" in name and len(letter) == 1:
            table[code] = letter.casefold()
    for code in range(0x1F1E6, 0x1F200):
        table[code] = chr(code - 0x1F1E6 + ord("a"))
    return table


_ENCLOSED = re.compile("[\U0001f100-\U0001f1ff]")

#: Only those the confusable table lacks (it already has "ρ", "α", "ο", "ι", "ν", "υ").
_FAUX_LATIN = {
    "ω": "w", "ш": "w", "п": "n", "η": "n", "я": "r", "κ": "k", "τ": "t", "т": "t",
    "ε": "e", "χ": "x",
}  # fmt: skip

#: Greek, Cyrillic and Greek Extended: where accented stand-ins live.
_ACCENTED_STAND_IN_BLOCKS = ((0x0370, 0x0530), (0x1F00, 0x2000))

#: Where Unicode keeps the Latin small capitals: IPA extensions, phonetic extensions, Latin
#: Extended-D and -F.
_SMALL_CAPITAL_BLOCKS = ((0x0250, 0x02B0), (0x1D00, 0x1D80), (0xA720, 0xA800), (0x10780, 0x107C0))


def warm_up() -> None:
    """Load the confusable table now (a first form would otherwise pay for it)."""
    _lookalikes()


def _skeleton_word(match: re.Match[str]) -> str:
    """A Latin word with look-alike letters, or one spelled only in look-alikes, as Latin."""
    word = match.group()
    if word.isascii():
        return word
    table = _lookalikes()
    has_ascii = any(c.isascii() for c in word)
    mapped = sum(1 for c in word if ord(c) in table)
    if not mapped or (not has_ascii and (mapped < len(word) or len(word) < 3)):
        return word
    return word.translate(table)


_LEET_POSSESSIVE = re.compile(r"(?<=[A-Za-z0-9])['’]5\b")
"""A possessive in leet ("M0th3r'5"): the ``5`` after the apostrophe is an ``s``."""


def _leet(text: str, table: dict[int, int]) -> str:
    """Fold digits and symbols inside words (never a digit standing alone)."""
    text = _LEET_POSSESSIVE.sub("'s", text)

    def fold(match: re.Match[str]) -> str:
        token = match.group()
        return token.translate(table) if _LEET_CHARS.search(token) else token

    return _LEET_TOKEN.sub(fold, text)


_TAG_INSIDE = re.compile(r"(?<=[^\W\d_])(?:</?[A-Za-z][^<>]{0,40}>)+(?=[^\W\d_])")
"""Markup inside a word ("pass<b></b>word"): a client that renders it shows one word."""
_MARKDOWN_INSIDE = re.compile(r"(?<=[^\W\d_])[*_~`]{1,3}(?=[^\W\d_])")
"""Markdown emphasis inside a word ("pass**word**", "p~~a~~ssword")."""
_NUMBER_SIGN = re.compile(r"(?<=[A-Za-z]) ?#(?![\w#])")
"""A number sign after a word ("card #", "cc#") reads "number"."""


def _strip_marks(word: str) -> str:
    """A Latin word with combining or enclosing marks on its letters ("p⃝a⃝s⃝s⃝",
    "p҉a҉s҉s҉") read without them."""
    return "".join(c for c in word if not unicodedata.category(c).startswith("M"))


_MARKED_LATIN = re.compile(
    r"[A-Za-z][\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
)


def _undisguise(text: str) -> str:
    """HTML references, markup, spaced letters and look-alike letters undone (not yet leet)."""
    out = text
    if "%" in out and _PERCENT_ESCAPE.search(out):  # "Enter%20your%20password", twice encoded too
        out = visible_form(unquote(unquote(out)))
    if "&" in out:
        out = visible_form(html.unescape(html.unescape(out)))
    if "<" in out:
        out = _TAG_INSIDE.sub("", out)
    if "*" in out or "_" in out or "~" in out or "`" in out:
        out = _MARKDOWN_INSIDE.sub("", out)
    if "#" in out:
        out = _NUMBER_SIGN.sub(" number", out)
    if not out.isascii() and _ENCLOSED.search(out):
        out = out.translate(_enclosed())
    if not out.isascii() and _MARKED_LATIN.search(out):
        out = _MARKED_LATIN.sub(lambda m: _strip_marks(m.group()), out)
    if _SPACED.search(out):  # a spaced-out text: its two-letter words are spaced out too
        out = _SPACED_PAIR.sub(lambda m: _JOINERS.sub("", m.group()), out)
        out = _GAPS.sub(" ", out)
    elif _CHUNKED.search(out):  # a word cut into pieces: read joined (a whole word must match)
        out = _CHUNKED.sub(_joined_pieces, out)
    if not out.isascii():
        out = _CJK_SPACED.sub(lambda m: "".join(m.group().split()), out)
        out = visible_form(_WORD.sub(_skeleton_word, out))
    return out


_SHORT_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "my",
        "your",
        "to",
        "of",
        "in",
        "on",
        "is",
        "it",
        "me",
        "we",
        "by",
        "or",
        "and",
        "for",
        "at",
        "as",
        "be",
        "do",
        "if",
        "no",
        "so",
        "up",
        "us",
    ]
)


def _joined_pieces(match: re.Match[str]) -> str:
    """Pieces of a cut word joined, short words leading into them kept apart ("the pa ss
    wo rd" reads "the password")."""
    pieces = _JOINERS.split(match.group())
    lead = 0
    while lead < len(pieces) - 3 and pieces[lead].casefold() in _SHORT_WORDS:
        lead += 1
    return " ".join([*pieces[:lead], "".join(pieces[lead:])])


def _one_slip(word: str, target: str) -> bool:
    """Whether ``word`` is ``target`` with one letter dropped, added, changed or swapped."""
    if word == target or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        i = diff[0]
        return (
            len(diff) == 2
            and diff[1] == i + 1
            and word[i] == target[i + 1]
            and word[i + 1] == target[i]
        )
    short, long_ = (word, target) if len(word) < len(target) else (target, word)
    i = next((k for k, (a, b) in enumerate(zip(short, long_, strict=False)) if a != b), len(short))
    return short[i:] == long_[i + 1 :]


def _corrected(match: re.Match[str]) -> str:
    """A long word read as the secret word it is one slip away from, if any."""
    word = match.group()
    lowered = word.lower()
    if lowered in _REAL_WORDS or lowered in _SLIP_TARGETS:
        return word
    return next((t for t in _SLIP_TARGETS if _one_slip(lowered, t)), word)


def _slips(text: str) -> str:
    """Every long word one slip away from a secret word, corrected."""
    return _LONG_WORD.sub(_corrected, text) if _LONG_WORD.search(text) else text


_OVERRIDE = re.compile("\u202e([^\u202a-\u202e]*)(?:\u202c|$)")


def _as_displayed(text: str) -> str:
    """Text inside a right-to-left override as the reader sees it ("\u202edrowssap")."""
    return _OVERRIDE.sub(lambda m: m.group(1)[::-1], text)


def _cyrillic_fold(match: re.Match[str]) -> str:
    """Digits and ``@`` inside a Cyrillic word read as the letters they stand for."""
    token = match.group()
    return token.translate(_CYRILLIC_LEET) if not token.isdigit() else token


@lru_cache(maxsize=16384)
def readings(text: str, identifier: bool = False) -> tuple[str, ...]:
    """Normalised disguised readings of ``text`` that differ from its plain reading."""
    visible = visible_form(text)
    undone = _undisguise(visible_form(_as_displayed(text)) if "\u202e" in text else visible)
    candidates = [undone] if undone != visible else []
    if _INNER_MARK.search(undone):  # "pass-word", "pass.word": one mark splitting a word
        candidates.append(_INNER_MARK.sub("", undone))
    if _LEET_NEAR.search(undone):
        candidates.append(_leet(undone, _LEET_I))
        if "1" in undone or "|" in undone:
            candidates.append(_leet(undone, _LEET_L))
    if not visible.isascii() and _CYRILLIC_LEET_NEAR.search(visible):  # before look-alikes
        candidates.append(_undisguise(_CYRILLIC_LEET_TOKEN.sub(_cyrillic_fold, visible)))
    corrected = _slips(undone)  # not on digit-folded readings: "1password" is a brand
    if corrected != undone:
        candidates.append(corrected)
    if not candidates:
        return ()
    plain = _normalize_visible(visible, identifier)
    found: list[str] = []
    for candidate in candidates:
        reading = _normalize_visible(candidate, identifier)
        if reading != plain and reading not in found:
            found.append(reading)
    return tuple(found)
