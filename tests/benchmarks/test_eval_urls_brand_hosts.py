"""The look-alike host set of ``benchmarks/eval_urls.py``: popular sites stay quiet.

Chromium's list of popular sites holds only real sites' own domains, so none may be blocked
as a look-alike (a false alarm there would be one on real traffic); the phishing hosts of the
same file keep the share of them caught from falling back to where it was before the brand
checks (about a fifth).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import eval_urls  # noqa: E402


def test_popular_sites_are_not_blocked_and_phishing_hosts_are_caught() -> None:
    engine = eval_urls._engine()
    rows = eval_urls.brand_host_rows()
    controls = [r for r in rows if not r.attack]
    attacks = [r for r in rows if r.attack]
    assert len(controls) > 4000
    assert len(attacks) > 400
    blocked = [r.url for r in controls if eval_urls.judge(engine, r.url)[0]]
    assert blocked == []
    caught = sum(eval_urls.judge(engine, r.url)[0] for r in attacks)
    assert caught / len(attacks) >= 0.28
