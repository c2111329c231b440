"""``action.yml`` and ``examples/ci/elicitguard-sarif.yml``: the workflow's action, run here.

The example workflow uses the elicitguard action; the test reads the action step's inputs
from the workflow (so an edit there is tested), points ``paths`` at ``examples/traffic/``
instead of the user's ``captures/``, and runs the action's own ``run:`` steps with those
inputs: the install step installs elicitguard from the action's checkout into a fresh
virtual environment, the lint step writes the SARIF that the upload step names. The SARIF
is checked (2.1.0, results at the traffic files, the category), and so is the job's
outcome (``fail-on: never`` passes; ``fail-on: low`` fails on the planted violations).
"""

from __future__ import annotations

import json
import site
import sys
from pathlib import Path

import pytest
import yaml
from tests.examples.actions import load, run_action, venv_seeing
from tests.examples.support import EXAMPLES, ROOT

from elicitguard.commands.init import ACTION, render_files

WORKFLOW = EXAMPLES / "ci" / "elicitguard-sarif.yml"


def action_step(workflow: dict[str, object]) -> dict[str, object]:
    jobs = workflow["jobs"]
    assert isinstance(jobs, dict)
    [job] = jobs.values()
    [step] = [s for s in job["steps"] if str(s.get("uses", "")).startswith(ACTION.split("@")[0])]
    return step


def test_the_workflow_uses_the_action_and_never_pip_installs_a_package_index_release() -> None:
    """No `pip install elicitguard` (not published): the action installs from its checkout."""
    text = WORKFLOW.read_text()
    assert "pip install elicitguard" not in text
    step = action_step(yaml.safe_load(text))
    assert step["uses"] == ACTION
    assert "security-events: write" in text
    action = load(ROOT / "action.yml")
    assert set(step["with"]) <= set(action["inputs"])
    steps = action["runs"]["steps"]
    assert any("${{ github.action_path }}" in str(s.get("env", {})) for s in steps)
    assert any(
        str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@") for s in steps
    )


def test_init_writes_the_same_action_step() -> None:
    """`elicitguard init`'s workflow uses the action with the same inputs as the example."""
    ours = action_step(
        yaml.safe_load(render_files(ROOT, "captures")[".github/workflows/elicitguard.yml"])
    )
    example = action_step(yaml.safe_load(WORKFLOW.read_text()))
    assert ours["uses"] == example["uses"]
    assert ours["with"]["paths"] == example["with"]["paths"]
    assert ours["with"]["fail-on"] == example["with"]["fail-on"]


@pytest.fixture(scope="module")
def action_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A fresh venv; the action's install step puts elicitguard in it from the checkout."""
    folder = tmp_path_factory.mktemp("action") / "venv"
    paths = [p for p in [*site.getsitepackages(), site.getusersitepackages()] if Path(p).is_dir()]
    return venv_seeing([p for p in paths if p.startswith(sys.prefix)], folder)


def test_the_action_lints_and_writes_the_uploaded_sarif(
    action_env: dict[str, str], tmp_path: Path
) -> None:
    """Run the action's steps with the example's inputs on examples/traffic/."""
    step = action_step(yaml.safe_load(WORKFLOW.read_text()))
    inputs = {k: str(v) for k, v in step["with"].items()}
    assert inputs["paths"] == "captures/"
    inputs["paths"] = "examples/traffic/"
    inputs["sarif-file"] = str(tmp_path / inputs["sarif-file"])
    run = run_action(ROOT, inputs, cwd=ROOT, env=action_env, timeout=600)
    assert all(code == 0 for code in run.codes.values()), run.stderr
    assert run.outputs["lint"]["exit-code"] == "0"  # fail-on: never
    [installed] = list(Path(action_env["VIRTUAL_ENV"]).glob("lib/*/site-packages/elicitguard"))
    assert installed.is_dir(), "the install step installs from the action's checkout"
    sarif = json.loads(Path(inputs["sarif-file"]).read_text())
    assert sarif["version"] == "2.1.0"
    [result_run] = sarif["runs"]
    assert result_run["results"], "the example traffic plants violations"
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in result_run["results"]
    }
    assert all(uri.startswith("examples/traffic/") for uri in uris), sorted(uris)[:3]
    [upload] = [s for s in run.skipped if "upload-sarif" in s["uses"]]
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert result_run["automationDetails"]["id"].startswith(inputs["category"] + "/")


def test_the_action_fails_the_job_on_findings_at_fail_on(
    action_env: dict[str, str], tmp_path: Path
) -> None:
    """fail-on: low (the default): the lint step records exit 1, the last step fails."""
    inputs = {
        "paths": "examples/traffic/2025-11-25-violations.jsonl",
        "sarif-file": str(tmp_path / "out.sarif"),
    }
    run = run_action(ROOT, inputs, cwd=ROOT, env=action_env, timeout=600)
    assert run.outputs["lint"]["exit-code"] == "1"
    assert list(run.codes.values())[-1] == 1
