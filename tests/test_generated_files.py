"""Generated files are never stale: docs/rules pages and the JSON Schemas of the formats."""

from __future__ import annotations

import json
from pathlib import Path

from elicitguard.cli import schema_documents
from elicitguard.engine.docs import write_docs
from elicitguard.engine.rules import builtin_rules


def test_rule_docs_are_current(root: Path) -> None:
    """`elicitguard rules docs` has been run after the last rule change."""
    stale = write_docs(builtin_rules(), root / "docs" / "rules", check=True)
    assert [str(p.relative_to(root)) for p in stale] == [], "run `elicitguard rules docs`"


def test_json_schemas_are_current(root: Path) -> None:
    """`elicitguard policy schema` has been run after the last model change."""
    for name, document in schema_documents().items():
        path = root / "schema" / name
        assert path.is_file(), f"missing {path}; run `elicitguard policy schema`"
        assert json.dumps(document, indent=2, sort_keys=True) + "\n" == path.read_text(
            encoding="utf-8"
        )


def test_every_rule_page_has_the_fixed_headings(root: Path) -> None:
    """What it does, why it is bad, an example, the fix (ruff's page shape)."""
    for page in (root / "docs" / "rules").glob("EG*.md"):
        text = page.read_text(encoding="utf-8")
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix"):
            assert heading in text, f"{page.name} lacks {heading}"


def test_rule_index_groups_by_family_and_links_every_page(root: Path) -> None:
    """docs/rules/index.md has one section per rule family and links each rule page once."""
    import re

    from elicitguard.engine.docs import FAMILIES

    folder = root / "docs" / "rules"
    index = (folder / "index.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", index, flags=re.MULTILINE)
    assert headings == [title for title, _ in FAMILIES.values()]
    linked = re.findall(r"\]\((EG\d+)\.md\)", index)
    pages = sorted(p.stem for p in folder.glob("EG*.md"))
    assert sorted(linked) == pages
    for rule in builtin_rules():
        assert rule.path.parent.name in FAMILIES, f"{rule.spec.code}: add its family to FAMILIES"
