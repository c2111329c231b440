"""analyze_host decides like Chromium's IDN display policy on our labelled hosts.

The rows (benchmarks/data/idn_anchor_cases.tsv) are our own cases written from the anchors'
documented rules; benchmarks/bench_domains.py scores other approaches on the same rows.
ASCII look-alikes ("beyond") are hosts both browsers display as typed: elicitguard flags the
ones that imitate a protected domain, on purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elicitguard.checks.domains import analyze_host

ROOT = Path(__file__).resolve().parents[2]
ROWS = [
    line.split("\t")
    for line in (ROOT / "benchmarks" / "data" / "idn_anchor_cases.tsv").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]
UNSAFE = frozenset({"mixed_script", "whole_script_confusable", "lookalike"})


def verdict(host: str) -> str:
    kinds = analyze_host(host).kinds
    if "invalid_idn" in kinds:
        return "invalid"
    return "unsafe" if kinds & UNSAFE else "safe"


@pytest.mark.parametrize(("host", "chromium", "firefox", "kind", "note"), [r for r in ROWS if r[3] != "beyond"], ids=[f"{r[3]}:{r[4]}" for r in ROWS if r[3] != "beyond"])
def test_agrees_with_chromium(host: str, chromium: str, firefox: str, kind: str, note: str) -> None:
    """Same verdict as Chromium's display policy (safe, unsafe or invalid)."""
    assert chromium == verdict(host), note


def test_ascii_lookalikes_of_protected_domains_are_flagged() -> None:
    """Beyond the browsers: ASCII look-alikes of protected domains are flagged (digits for
    letters too), the real domains are not."""
    beyond = {r[0]: verdict(r[0]) for r in ROWS if r[3] == "beyond"}
    assert beyond == {"rnicrosoft.com": "unsafe", "paypa1.com": "unsafe", "stripe.corn": "unsafe", "github.com": "safe", "g00gle.com": "unsafe"}


def test_the_table_covers_every_class_and_many_scripts() -> None:
    """Legitimate names in many scripts, and every spoof class, are represented."""
    kinds = {r[3] for r in ROWS}
    assert {"legit", "mixed", "wsc", "digit", "cjk", "tld", "deviation", "latin-mix", "lookalike", "invalid", "beyond"} <= kinds
    assert sum(r[3] == "legit" for r in ROWS) >= 40
