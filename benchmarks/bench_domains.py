"""Host analysis (EG4xx): hosts per second cached and uncached, and agreement with the anchors.

``python benchmarks/bench_domains.py`` prints the agreement table and the speed pairs;
``benchmarks/run.py`` runs the pairs with every other benchmark (and prints the table once).

Speed: :func:`analyze_host` over a mixed workload of legitimate IDNs, spoofs, ASCII hosts and
invalid names, with its host-level caches warm ("cached": what a proxy sees when the same
few servers send URLs again and again) and cleared before every round ("uncached": every
host seen for the first time; per-character property lookups stay warm, as they do in any
running process). The baseline is ``confusable_homoglyphs.is_dangerous`` over the labels of
the same hosts (the ``bench`` extra), which is what a Python project reaches for first.

Agreement: the labelled hosts in ``benchmarks/data/idn_anchor_cases.tsv`` (our own cases,
written from the anchors' documented rules) are judged by elicitguard, by
``confusable_homoglyphs`` and, when PyICU is installed, by ICU's SpoofChecker at
HIGHLY_RESTRICTIVE with Chromium's allowed set; each verdict (safe, unsafe, invalid) is
compared with Chromium's display decision and with Firefox's where it differs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import idna

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Pair, measure_pair, print_table

from elicitguard.checks.domains import _labels, _lookalike, _psl, analyze_host

CASES = Path(__file__).resolve().parent / "data" / "idn_anchor_cases.tsv"
UNSAFE_KINDS = frozenset({"mixed_script", "whole_script_confusable", "lookalike"})


@dataclass(frozen=True)
class Case:
    host: str
    chromium: str
    firefox: str
    kind: str
    note: str


def load_cases() -> list[Case]:
    """The labelled hosts (comment lines start with ``#``)."""
    out = []
    for line in CASES.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        host, chromium, firefox, kind, note = line.split("\t")
        out.append(Case(host, chromium, chromium if firefox == "same" else firefox, kind, note))
    return out


# --- verdicts ---------------------------------------------------------------------------


def elicitguard_verdict(host: str) -> str:
    kinds = analyze_host(host).kinds
    if "invalid_idn" in kinds:
        return "invalid"
    return "unsafe" if kinds & UNSAFE_KINDS else "safe"


def _unicode_labels(host: str) -> list[str] | None:
    try:
        return idna.decode(host, uts46=True).split(".")
    except (idna.IDNAError, UnicodeError):
        return None


def homoglyphs_verdict(host: str) -> str:
    from confusable_homoglyphs import confusables

    labels = _unicode_labels(host)
    if labels is None:
        return "invalid"
    return "unsafe" if any(confusables.is_dangerous(label) for label in labels) else "safe"


def _icu_checker() -> Callable[[str], bool] | None:
    try:
        import icu
    except ImportError:
        return None
    checker = icu.SpoofChecker()
    checker.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)
    allowed = icu.UnicodeSet(checker.getRecommendedUnicodeSet())
    allowed.addAll(checker.getInclusionUnicodeSet())
    checker.setAllowedUnicodeSet(allowed)
    return lambda label: checker.check(label) != 0


def icu_verdict_fn() -> Callable[[str], str] | None:
    unsafe = _icu_checker()
    if unsafe is None:
        return None

    def verdict(host: str) -> str:
        labels = _unicode_labels(host)
        if labels is None:
            return "invalid"
        return "unsafe" if any(not lbl.isascii() and unsafe(lbl) for lbl in labels) else "safe"

    return verdict


@dataclass(frozen=True)
class Score:
    name: str
    exact: float
    precision: float
    recall: float
    fpr: float
    firefox_exact: float
    legit_flagged: int
    legit: int
    beyond_flagged: int
    beyond: int


def score(name: str, verdict: Callable[[str], str], cases: list[Case]) -> Score:
    """Exact agreement and precision / recall / false-positive rate of "not safe"."""
    anchor = [c for c in cases if c.kind != "beyond"]
    got = {c.host: verdict(c.host) for c in cases}
    tp = sum(1 for c in anchor if c.chromium != "safe" and got[c.host] != "safe")
    fp = sum(1 for c in anchor if c.chromium == "safe" and got[c.host] != "safe")
    fn = sum(1 for c in anchor if c.chromium != "safe" and got[c.host] == "safe")
    negatives = sum(1 for c in anchor if c.chromium == "safe")
    legit = [c for c in anchor if c.kind == "legit"]
    beyond = [c for c in cases if c.kind == "beyond"]
    return Score(
        name=name,
        exact=sum(1 for c in anchor if got[c.host] == c.chromium) / len(anchor),
        precision=tp / (tp + fp) if tp + fp else 1.0,
        recall=tp / (tp + fn) if tp + fn else 1.0,
        fpr=fp / negatives if negatives else 0.0,
        firefox_exact=sum(1 for c in anchor if got[c.host] == c.firefox) / len(anchor),
        legit_flagged=sum(1 for c in legit if got[c.host] != "safe"),
        legit=len(legit),
        beyond_flagged=sum(1 for c in beyond if got[c.host] != "safe"),
        beyond=len(beyond),
    )


