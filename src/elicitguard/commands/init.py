"""``elicitguard init``: start a project: a policy, a pre-commit hook and a CI workflow.

Writes, in the current directory (or ``--directory``):

* ``.elicitguard.yaml``: a starter policy extending ``builtin:default``, whose first line
  points editors at the policy JSON Schema; ``elicitguard lint`` finds it without flags;
* ``.pre-commit-config.yaml``: a hook that lints the staged captures under ``--captures``
  with the elicitguard installed in your environment;
* ``.github/workflows/elicitguard.yml``: a workflow that lints the captures on every push
  and pull request and uploads the SARIF to code scanning, through the elicitguard action.

An existing file is never overwritten unless ``--force`` is given: without it, nothing is
written and the command exits 2 naming the files in the way.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from elicitguard.commands._project_config import POLICY_FILE
from elicitguard.commands._terminal import verbosity

__all__ = ["ACTION", "register", "render_files"]

EXIT_OK = 0
EXIT_REFUSED = 2
#: The GitHub Action the workflow uses (``action.yml`` at the root of elicitguard's repository).
ACTION = "elicitguard/elicitguard@main"
PRE_COMMIT_FILE = ".pre-commit-config.yaml"
WORKFLOW_FILE = ".github/workflows/elicitguard.yml"


def register(subparsers: Any) -> None:
    """Add ``init``."""
    parser = subparsers.add_parser(
        "init",
        help="write a starter policy, a pre-commit hook and a CI workflow",
        description=__doc__,
    )
    parser.add_argument(
        "--directory", type=Path, default=Path(), help="the project folder (default: here)"
    )
    parser.add_argument(
        "--captures",
        default="captures",
        metavar="DIR",
        help="the folder holding the captures, relative to the project (default: captures)",
    )
    parser.add_argument("--action", default=ACTION, help=f"the action to use (default: {ACTION})")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.set_defaults(handler=_run)


def _schema_reference(directory: Path) -> str:
    """Where the editor finds the policy schema: relative inside the project, else absolute."""
    from elicitguard._resources import data_dir

    schema = (data_dir("schema") / "policy.schema.json").resolve()
    project = directory.resolve()
    if schema.is_relative_to(project):
        return Path(os.path.relpath(schema, project)).as_posix()
    return schema.as_posix()


def _policy(name: str, schema: str) -> str:
    return f"""\
# yaml-language-server: $schema={schema}
# The elicitguard policy of this project: `elicitguard lint` finds it from any folder below
# this one. `elicitguard policy validate {POLICY_FILE}` checks it; `elicitguard policy show
# {POLICY_FILE}` prints what it resolves to. The format: README, "Writing a policy".
name: {name}
extends: [builtin:default]
# environment: prod          # dev | test | prod (ELICITGUARD_ENV and --env override it)
# rules:
#   EG306: {{action: "off"}}   # turn a rule off, or set its action: allow, log, warn, redact, block
lists:
  # Your own domains: look-alikes of them are flagged (EG404).
  protected_domains: []
"""


def _pre_commit(captures: str) -> str:
    pattern = re.escape(captures.strip("/")) + r"/.*\.(jsonl|har)$"
    return f"""\
# pre-commit (https://pre-commit.com): `pre-commit install`, then every commit lints the
# staged captures under {captures}/ with the elicitguard installed in your environment.
repos:
  - repo: local
    hooks:
      - id: elicitguard-lint
        name: elicitguard lint
        entry: elicitguard lint
        language: system
        files: ^{pattern}
        require_serial: true
"""


def _workflow(captures: str, action: str) -> str:
    return f"""\
# Lint the captures under {captures}/ on every push and pull request, and show the findings
# in GitHub code scanning (Security > Code scanning). Written by `elicitguard init`.
name: elicitguard

on:
  push:
    branches: [main]
  pull_request:

permissions:
  contents: read

jobs:
  lint-captures:
    runs-on: ubuntu-latest
    permissions:
      contents: read
      security-events: write   # the SARIF upload needs it
    steps:
      - uses: actions/checkout@v4
      - name: Lint the captures
        uses: {action}
        with:
          paths: {captures}/
          category: elicitguard/captures
          # the SARIF carries the findings and code scanning gates the pull request;
          # set fail-on to low to also fail this job on findings.
          fail-on: never
"""


def render_files(directory: Path, captures: str, action: str = ACTION) -> dict[str, str]:
    """The files ``init`` writes, by path relative to ``directory``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", directory.resolve().name).strip("-") or "project"
    return {
        POLICY_FILE: _policy(name, _schema_reference(directory)),
        PRE_COMMIT_FILE: _pre_commit(captures),
        WORKFLOW_FILE: _workflow(captures.strip("/"), action),
    }


def _run(args: argparse.Namespace) -> int:
    directory: Path = args.directory
    files = render_files(directory, args.captures, args.action)
    existing = [name for name in files if (directory / name).exists()]
    if existing and not args.force:
        for name in existing:
            print(f"elicitguard: {directory / name} exists", file=sys.stderr)
        print("elicitguard: nothing written; pass --force to overwrite", file=sys.stderr)
        return EXIT_REFUSED
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if verbosity(args) >= 0:
            print(f"wrote {path}")
    if verbosity(args) >= 0:
        print(
            "next: put your captures (JSONL or HAR) under "
            f"{args.captures.strip('/')}/, run `elicitguard lint {args.captures.strip('/')}/`, "
            "and `pre-commit install` to lint them on every commit"
        )
    return EXIT_OK
