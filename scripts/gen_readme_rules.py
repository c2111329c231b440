"""Regenerate the README's rules table from the rule files (tests fail when it is stale).

Run from the repository root: ``python scripts/gen_readme_rules.py``. The table sits between
the markers of :data:`elicitguard.engine.docs.README_TABLE_START` and ``README_TABLE_END``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from elicitguard.engine.docs import update_readme
from elicitguard.engine.rules import builtin_rules

README = Path(__file__).resolve().parents[1] / "README.md"


def main() -> int:
    """Rewrite README.md's rules table; ``--check`` only says whether it is stale (exit 1)."""
    text = README.read_text(encoding="utf-8")
    fresh = update_readme(text, builtin_rules())
    if "--check" in sys.argv[1:]:
        return 0 if fresh == text else 1
    README.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
