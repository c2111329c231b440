"""The JSON Schemas work in editors: ``$schema``, ``$id``, shipped, and named by the files.

An editor with the YAML language server validates and completes a file whose first line is
``# yaml-language-server: $schema=PATH``. Every example policy, rule and case file carries
that line, its path leads to the right schema, and the file is valid under it; the README
shows the line; the schemas declare their dialect and a stable ``$id``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from elicitguard._resources import data_dir
from elicitguard.commands.policy import JSON_SCHEMA_DIALECT, schema_documents

ROOT = Path(__file__).resolve().parents[2]
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")
EXAMPLE_FILES = sorted(
    p
    for p in (ROOT / "examples").rglob("*.yaml")
    if p.name == "policy.yaml" or p.parent.name == "rules"
)


def _expected_schema(path: Path) -> str:
    if path.name.endswith(".cases.yaml"):
        return "cases.schema.json"
    return "rule.schema.json" if path.parent.name == "rules" else "policy.schema.json"


def test_schemas_declare_dialect_and_id() -> None:
    ids = set()
    for name, document in schema_documents().items():
        assert document["$schema"] == JSON_SCHEMA_DIALECT
        assert document["$id"].startswith("urn:elicitguard:schema:")
        ids.add(document["$id"])
        jsonschema.Draft202012Validator.check_schema(document)
        shipped = json.loads((data_dir("schema") / name).read_text(encoding="utf-8"))
        assert shipped == document
    assert len(ids) == len(schema_documents())


def test_there_are_example_files() -> None:
    assert len(EXAMPLE_FILES) >= 4


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_files_name_their_schema_and_are_valid(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    match = MODELINE.match(text.splitlines()[0])
    assert match, f"{path.name}: first line is not a yaml-language-server modeline"
    schema_path = (path.parent / match.group(1)).resolve()
    assert schema_path == (ROOT / "schema" / _expected_schema(path)).resolve()
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(yaml.safe_load(text))


def test_the_readme_shows_the_modeline() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "# yaml-language-server: $schema=schema/policy.schema.json" in text
