"""Load the per-language lexicon files and compile them into one linear-time matcher.

Lexicons are data (``checks/data/lexicon/<lang>.yaml``) so that a reviewer who speaks the
language can extend them without reading code, and a policy can add words through
``extra_words``. Every term of every enabled language is normalised like form text and
joined into a single RE2 alternation run with leftmost-longest semantics: at each position
the longest term wins, so a negative phrase ("password policy", "public key", "secret santa")
swallows the positive word inside it. User words are escaped, never interpreted as regex.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import re2
import yaml

from elicitguard.checks.forms._text import normalize
from elicitguard.checks.forms._types import SECRET_CLASSES, SENSITIVE_CLASSES

RAW_CLASSES: tuple[str, ...] = (*SECRET_CLASSES, "pin", *SENSITIVE_CLASSES)
"""Lexicon classes; ``pin`` is reported as ``password`` but may sit in a number field."""

ROLES: tuple[str, ...] = (
    "negative",
    "after",
    "after_secret",
    "before",
    "before_secret",
    "state",
    "benign",
    "code",
    "otp_context",
    "postal_context",
    "ask",
    "deny",
)
"""Non-class word lists; ``connectors`` and ``sign_in`` are kept apart: never matched."""

UNMATCHED: tuple[str, ...] = ("connectors", "sign_in")
"""Lists compared with whole texts or words, never searched for: ``connectors`` (words that
may stand between a qualifier and its secret word) and ``sign_in`` (what a sign-in form's
other field is called: "Username", "Nom d'utilisateur"; beside it a text field titled only
"Pass" or "PW" is the password)."""

EXTENSIBLE: frozenset[str] = frozenset((*RAW_CLASSES, *ROLES, *UNMATCHED))

FrozenExtra = tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]


@dataclass(frozen=True, slots=True)
class Entry:
    """One meaning of a matched term: its class or role, language and strength."""

    tag: str
    lang: str
    weak: bool = False
    key_only: bool = False


class Lexicon:
    """A compiled set of languages: the matcher, term meanings and connector words.

    Every term of every language is one RE2 alternation (one search per text). Thirty
    languages need a larger DFA budget than RE2's default: below it the DFA gives up and
    the search falls back to the NFA, several times slower.
    """

    __slots__ = ("connectors", "entries", "languages", "pattern", "sign_in")

    def __init__(
        self,
        languages: tuple[str, ...],
        entries: dict[str, tuple[Entry, ...]],
        connectors: frozenset[str],
        sign_in: frozenset[str] = frozenset(),
    ) -> None:
        self.languages = languages
        self.entries = entries
        self.connectors = connectors
        self.sign_in = sign_in
        options = re2.Options()
        options.longest_match = True
        options.max_mem = 512 << 20  # a budget, allocated only as the DFA grows
        alternation = "|".join(re2.escape(term) for term in sorted(entries, key=len, reverse=True))
        self.pattern: Any = re2.compile(alternation or "(?!)", options)

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Leftmost-longest, non-overlapping ``(start, end, term)`` matches in ``text``."""
        return [(m.start(), m.end(), m.group()) for m in self.pattern.finditer(text)]


def _term_core(term: str) -> str:
    """Normalise a lexicon term; a leading or trailing ``*`` drops that word boundary."""
    core = normalize(term.strip("*"))
    if term.startswith("*"):
        core = core.lstrip(" ")
    if term.endswith("*"):
        core = core.rstrip(" ")
    return core


def _words(value: object, where: str) -> list[str]:
    """Check that a lexicon list really is a list of strings."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        msg = f"{where}: expected a list of strings"
        raise ValueError(msg)
    return list(value)


def _file_entries(lang: str, data: Mapping[str, Any]) -> Iterable[tuple[str, Entry]]:
    """Yield (term, meaning) pairs from one parsed lexicon file."""
    classes = data.get("classes") or {}
    for name, spec in classes.items():
        if name not in RAW_CLASSES:
            msg = f"lexicon {lang}: unknown class {name!r}"
            raise ValueError(msg)
        for term in _words(spec.get("terms"), f"{lang}.{name}.terms"):
            yield term, Entry(name, lang)
        for term in _words(spec.get("weak"), f"{lang}.{name}.weak"):
            yield term, Entry(name, lang, weak=True)
        for term in _words(spec.get("keys"), f"{lang}.{name}.keys"):
            yield term, Entry(name, lang, key_only=True)
    for role in ROLES:
        for term in _words(data.get(role), f"{lang}.{role}"):
            yield term, Entry(role, lang)


def _extra_entries(extra: FrozenExtra) -> Iterable[tuple[str, Entry]]:
    """Yield (term, meaning) pairs from a policy's ``extra_words``."""
    for lang, groups in extra:
        for name, words in groups:
            if name not in EXTENSIBLE:
                msg = f"extra_words[{lang!r}]: unknown class or list {name!r}"
                raise ValueError(msg)
            if name not in UNMATCHED:
                for word in words:
                    yield word, Entry(name, lang)


