"""Per-label IDN spoof checks: UTS 39 restriction levels plus Chromium's custom layer.

Why: flagging every punycode label blocks most legitimate internationalised names, and
"contains a confusable character" misses single-script spoofs (Cyrillic ``аррӏе``).  This
module decides per Unicode label the way Chromium's IDN display policy does (the anchor in
``shared/DETECTION.md`` section 1), in our own code over our own tables:

1. ICU-equivalent checks (reported as ``mixed_script``): every character in the allowed set
   (UTS 39 Identifier_Status=Allowed minus Chromium's removals), restriction level at most
   HIGHLY_RESTRICTIVE computed on the resolved Script_Extensions set (Latin may join one CJK
   logical script: Han+Bopomofo, Han+Hiragana+Katakana, Hangul+Han), a single decimal digit
   system, and no repeated non-spacing mark.
2. Chromium's extra rules (reported as ``whole_script_confusable``): deviation characters in a
   label that arrived as punycode; TLD-specific letters (þ ð outside .is/.fo, ə outside .az,
   middle dot other than Catalan ``l·l`` under .cat); whole-script confusables per script with
   per-script TLD exemptions; labels made of digits and digit look-alikes; non-ASCII Latin
   mixed with another script; dangerous Kana/CJK/combining-mark patterns.

The first failing rule wins, as in Chromium, so each unsafe label yields one issue.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import IntEnum
from functools import cache, lru_cache
from typing import Literal

from elicitguard.checks.domains import _unicode as uc
from elicitguard.checks.domains._lookalike import extra_skeleton
from elicitguard.checks.domains._unicode import lgc_only

__all__ = ["LabelVerdict", "RestrictionLevel", "check_label", "restriction_level"]


class RestrictionLevel(IntEnum):
    """UTS 39 section 5.2 restriction levels, most to least restrictive."""

    ASCII = 0
    SINGLE_SCRIPT = 1
    HIGHLY_RESTRICTIVE = 2
    MODERATELY_RESTRICTIVE = 3
    MINIMALLY_RESTRICTIVE = 4
    UNRESTRICTIVE = 5


@dataclass(frozen=True, slots=True)
class LabelVerdict:
    """Why a label is unsafe: issue kind and a plain-words detail."""

    kind: Literal["mixed_script", "whole_script_confusable"]
    detail: str


_ALL = frozenset({"*"})  # the "every script" set for Common/Inherited characters
_CJK_LOGICAL = frozenset({"Jpan", "Hanb", "Kore"})


def _augmented(ch: str) -> frozenset[str]:
    """Script_Extensions augmented per UTS 39 5.1 (Han -> Hanb/Jpan/Kore etc.)."""
    scx = uc.script_extensions(ch)
    if "Zyyy" in scx or "Zinh" in scx:
        return _ALL
    extra: set[str] = set()
    if "Hani" in scx:
        extra |= {"Hanb", "Jpan", "Kore"}
    if "Hira" in scx or "Kana" in scx:
        extra.add("Jpan")
    if "Hang" in scx:
        extra.add("Kore")
    if "Bopo" in scx:
        extra.add("Hanb")
    return scx | extra if extra else scx


def _resolved(label: str, without: str | None = None) -> frozenset[str]:
    result: frozenset[str] = _ALL
    for ch in label:
        aug = _augmented(ch)
        if aug is _ALL or (without is not None and without in aug):
            continue
        result = aug if result is _ALL else result & aug
        if not result:
            break
    return result


@lru_cache(maxsize=8192)
def restriction_level(label: str) -> RestrictionLevel:
    """UTS 39 restriction level of ``label`` (allowed-set membership included)."""
    if label.isascii():
        return RestrictionLevel.ASCII
    if not all(uc.is_allowed(ch) for ch in label):
        return RestrictionLevel.UNRESTRICTIVE
    if _resolved(label):
        return RestrictionLevel.SINGLE_SCRIPT
    no_latin = _resolved(label, without="Latn")
    if no_latin is _ALL or no_latin & _CJK_LOGICAL:
        return RestrictionLevel.HIGHLY_RESTRICTIVE
    if no_latin and "Cyrl" not in no_latin and "Grek" not in no_latin:
        return RestrictionLevel.MODERATELY_RESTRICTIVE
    return RestrictionLevel.MINIMALLY_RESTRICTIVE


def _mixed_numbers(label: str) -> bool:
    zeros = {ord(ch) - unicodedata.decimal(ch) for ch in label if unicodedata.category(ch) == "Nd"}
    return len(zeros) > 1


def _repeated_mark(label: str) -> bool:
    """ICU's INVISIBLE check: the same non-spacing mark twice in one run of marks."""
    seen: set[str] = set()
    for ch in unicodedata.normalize("NFD", label):
        if unicodedata.category(ch) != "Mn":
            seen.clear()
            continue
        if ch in seen:
            return True
        seen.add(ch)
    return False


