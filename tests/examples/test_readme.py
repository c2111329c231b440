"""The README stays accurate: its commands exist, its links resolve, its code parses.

A newcomer follows the README alone, so every relative link must lead somewhere, every
in-page link must name a heading, every Python snippet must at least parse, every
`elicitguard ...` command line it shows must name a real subcommand, and the test command
at the top must be the one `.ci/run` runs.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.examples.support import ELICITGUARD, ROOT, clean_env

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "examples").glob("*/README.md")), ROOT / "examples" / "README.md"]
INSTALL = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && "
    "elicitguard lint examples/traffic/"
)
TEST = "python3 -m venv .venv && . .venv/bin/activate && pip install -q -e '.[test]' && pytest"


def blocks(text: str, *languages: str) -> list[str]:
    found = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return [body for lang, body in found if lang in languages]


def test_the_two_commands_are_at_the_top_and_ci_runs_the_test_command() -> None:
    """Both commands in the first code block; `.ci/run` ends with the test command verbatim."""
    first = blocks(README.read_text(), "bash")[0]
    assert INSTALL in first.splitlines()
    assert TEST in first.splitlines()
    assert TEST in (ROOT / ".ci" / "run").read_text().splitlines()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path) -> None:
    """Every `[text](path)` that is not a URL points at an existing file or folder."""
    text = doc.read_text()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{doc.name}: broken link {target}"


def _slug(heading: str) -> str:
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


def test_in_page_links_name_headings() -> None:
    """Every `(#anchor)` in the README matches a heading's GitHub anchor."""
    text = README.read_text()
    anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}
    for anchor in re.findall(r"\]\(#([^)]+)\)", text):
        assert anchor in anchors, anchor


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_snippets_parse(doc: Path) -> None:
    """Python blocks are valid Python (top-level `await`/`async with` allowed, `...` bodies)."""
    for body in blocks(doc.read_text(), "python"):
        compile(body, str(doc), "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_json_and_yaml_snippets_parse(doc: Path) -> None:
    """JSON blocks are JSON (samples eliding a value with `4d1c...` aside); YAML is YAML."""
    for body in blocks(doc.read_text(), "json"):
        if '..."' not in body:
            json.loads(body)
    for body in blocks(doc.read_text(), "yaml"):
        yaml.safe_load(body)


#: Commands with subcommands (`elicitguard rules test`, `elicitguard proxy http`, ...).
GROUPS = {"rules", "policy", "audit", "proxy", "keys"}


def _commands() -> set[tuple[str, ...]]:
    """`elicitguard <sub> [<sub>]` prefixes of every command line in the shell blocks."""
    found: set[tuple[str, ...]] = set()
    for doc in DOCS:
        for body in blocks(doc.read_text(), "bash", "sh"):
            joined = body.replace("\\\n", " ")
            for line in joined.splitlines():
                line = line.split("#")[0].strip()
                for part in re.split(r"&&|;|\|", line):
                    words = shlex.split(part.strip().rstrip("&"))
                    if words[:1] != ["elicitguard"] or len(words) < 2:
                        continue
                    depth = 2 if words[1] in GROUPS else 1
                    found.add(tuple(words[1 : 1 + depth]))
    return found


@pytest.mark.parametrize("command", sorted(_commands()), ids=" ".join)
def test_documented_commands_exist(command: tuple[str, ...]) -> None:
    """`elicitguard <command> --help` succeeds for every command the docs show."""
    done = subprocess.run(
        [ELICITGUARD, *command, "--help"], capture_output=True, text=True, env=clean_env()
    )
    assert done.returncode == 0, done.stderr
