"""``examples/ci/elicitguard-sarif.yml``: the workflow's lint command works on example traffic.

The test reads the command from the workflow (so an edit there is tested), points it at
``examples/traffic/`` instead of the user's ``captures/``, runs it, and checks the SARIF it
uploads: valid JSON, SARIF 2.1.0, results located at files under the traffic folder, the
category the upload step names, and exit 0 (``--fail-on never``).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import yaml
from tests.examples.support import ELICITGUARD, EXAMPLES, ROOT, clean_env

WORKFLOW = EXAMPLES / "ci" / "elicitguard-sarif.yml"


def steps() -> dict[str, dict[str, object]]:
    document = yaml.safe_load(WORKFLOW.read_text())
    [job] = document["jobs"].values()
    return {step.get("name", step.get("uses", "")): step for step in job["steps"]}


def test_the_workflow_lint_step_produces_the_uploaded_sarif(tmp_path: Path) -> None:
    """Run the `Lint the captures` step's command on examples/traffic/."""
    workflow = steps()
    command = shlex.split(str(workflow["Lint the captures"]["run"]))
    assert command[:3] == ["elicitguard", "lint", "captures/"]
    output = command[command.index("--output") + 1]
    command = [ELICITGUARD, "lint", "examples/traffic/", *command[3:]]
    command[command.index("--output") + 1] = str(tmp_path / output)
    done = subprocess.run(command, cwd=ROOT, env=clean_env(), capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    sarif = json.loads((tmp_path / output).read_text())
    assert sarif["version"] == "2.1.0"
    [run] = sarif["runs"]
    assert run["results"], "the example traffic plants violations"
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert all(uri.startswith("examples/traffic/") for uri in uris), sorted(uris)[:3]
    upload = workflow["Upload to code scanning"]["with"]
    assert isinstance(upload, dict)
    assert upload["sarif_file"] == output
    assert run["automationDetails"]["id"].startswith(upload["category"] + "/")


def test_the_workflow_installs_and_uploads() -> None:
    """The workflow installs elicitguard, and may write security events for the upload."""
    text = WORKFLOW.read_text()
    assert "pip install elicitguard" in text
    assert "github/codeql-action/upload-sarif@" in text
    assert "security-events: write" in text