def _dot_lead(ch: str) -> bool:
    return ch in "ijıȷl" or uc.is_soft_dotted(ch)


def _hidden_overlay(label: str) -> bool:
    """ICU's HIDDEN_OVERLAY check: U+0307 DOT ABOVE on a letter that already shows a dot."""
    lead = False
    for ch in label:
        if lead and ch == "\u0307":
            return True
        if unicodedata.combining(ch) in (0, 230):
            lead = _dot_lead(ch) or _dot_lead(uc.skeleton(ch)[-1:] or ch)
    return False


def _icu_checks(label: str) -> LabelVerdict | None:
    for ch in label:
        if not uc.is_allowed(ch):
            name = unicodedata.name(ch, "unnamed")
            return LabelVerdict(
                "mixed_script",
                f"U+{ord(ch):04X} {name} is not allowed in domain labels "
                "(UTS 39 identifier profile)",
            )
    level = restriction_level(label)
    if level > RestrictionLevel.HIGHLY_RESTRICTIVE:
        scripts = sorted({uc.script(ch) for ch in label} - {"Zyyy", "Zinh"})
        return LabelVerdict(
            "mixed_script",
            f"label mixes scripts {', '.join(scripts)} "
            f"(restriction level {level.name.lower()}, above highly restrictive)",
        )
    if _mixed_numbers(label):
        return LabelVerdict("mixed_script", "label mixes digits from different numbering systems")
    if _repeated_mark(label):
        return LabelVerdict("mixed_script", "label repeats the same combining mark")
    if _hidden_overlay(label):
        return LabelVerdict("mixed_script", "dot above placed on a letter that already has a dot")
    return None


# --- Chromium's custom layer (facts: character sets, TLDs, patterns) --------------------

_DEVIATIONS = frozenset("\u00df\u03c2\u200c\u200d")
_ICELANDIC = frozenset("\u00fe\u00f0")
#: The ae and oe ligatures read as the ASCII pairs ``ae`` and ``oe``; normal letters only
#: under the ccTLDs of the languages that write them (Danish, Norwegian, Icelandic,
#: Faroese; French).
_LIGATURES = frozenset("\u00e6\u0153")
_LIGATURE_TLDS = frozenset({"dk", "no", "is", "fo", "fr"})
_KANA_EXCEPTIONS = frozenset(
    [chr(c) for c in range(0x3078, 0x307B)]
    + [chr(c) for c in range(0x30D8, 0x30DB)]
    + [chr(c) for c in range(0x30FB, 0x30FF)]
)
_COMBINING_EXCEPTIONS = frozenset(chr(c) for c in range(0x0300, 0x033A))


@dataclass(frozen=True, slots=True)
class _WholeScript:
    script: str
    lookalikes: frozenset[str]
    tlds: frozenset[str]


def _ws(script: str, letters: str, *tlds: str) -> _WholeScript:
    return _WholeScript(script, frozenset(letters), frozenset(tlds))


