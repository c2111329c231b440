"""The README's rules table is generated from the rule files and never stale."""

from __future__ import annotations

from pathlib import Path

from elicitguard.engine.docs import README_TABLE_END, README_TABLE_START, update_readme
from elicitguard.engine.rules import builtin_rules

ROOT = Path(__file__).resolve().parents[2]


def test_readme_rules_table_is_current() -> None:
    """`python scripts/gen_readme_rules.py` has been run after the last rule change."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert update_readme(text, builtin_rules()) == text, "run `python scripts/gen_readme_rules.py`"


def test_the_table_has_one_row_per_rule() -> None:
    """Every built-in rule has its row, linked to its page."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index(README_TABLE_START) : text.index(README_TABLE_END)]
    for rule in builtin_rules():
        assert f"| [{rule.spec.code}](docs/rules/{rule.spec.code}.md) | {rule.spec.name}:" in table
