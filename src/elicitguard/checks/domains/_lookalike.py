"""Look-alikes of protected domains: skeleton matching and brands embedded in other hosts.

Why: per-label rules cannot know that ``gооgle.com`` (Cyrillic о) or ``rnicrosoft.com`` means
a specific site.  As Chromium does with its top-domain list, we compute UTS 39 skeletons of
the host, after removing diacritics from Latin/Greek/Cyrillic hosts and with extra mappings
for letters ICU's data does not map (several skeletons when one character resembles several
letters: þ -> b/p, œ -> ce/oe, ł -> l/t, ӏ -> i/l), and look up the registrable part (the last
two to four labels) in an index of the protected domains' skeletons.  The protected domain
itself and its subdomains are fine.  Unlike Chromium we also compare pure-ASCII hosts
(``rnicrosoft.com``, ``paypa1.com``): nothing is being displayed here, we are deciding whether
to warn, and those are the commonest phishing hosts.

The second check (``embedded_protected``) finds a protected domain written inside another
registrable domain as a run of labels or hyphen-separated tokens: ``paypal.com.evil.example``,
``paypal-com.evil.example``, ``login-microsoftonline.com``.  A protected brand under another
public suffix (``google.com.au``) is not flagged, nor is a bare brand label without its
suffix (``apple.stackexchange.com`` and ``microsoft.github.io`` are legitimate).
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import idna

from elicitguard.checks.domains import _unicode as uc
from elicitguard.checks.domains._unicode import lgc_only

__all__ = [
    "ProtectedIndex",
    "build_index",
    "embedded_protected",
    "extra_skeleton",
    "find_lookalike",
    "host_skeletons",
    "normalise_domain",
]


def _groups(spec: dict[str, str]) -> dict[str, str]:
    return {ch: target for chars, target in spec.items() for ch in chars}


# Letters that look like Latin letters or digits but that confusables.txt does not map
# (facts from Chromium's skeleton generator, applied before the UTS 39 skeleton).
_EXTRA = _groups(
    {
        "æӕ": "ae",
        "ϼҏ": "p",
        "ħнћңҥӈӊԋԧԩ": "h",
        "ĸκкқҝҟҡӄԟ": "k",
        "ŋпԥกח": "n",
        "ŧтҭԏ七丅丆丁": "t",
        "ƅьҍвß": "b",
        "ωшщพฟພຟ": "w",
        "мӎ": "m",
        "єҽҿၔ": "e",
        "ґ": "r",
        "ғӻ": "f",
        "ҫင": "c",
        "ұ丫": "y",
        "χҳӽӿ乂": "x",
        "ԃძ": "d",
        "ԍဌ": "g",
        "ടรຣຮ": "s",
        "၂": "j",
        "०০੦૦ଠ୦೦စ": "o",
        "৭੧૧": "q",
        "บບ": "u",
        "θ": "0",
        "२২੨૨೩೭շ": "2",
        "зҙӡउওਤ੩૩౩ဒვპੜკ": "3",
        "੫丩ㄐ": "4",
        "ճ": "6",
        "৪੪୫": "8",
        "૭୨౨": "9",
        "—一―⸺⸻": "-",
    }
)
_MULTI: dict[str, tuple[str, ...]] = {"þ": ("b", "p"), "œ": ("ce", "oe"), "ł": ("l", "t")}
_AFTER_MARK_REMOVAL = str.maketrans({"ł": "l", "ø": "o", "đ": "d"})
_MAX_MULTI_CHARS = 5
_MAX_VARIANTS = 128
_LABELS_TO_CHECK = 4
_MIN_SEPARATOR_MATCH = 5


def extra_skeleton(ch: str) -> str | None:
    """The Latin reading Chromium's skeleton generator gives ``ch`` beyond confusables.txt."""
    return _EXTRA.get(ch)


def remove_diacritics(host: str) -> str:
    """Drop non-spacing marks (and map ł ø đ) when the host is Latin/Greek/Cyrillic only."""
    if host.isascii() or not lgc_only(host):
        return host
    nfd = unicodedata.normalize("NFD", host)
    stripped = "".join(ch for ch in nfd if unicodedata.category(ch) != "Mn")
    return unicodedata.normalize("NFC", stripped).translate(_AFTER_MARK_REMOVAL)


def _variants(host: str) -> set[str]:
    """The host with each multi-skeleton character replaced by each of its readings."""
    positions = [i for i, ch in enumerate(host) if ch in _MULTI]
    if not positions or len(positions) > _MAX_MULTI_CHARS:
        return {host}
    choices = [(host[i], *_MULTI[host[i]]) for i in positions]
    out: set[str] = set()
    for combo in itertools.product(*choices):
        chars = list(host)
        for i, replacement in zip(positions, combo, strict=True):
            chars[i] = replacement
        out.add("".join(chars))
        if len(out) >= _MAX_VARIANTS:
            break
    return out