# Per script: letters that look like Latin letters, and ccTLDs where labels made only of them
# are normal words.  Cyrillic: Chromium's list (bg by kz ru su ua uz) plus the other ccTLDs
# whose countries write Cyrillic (rs mk kg tj mn); Greek adds Cyprus.  A TLD written in the
# script itself (.рф, .ελ, .հայ ...) is always exempt.
_WHOLE_SCRIPT = (
    _ws("Armn", "ագզէլհյոսւօՙ", "am"),
    _ws(
        "Cyrl",
        "аысԁеԍһіюкјӏорԗԛѕԝхуъьҽпгѵѡӕԥ",
        *("bg", "by", "kz", "ru", "su", "ua", "uz", "rs", "mk", "kg", "tj", "mn"),
    ),
    _ws("Ethi", "ሀሠሰስበነተከዐዕዘጠፐꬅ", "er", "et"),
    _ws("Geor", "იოყძხჽჿ", "ge"),
    _ws("Grek", "αικνρυωηοτ", "gr", "cy"),
    _ws("Hebr", "דוחיןסװײ׳ﬦ", "il"),
    _ws("Beng", "০৭"),
    _ws("Deva", "ऽ०ॱ"),
    _ws("Gujr", "ડટ૦૧"),
    _ws("Guru", "੦੧"),
    _ws("Knda", "ಽ೦೧"),
    _ws("Mlym", "ടഠധനറ൦"),
    _ws("Orya", "ଠ୦୮"),
    _ws("Taml", "டப௦"),
    _ws("Telu", "౦౧"),
    _ws("Mymr", "ခဂငထပဝ၀၂ၔၜ\u1090\u1091\u1095\u1096\u1097", "mm"),
    # Thai: the larger set (letters that render Latin-like in common Linux fonts too).
    _ws("Thai", "ทนบพรหเแ๐ดลปฟม", "th"),
)
_WHOLE_SCRIPT_WORDS = frozenset(
    {"секс", "как", "коса", "курс", "парк", "такий", "укроп", "сахарок", "покраска"}
)
_DIGIT_LOOKALIKES = frozenset("θ२২੨૨೩೭շзҙӡउওਤ੩૩౩ဒვპੜკ੫丩ㄐճ৪੪୫૭୨౨")
_ASCII_DIGITS = frozenset("0123456789")


def _whole_script_confusable(label: str, tld: str, tld_unicode: str) -> _WholeScript | None:
    by_script: dict[str, set[str]] = {}
    for ch in label:
        by_script.setdefault(uc.script(ch), set()).add(ch)
    for ws in _WHOLE_SCRIPT:
        letters = by_script.get(ws.script)
        if not letters or not letters <= ws.lookalikes:
            continue
        if tld in ws.tlds or any(uc.script(ch) == ws.script for ch in tld_unicode):
            continue
        if label in _WHOLE_SCRIPT_WORDS:
            continue
        return ws
    return None


_WHOLE_SCRIPT_BY_NAME = {ws.script: ws for ws in _WHOLE_SCRIPT}
_NEUTRAL = frozenset("0123456789-")


# Scripts whose Latin look-alikes are exactly Chromium's table: Cyrillic and Greek words are
# common under .com, and their looser look-alikes (т, п, к) would flag real words.
_TABLE_ONLY = frozenset({"Cyrl", "Grek"})


@lru_cache(maxsize=4096)
def _reads_as_latin(ch: str, script: str) -> bool:
    """Whether ``ch`` reads as an ASCII letter or digit: its UTS 39 skeleton does (``ԁ`` -> ``d``,
    ``ꓳ`` -> ``o``, ``੨`` -> ``2``), or, outside Cyrillic and Greek, Chromium's extra skeleton
    mappings do (Lao ``ຟ`` -> ``w``, Myanmar ``ဌ`` -> ``g``)."""
    skeleton = uc.skeleton(ch)
    if skeleton and skeleton.isascii() and skeleton.isalnum():
        return True
    if script in _TABLE_ONLY:
        return False
    extra = extra_skeleton(ch)
    return extra is not None and extra.isascii() and extra.isalnum()