def agreement() -> list[Score]:
    """Score every available approach on the labelled hosts."""
    cases = load_cases()
    scores = [score("elicitguard analyze_host", elicitguard_verdict, cases)]
    try:
        import confusable_homoglyphs  # noqa: F401
    except ImportError:
        pass
    else:
        scores.append(score("confusable_homoglyphs.is_dangerous", homoglyphs_verdict, cases))
    icu_fn = icu_verdict_fn()
    if icu_fn is not None:
        scores.append(score("ICU SpoofChecker (highly restrictive)", icu_fn, cases))
    return scores


def print_agreement(scores: list[Score]) -> None:
    cases = load_cases()
    anchor = [c for c in cases if c.kind != "beyond"]
    print(f"IDN display agreement on {len(anchor)} labelled hosts (Chromium: {sum(c.chromium != 'safe' for c in anchor)} not safe)")
    header = f"{'approach':<40} {'=Chromium':>9} {'prec':>6} {'recall':>6} {'FPR':>6} {'=Firefox':>8} {'legit flagged':>14} {'ASCII look-alikes':>18}"
    print(header)
    print("-" * len(header))
    for s in scores:
        print(
            f"{s.name:<40} {s.exact:>9.3f} {s.precision:>6.3f} {s.recall:>6.3f} {s.fpr:>6.3f} {s.firefox_exact:>8.3f}"
            f" {s.legit_flagged:>7}/{s.legit:<6} {s.beyond_flagged:>10}/{s.beyond:<7}"
        )
    print()


# --- speed ------------------------------------------------------------------------------


def _workload(quick: bool) -> list[str]:
    """Distinct hosts: the labelled ones plus everyday ASCII hosts (more of them in full runs)."""
    hosts = [c.host for c in load_cases()]
    hosts += ["auth.example.com", "api.github.com", "login.microsoftonline.com", "accounts.google.com", "mcp.acme.example"]
    if not quick:
        hosts += [f"tenant-{n}.auth.example.com" for n in range(100)]
    return list(dict.fromkeys(hosts))


def _clear_host_caches() -> None:
    for cached in (
        analyze_host,
        _lookalike.host_skeletons,
        _labels.restriction_level,
        _psl.registrable_ascii,
        _psl.public_suffix,
    ):
        cached.cache_clear()
    # The protected-domain index (_host._index) stays built, as in a running process.


def pairs(quick: bool) -> list[Pair]:
    """Cached and uncached host analysis next to confusable_homoglyphs on the same hosts."""
    print_agreement(agreement())
    hosts = _workload(quick)
    try:
        from confusable_homoglyphs import confusables
    except ImportError:
        print("bench_domains: install the `bench` extra for the confusable_homoglyphs baseline")
        return []
    labels = [_unicode_labels(h) or [h] for h in hosts]
    dangerous = confusables.is_dangerous

    def baseline() -> None:
        for host_labels in labels:
            for label in host_labels:
                dangerous(label)

    def cached() -> None:
        for host in hosts:
            analyze_host(host)

    def uncached() -> None:
        _clear_host_caches()
        for host in hosts:
            analyze_host(host)

    return [
        Pair("domains: analyze_host, cached", cached, baseline, len(hosts), None, "", "confusable_homoglyphs"),
        Pair("domains: analyze_host, uncached", uncached, baseline, len(hosts), None, "", "confusable_homoglyphs"),
    ]


def main() -> int:
    results = [measure_pair(p, rounds=15) for p in pairs(quick=True)]
    print_table(results)
    for r in results:
        rate = 1_000_000 / r.subject_median_us if r.subject_median_us else 0.0
        base = 1_000_000 / r.baseline_median_us if r.baseline_median_us else 0.0
        print(f"  {r.name}: {rate:,.0f} hosts/s (confusable_homoglyphs: {base:,.0f} hosts/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
