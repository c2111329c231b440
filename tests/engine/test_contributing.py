"""CONTRIBUTING.md's "Adding a rule" works as written: its commands, run in a copy of the tree.

Every ``sh`` block of that section whose lines are ``elicitguard ...`` or ``python scripts/...``
is run literally (through bash, in a temporary copy of the checkout, with ``elicitguard`` and
``python`` meaning this interpreter on the copy's ``src``). Afterwards the new rule's three
files exist, ``rules test`` passed on the result, and the generated files are current.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", "*.egg-info")


def _section_commands() -> list[str]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a rule") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return [
        line.strip()
        for block in blocks
        for line in block.splitlines()
        if line.strip().startswith(("elicitguard ", "python scripts/"))
    ]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of what a rule change touches: sources, rules, docs, scripts, README."""
    copy = tmp_path / "elicitguard"
    for name in ("src", "rules", "policy", "docs", "scripts"):
        shutil.copytree(ROOT / name, copy / name, ignore=_IGNORE)
    for name in ("README.md", "pyproject.toml", "CONTRIBUTING.md"):
        shutil.copy2(ROOT / name, copy / name)
    shims = tmp_path / "bin"
    shims.mkdir()
    for name, run in (("elicitguard", "-m elicitguard"), ("python", "")):
        shim = shims / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {run} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    return copy


def _run(command: str, copy: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{copy.parent / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(copy / "src"),
        "NO_COLOR": "1",
    }
    env.pop("ELICITGUARD_ENV", None)
    return subprocess.run(
        ["bash", "-c", command], cwd=copy, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_section_names_the_commands_a_rule_needs() -> None:
    """The walk-through scaffolds, tests, and regenerates (so this test has work to do)."""
    commands = _section_commands()
    assert commands[0].startswith("elicitguard rules new EG299 ")
    assert "elicitguard rules test" in commands
    assert "elicitguard rules docs" in commands
    assert "python scripts/gen_readme_rules.py" in commands


def test_following_contributing_adds_a_rule_that_rules_test_runs(checkout: Path) -> None:
    """Run each command as written; the rule exists in three files and everything passes."""
    outputs: dict[str, str] = {}
    for command in _section_commands():
        result = _run(command, checkout)
        assert result.returncode == 0, f"{command!r} failed:\n{result.stdout}\n{result.stderr}"
        outputs[command] = result.stdout
    name = "EG299-example-word-in-message"
    assert (checkout / "rules" / "form" / f"{name}.yaml").is_file()
    assert (checkout / "rules" / "form" / f"{name}.cases.yaml").is_file()
    module = (checkout / "src/elicitguard/engine/builtin/form_rules.py").read_text("utf-8")
    assert (
        '@check("form.example_word_in_message", pure=True, params=ExampleWordInMessageParams)'
        in module
    )
    assert ", 0 failed," in outputs["elicitguard rules test"]  # the last run, after the edits
    assert _run("elicitguard rules docs --check", checkout).returncode == 0
    assert _run("python scripts/gen_readme_rules.py --check", checkout).returncode == 0
    assert "[EG299](docs/rules/EG299.md)" in (checkout / "README.md").read_text("utf-8")
    assert (checkout / "docs" / "rules" / "EG299.md").is_file()
    lint = _run(
        f"{sys.executable} -m ruff check --no-cache src/elicitguard/engine/builtin", checkout
    )
    assert lint.returncode == 0, lint.stdout