def latin_confusable(label: str, tld: str, tld_unicode: str) -> str | None:
    """The script of ``label`` when it is written wholly in one non-Latin script whose
    letters all pass for Latin letters, under a TLD where that script is not expected.

    Each letter must be in Chromium's look-alike set for that script or have an ASCII
    skeleton (UTS 39 confusables), so the label reads as a Latin name.  The label is exempt
    under a TLD where the script is expected (``.ru`` and ``.рф`` for Cyrillic) and for
    Chromium's allow-listed words.  This runs before the identifier-profile test, so a
    look-alike that UTS 39 does not allow (Komi ``ԁ``, Lisu ``ꓲ``) still makes the label a
    whole-script spoof rather than a mixed-script one.
    """
    by_script: dict[str, set[str]] = {}
    for ch in label:
        if ch in _NEUTRAL:
            continue
        name = uc.script(ch)
        if name in ("Zyyy", "Zinh"):
            return None  # combining marks and symbols: Chromium's other rules decide
        by_script.setdefault(name, set()).add(ch)
    others = [name for name in by_script if name != "Latn"]
    if len(others) != 1:
        return None
    script = others[0]
    table = _WHOLE_SCRIPT_BY_NAME.get(script)
    for ch in by_script[script]:
        if not ((table is not None and ch in table.lookalikes) or _reads_as_latin(ch, script)):
            return None
    if "Latn" in by_script:
        return None  # mixed with Latin: the mixed-script test (EG402) reports it
    if table is not None and tld in table.tlds:
        return None
    if any(uc.script(ch) == script for ch in tld_unicode) or label in _WHOLE_SCRIPT_WORDS:
        return None
    return script


def _digit_lookalike(label: str) -> bool:
    has_lookalike = False
    for ch in label:
        if ch in _ASCII_DIGITS:
            continue
        if ch in _DIGIT_LOOKALIKES:
            has_lookalike = True
            continue
        return False
    return has_lookalike


def _unsafe_middle_dot(label: str, tld: str) -> bool:
    for i, ch in enumerate(label):
        if ch != "\u00b7":
            continue
        if tld != "cat" or i == 0 or i == len(label) - 1:
            return True
        if label[i - 1] != "l" or label[i + 1] != "l":
            return True
    return False


def _char_class(scripts: tuple[str, ...]) -> str:
    """A regex class body matching characters whose Script_Extensions meet ``scripts``.

    Script_Extensions contains Script for every character of a real script, so the union of
    the Script ranges and the explicit Script_Extensions ranges is exact.
    """
    wanted = frozenset(scripts)
    ranges = sorted(
        [(lo, hi) for lo, hi, value in uc.script_ranges() if value in wanted]
        + [(lo, hi) for lo, hi, value in uc.script_extension_ranges() if wanted & value]
    )
    merged: list[list[int]] = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for lo, hi in merged
    )


@cache
def _dangerous_pattern() -> re.Pattern[str]:
    """Chromium's dangerous-pattern rules, expressed over our Script_Extensions tables."""
    kana = _char_class(("Kana",))
    hira = _char_class(("Hira",))
    jpn = _char_class(("Kana", "Hira", "Hani"))
    kana_hira = _char_class(("Kana", "Hira"))
    cjk = _char_class(("Kana", "Hira", "Hani", "Bopo"))
    lgc = _char_class(("Latn", "Grek", "Cyrl"))
    slash_like = "\u30ce\u30f3\u30bd\u30be\u4e36\u4e40\u4e41\u4e3f"
    cjk_latin_like = (
        "\u4e00\u3127\u4e28\u4e5b\u4e03\u4e05\u5341\u3007\u3112"
        "\u311a\u311f\u3128\u3129\u3108\u31ba\u31b3\u5de5\u31b2\u8ba0\u4e01"
        # and the ideographs Chromium's skeleton generator reads as Latin (t, y, x, 4)
        "\u4e06\u4e2b\u4e42\u4e29"
    )
    parts = [
        # Katakana no/so/zo/n and slash-like ideographs between non-Japanese characters.
        f"[^{jpn}][{slash_like}][^{jpn}]",
        # Katakana iteration marks not after Katakana.
        f"[^{kana}][\u30fd\u30fe]",
        "^[\u30fd\u30fe]",
        # Hiragana he/be/pe inside a Katakana label and vice versa.
        f"^[{kana}]+[\u3078-\u307a][{kana}]+$",
        f"^[{hira}]+[\u30d8-\u30da][{hira}]+$",
        # Prolonged sound mark and Katakana middle dot out of context.
        f"[^{kana_hira}]\u30fc",
        "^\u30fc",
        "[a-z]\u30fb",
        "\u30fb[a-z]",
        # Ideographs/Bopomofo that look like Latin letters or punctuation next to non-CJK.
        f"[^{cjk}][{cjk_latin_like}]",
        f"[{cjk_latin_like}][^{cjk}]",
        # Combining marks after a non-LGC letter, after dotless i, Kana voiced marks,
        # dot above after i/j/l.
        f"[^{lgc}][\u0300-\u0339]",
        "\u0131[\u0300-\u0339]",
        "[\u3099\u309a]",
        "[ijl]\u0307",
    ]
    return re.compile("|".join(parts))