@lru_cache(maxsize=8192)
def host_skeletons(host: str) -> frozenset[str]:
    """All skeletons of a lower-case Unicode host (trailing dot removed)."""
    host = host.rstrip(".")
    candidates = _variants(remove_diacritics(host))
    if any(ch in host for ch in _MULTI) and remove_diacritics(host) != host:
        candidates |= _variants(host)
    out: set[str] = set()
    for variant in candidates:
        mapped = "".join([_EXTRA.get(ch, ch) for ch in variant])
        out.add(uc.skeleton(mapped))
        if "ӏ" in mapped:
            out.add(uc.skeleton(mapped.replace("ӏ", "l")))
    return frozenset(out)


def normalise_domain(domain: str) -> str | None:
    """Lower-case Unicode form of a domain written in Unicode or punycode, or ``None``."""
    text = domain.strip().rstrip(".").lower()
    if not text or "." not in text:
        return None
    try:
        return idna.decode(text, uts46=True)
    except (idna.IDNAError, UnicodeError):
        return text if text.isascii() else None


@dataclass(frozen=True, slots=True)
class ProtectedIndex:
    """Protected domains keyed for the two look-alike checks."""

    domains: frozenset[str]
    by_skeleton: dict[str, tuple[str, ...]]
    by_skeleton_no_hyphen: dict[str, tuple[str, ...]]
    runs_by_first_label: dict[str, tuple[tuple[str, ...], ...]]


@lru_cache(maxsize=64)
def build_index(domains: frozenset[str]) -> ProtectedIndex:
    """Index normalised protected domains (Unicode, lower case) by skeleton and labels."""
    by_skel: dict[str, list[str]] = {}
    by_nohyphen: dict[str, list[str]] = {}
    runs: dict[str, list[tuple[str, ...]]] = {}
    for domain in sorted(domains):
        for skel in host_skeletons(domain):
            by_skel.setdefault(skel, []).append(domain)
            if len(skel.partition(".")[0].replace("-", "")) >= _MIN_SEPARATOR_MATCH:
                by_nohyphen.setdefault(skel.replace("-", ""), []).append(domain)
        labels = tuple(domain.split("."))
        runs.setdefault(labels[0], []).append(labels)
    return ProtectedIndex(
        domains=domains,
        by_skeleton={k: tuple(v) for k, v in by_skel.items()},
        by_skeleton_no_hyphen={k: tuple(v) for k, v in by_nohyphen.items()},
        runs_by_first_label={k: tuple(v) for k, v in runs.items()},
    )


def is_same_or_subdomain(host: str, domain: str) -> bool:
    """``host`` is ``domain`` or one of its subdomains."""
    return host == domain or host.endswith("." + domain)


def is_covered(host: str, domains: frozenset[str]) -> bool:
    """``host`` is one of ``domains`` or a subdomain of one (a set lookup per label suffix)."""
    labels = host.split(".")
    return any(".".join(labels[i:]) in domains for i in range(len(labels)))


def _lookup(host: str, skeletons: Iterable[str], table: dict[str, tuple[str, ...]]) -> str | None:
    for skel in sorted(skeletons):
        labels = skel.split(".")[-_LABELS_TO_CHECK:]
        while len(labels) >= 2:
            hits = table.get(".".join(labels))
            if hits:
                if any(is_same_or_subdomain(host, d) for d in hits):
                    return None
                return hits[0]
            labels = labels[1:]
    return None


def find_lookalike(host: str, index: ProtectedIndex) -> str | None:
    """The protected domain ``host`` imitates by skeleton, or ``None``."""
    if is_covered(host, index.domains):
        return None
    skeletons = host_skeletons(host)
    hit = _lookup(host, skeletons, index.by_skeleton)
    if hit is not None:
        return hit
    if "-" in host:
        no_hyphen = [skel.replace("-", "") for skel in skeletons]
        return _lookup(host, no_hyphen, index.by_skeleton_no_hyphen)
    return None


def embedded_protected(host: str, registrable: str | None, index: ProtectedIndex) -> str | None:
    """A protected domain spelled inside an unrelated host's labels or hyphenated tokens."""
    if is_covered(host, index.domains):
        return None
    labels = host.split(".")
    registrable_start = len(labels) - len(registrable.split(".")) if registrable else 0
    tokens: list[str] = []
    token_label: list[int] = []
    for li, label in enumerate(labels):
        for token in label.split("-"):
            tokens.append(token)
            token_label.append(li)
    for i, token in enumerate(tokens):
        for run in index.runs_by_first_label.get(token, ()):
            if tuple(tokens[i : i + len(run)]) != run:
                continue
            li = token_label[i]
            # The brand's own name under another public suffix (google.com.au, paypal.com.br).
            if li == registrable_start and labels[li] == run[0]:
                continue
            return ".".join(run)
    return None