def _parse_yaml(path: Any, lang: str) -> Mapping[str, Any]:
    """One lexicon file, parsed (libyaml's loader when built in)."""
    # libyaml's loader when built in: the pure-Python one took ~1.5 s for the seven files,
    # paid by the first form a process sees (lint and proxy start-up).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506
    if not isinstance(loaded, dict):
        msg = f"lexicon {lang}: expected a mapping"
        raise ValueError(msg)
    return loaded


def _merged(parts: list[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The hand-written file and the catalogue-generated one, as one lexicon."""
    if len(parts) == 1:
        return parts[0]
    out: dict[str, Any] = {"classes": {}}
    for part in parts:
        for name, spec in (part.get("classes") or {}).items():
            held = out["classes"].setdefault(name, {})
            for kind, words in (spec or {}).items():
                held.setdefault(kind, [])
                held[kind] = [*held[kind], *(words or [])]
        for role in (*ROLES, *UNMATCHED):
            if part.get(role):
                out[role] = [*out.get(role, []), *part[role]]
    return out


@lru_cache(maxsize=64)
def _load_file(lang: str) -> Mapping[str, Any] | None:
    """``data/lexicon/<lang>.yaml`` and ``data/lexicon/generated/<lang>.yaml``, merged.

    The first is written by hand; the second by ``scripts/gen_lexicons.py`` from the
    translation catalogues of well-kept packages (each word's source is recorded there).
    """
    base = resources.files("elicitguard.checks").joinpath("data", "lexicon")
    parts = [
        _parse_yaml(path, lang)
        for path in (base.joinpath(f"{lang}.yaml"), base.joinpath("generated", f"{lang}.yaml"))
        if path.is_file()
    ]
    return _merged(parts) if parts else None


def shipped_languages() -> tuple[str, ...]:
    """Every language with a lexicon file in the package (hand-written or generated)."""
    base = resources.files("elicitguard.checks").joinpath("data", "lexicon")
    names = {p.name for p in base.iterdir()} | {
        p.name for p in base.joinpath("generated").iterdir()
    }
    return tuple(sorted(n.removesuffix(".yaml") for n in names if n.endswith(".yaml")))


def freeze_extra(extra: Mapping[str, Mapping[str, Sequence[str]]] | None) -> FrozenExtra:
    """Turn ``extra_words`` into a hashable value so compiled lexicons can be cached."""
    if not extra:
        return ()
    return tuple(
        (lang, tuple((name, tuple(words)) for name, words in sorted(groups.items())))
        for lang, groups in sorted(extra.items())
    )


@lru_cache(maxsize=32)
def compile_lexicon(languages: tuple[str, ...], extra: FrozenExtra = ()) -> Lexicon:
    """Build (once per distinct configuration) the matcher for ``languages`` plus extras."""
    pairs: list[tuple[str, Entry]] = []
    connectors: set[str] = set()
    sign_in: set[str] = set()
    extra_langs = {lang for lang, _ in extra}
    for lang in languages:
        data = _load_file(lang)
        if data is None:
            if lang not in extra_langs:
                msg = f"no lexicon for language {lang!r}; add it or give extra_words for it"
                raise ValueError(msg)
            continue
        pairs.extend(_file_entries(lang, data))
        connectors.update(_words(data.get("connectors"), f"{lang}.connectors"))
        sign_in.update(_words(data.get("sign_in"), f"{lang}.sign_in"))
    pairs.extend(_extra_entries(extra))
    for _, groups in extra:
        connectors.update(w for name, words in groups if name == "connectors" for w in words)
        sign_in.update(w for name, words in groups if name == "sign_in" for w in words)
    table: dict[str, list[Entry]] = {}
    for term, entry in pairs:
        core = _term_core(term)
        if core.strip() and entry not in table.setdefault(core, []):
            table[core].append(entry)
    words = frozenset(w for c in connectors for w in normalize(c).split())
    names = frozenset(filter(None, (whole_text(name) for name in sign_in)))
    return Lexicon(languages, _share_meanings(table), words, names)


def whole_text(text: str) -> str:
    """``text`` normalised like form text with its spaces collapsed: how a whole title is
    compared with a ``sign_in`` name ("E-Mail-Adresse" and "e mail adresse" are one)."""
    return " ".join(normalize(text).split())


def _share_meanings(table: dict[str, list[Entry]]) -> dict[str, tuple[Entry, ...]]:
    """Give a bounded term the meanings of the same word written with wildcards.

    Leftmost-longest matching prefers `` pin `` (which starts at the space) over ``pin``
    (which starts at the letter), so without this the wildcard meaning would be lost.
    """
    by_word: dict[str, list[Entry]] = {}
    for core, entries in table.items():
        by_word.setdefault(core.strip(), []).extend(entries)
    return {core: tuple(dict.fromkeys(by_word[core.strip()])) for core in table}