def check_label(
    label: str, *, tld: str, tld_unicode: str, from_punycode: bool
) -> LabelVerdict | None:
    """Return why a Unicode (NFC, lower-case) label is unsafe to display, or ``None``."""
    if label.isascii():
        return None
    script = latin_confusable(label, tld, tld_unicode)
    if script is not None:
        return LabelVerdict(
            "whole_script_confusable",
            f"every {script} character in the label looks like a Latin letter or digit and "
            f"the TLD .{tld_unicode or tld} is not one where {script} is expected",
        )
    icu = _icu_checks(label)
    if icu is not None:
        return icu
    if from_punycode and _DEVIATIONS.intersection(label):
        return LabelVerdict(
            "whole_script_confusable",
            "punycode label encodes a deviation character (ß, ς, ZWJ or ZWNJ) that "
            "older IDNA processing maps to different letters",
        )
    if len(label) > 1 and tld not in ("is", "fo") and _ICELANDIC.intersection(label):
        return LabelVerdict(
            "whole_script_confusable", "þ or ð outside .is/.fo looks like b, p or o"
        )
    if tld not in _LIGATURE_TLDS and _LIGATURES.intersection(label):
        return LabelVerdict(
            "whole_script_confusable",
            f"the ligature æ or œ outside .{'/.'.join(sorted(_LIGATURE_TLDS))} reads as ae or oe",
        )
    if len(label) > 1 and tld != "az" and "\u0259" in label:
        return LabelVerdict("whole_script_confusable", "ə outside .az looks like e")
    if _unsafe_middle_dot(label, tld):
        return LabelVerdict("whole_script_confusable", "middle dot outside Catalan l·l under .cat")
    level = restriction_level(label)
    if (
        level == RestrictionLevel.SINGLE_SCRIPT
        and not _KANA_EXCEPTIONS.intersection(label)
        and not _COMBINING_EXCEPTIONS.intersection(label)
    ):
        ws = _whole_script_confusable(label, tld, tld_unicode)
        if ws is not None:
            return LabelVerdict(
                "whole_script_confusable",
                f"every {ws.script} letter in the label looks like a Latin letter and the "
                f"TLD .{tld_unicode or tld} is not one where {ws.script} is expected",
            )
        if _digit_lookalike(label):
            return LabelVerdict(
                "whole_script_confusable", "label is made of digits and digit look-alikes"
            )
        return None
    if _digit_lookalike(label):
        return LabelVerdict(
            "whole_script_confusable", "label is made of digits and digit look-alikes"
        )
    non_ascii_latin = any(not ch.isascii() and uc.script(ch) == "Latn" for ch in label)
    if non_ascii_latin and not lgc_only(label):
        return LabelVerdict(
            "whole_script_confusable", "non-ASCII Latin letters mixed with another script"
        )
    match = _dangerous_pattern().search(label)
    if match is not None:
        return LabelVerdict(
            "whole_script_confusable",
            f"dangerous character pattern {match.group(0)!r} "
            "(Kana/CJK/combining-mark look-alike in this context)",
        )
    return None
