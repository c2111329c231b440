"""The credential catalogue: ``data/secrets.yaml`` loaded once and compiled for RE2.

Why: one linear-time keyword pass (an RE2 set of every format's lower-case keywords) picks
the candidate formats, then only those formats' own RE2 regexes run. A combined RE2 set of
the full patterns was measured 50-100x slower on random-looking input (its DFA explodes on
counted repetitions such as ``{36}``), so the full patterns are combined only in the test
that proves they compile together.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

import re2
import yaml

from elicitguard.checks.secrets._types import CatalogueEntry

_BOUNDARY: Final = "[^0-9A-Za-z_-]"
_DEFAULT_ENTROPY: Final = 3.0
_RE2_MAX_MEM: Final = 256 << 20
MAX_SCAN_CHARS: Final = 1 << 20


def _wrap(body: str, boundary: str | None) -> str:
    if boundary == "none":
        return f"(?P<m>{body})"
    return f"(?:^|{_BOUNDARY})(?P<m>{body})(?:{_BOUNDARY}|$)"


# The standard library's regex parser (private, untyped): only its width computation is used.
_sre_parser: Any = importlib.import_module("re._parser")


def _min_width(regex: str) -> int:
    """The fewest characters any match of ``regex`` has (0 when that cannot be worked out).

    Computed with the standard library's regex parser, which reads this RE2 subset; a text
    shorter than this cannot hold a match, so the scanner skips the regex (an exact
    prefilter, and the only one keyword-less formats have).
    """
    try:
        low, _high = _sre_parser.parse(regex).getwidth()
    except Exception:  # any syntax it cannot read means "no prefilter"
        return 0
    return int(low)


def _entry(raw: Mapping[str, Any]) -> CatalogueEntry:
    regex = str(raw["regex"])
    return CatalogueEntry(
        id=str(raw["id"]),
        name=str(raw["name"]),
        keywords=tuple(str(k).lower() for k in raw.get("keywords", ())),
        regex=regex,
        wrapped=_wrap(regex, raw.get("boundary")),
        check=raw.get("check"),
        structure=raw.get("structure"),
        entropy=float(raw.get("entropy", _DEFAULT_ENTROPY)),
        confidence=str(raw.get("confidence", "high")),
        whole_url=bool(raw.get("whole_url", False)),
        source=str(raw.get("source", "")),
        min_length=_min_width(regex),
        requires=tuple(tuple(str(item).split("|")) for item in raw.get("requires", ())),
    )


@functools.cache
def catalogue() -> tuple[CatalogueEntry, ...]:
    """The credential formats, loaded once from the packaged data file."""
    text = resources.files("elicitguard.checks").joinpath("data/secrets.yaml").read_text("utf-8")
    data = yaml.safe_load(text)
    return tuple(_entry(raw) for raw in data["entries"])


def _re2_options() -> Any:
    options = re2.Options()
    options.max_mem = _RE2_MAX_MEM
    return options


_NOT_GLUABLE: Final = frozenset(
    {
        "generic-secret-assignment",
        "labelled-token",
        "url-basic-auth",
        "bearer-token",
        "authorization-header",
    }
)


def _gluable(entry: CatalogueEntry) -> bool:
    """Whether ``entry`` may be searched for without boundaries (glued to other text)."""
    if not entry.keywords or entry.id in _NOT_GLUABLE or entry.structure == "keyed-assignment":
        return False
    if entry.wrapped.startswith("(?P<m>") or entry.whole_url:
        return False  # already boundary-free, or a whole URL
    return bool(entry.structure or entry.check) or min(map(len, entry.keywords)) >= 4


class _Compiled:
    """Everything compiled once: the keyword set and one RE2 regex per format."""

    def __init__(self, entries: tuple[CatalogueEntry, ...]) -> None:
        self.entries = entries
        options = _re2_options()
        self.keywords: list[str] = sorted({k for e in entries for k in e.keywords})
        self.keyword_set = re2.Set.SearchSet(options)
        for keyword in self.keywords:
            self.keyword_set.Add(re2.escape(keyword))
        self.keyword_set.Compile()
        self.by_keyword: dict[str, list[int]] = {}
        self.always: list[int] = []
        for index, entry in enumerate(entries):
            if not entry.keywords:
                self.always.append(index)
            for keyword in entry.keywords:
                self.by_keyword.setdefault(keyword, []).append(index)
        self.regexes = [re2.compile(e.wrapped, options) for e in entries]
        # Tokens glued to other text ("mytokenghp_…thanks"): the same format without its
        # boundaries, only where the format's keywords are distinctive enough (four
        # characters or more) or a validator (structure, checksum) confirms the find.
        self.glued: dict[int, Any] = {
            index: re2.compile(f"(?P<m>{entry.regex})", options)
            for index, entry in enumerate(entries)
            if _gluable(entry)
        }
        self.whole_url = frozenset(i for i, e in enumerate(entries) if e.whole_url)
        # Whole-URL formats are few and their keywords long: plain substring tests on the
        # lower-cased URL decide them faster than a pass of the full keyword set.
        self.whole_url_keywords = tuple(
            (keyword, i) for i in sorted(self.whole_url) for keyword in entries[i].keywords
        )

    def candidates(self, lowered: str) -> list[int]:
        """Formats whose keyword occurs in ``lowered``: one linear pass over the text."""
        hits = self.keyword_set.Match(lowered) or []
        found = {i for k in hits for i in self.by_keyword[self.keywords[k]]}
        found.update(self.always)
        return sorted(found)

    def keywords_in(self, lowered: str) -> tuple[str, ...]:
        """The keywords that occur in ``lowered`` (one linear pass)."""
        hits = self.keyword_set.Match(lowered) or []
        return tuple(self.keywords[k] for k in sorted(hits))

    def candidates_among(self, lowered: str, keywords: tuple[str, ...]) -> list[int]:
        """:meth:`candidates` for a text whose keywords are among ``keywords``.

        ``keywords`` come from :meth:`keywords_in` over a text that contains ``lowered``
        (all components of one URL joined by NUL, which no keyword contains), so plain
        substring tests on that short list give exactly the same candidates.
        """
        if not keywords:
            return self.always
        found = {i for k in keywords if k in lowered for i in self.by_keyword[k]}
        if not found:
            return self.always
        found.update(self.always)
        return sorted(found)

    def viable(self, index: int, text: str) -> bool:
        """False when ``text`` is too short for the format or lacks a required literal."""
        entry = self.entries[index]
        if len(text) < entry.min_length:
            return False
        return all(any(literal in text for literal in group) for group in entry.requires)


@functools.cache
def _compiled() -> _Compiled:
    return _Compiled(catalogue())


@functools.cache
def keywordless_min_length() -> int:
    """The shortest value any keyword-less format can match (and never less than 8).

    A value shorter than this, holding no catalogue keyword, cannot match any format.
    """
    compiled = _compiled()
    lengths = [compiled.entries[i].min_length for i in compiled.always]
    return max(8, min(lengths, default=1 << 30))
