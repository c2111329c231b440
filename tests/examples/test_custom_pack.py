"""``examples/custom_pack/``: a user rule pack, its cases, its policy, and its README commands."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.examples.support import ELICITGUARD, EXAMPLES, ROOT, clean_env

PACK = EXAMPLES / "custom_pack"


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ELICITGUARD, *args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=60
    )


def test_the_pack_cases_pass() -> None:
    """``elicitguard rules test examples/custom_pack/rules`` passes every case, exit 0."""
    done = cli("rules", "test", "examples/custom_pack/rules")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 passed, 0 failed, 0 todo (2 rules)" in done.stdout


def test_a_wrong_expectation_fails_the_run(tmp_path: Path) -> None:
    """A case whose expectation the rule does not meet fails ``rules test`` (exit 1)."""
    rules = shutil.copytree(PACK / "rules", tmp_path / "rules")
    cases = rules / "ACME002-employee-id-in-form.cases.yaml"
    text = cases.read_text()
    cases.write_text(
        text.replace('{expect: ok, note: "employees', '{expect: ruleid, note: "employees')
    )
    done = cli("rules", "test", str(rules))
    assert done.returncode == 1
    assert "FAIL ACME002::employees count is not an id" in done.stdout


def test_the_policy_lints_the_capture() -> None:
    """The README's lint command: ACME001 on line 3, ACME002 on line 4, exit 1."""
    assert cli("policy", "validate", "examples/custom_pack/policy.yaml").returncode == 0
    done = cli(
        "lint",
        "examples/custom_pack/capture.jsonl",
        "--policy",
        "examples/custom_pack/policy.yaml",
        "--format",
        "json",
    )
    assert done.returncode == 1
    findings = json.loads(done.stdout)["findings"]
    assert [(f["code"], f["line"]) for f in findings] == [("ACME001", 3), ("ACME002", 4)]
    explained = cli("rules", "explain", "ACME002", "--pack", "examples/custom_pack/rules")
    assert explained.returncode == 0
    assert "# ACME002 employee-id-in-form" in explained.stdout


def test_the_readme_commands_are_the_tested_ones() -> None:
    """The README shows the commands these tests run."""
    readme = (PACK / "README.md").read_text()
    assert "elicitguard rules test examples/custom_pack/rules" in readme
    assert (
        "elicitguard lint examples/custom_pack/capture.jsonl --policy examples/custom_pack/policy.yaml"
        in readme
    )
