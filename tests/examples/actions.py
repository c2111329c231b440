"""Run a composite GitHub Action's ``run:`` steps locally, as a runner would.

``${{ inputs.NAME }}`` takes the step's input (or the action's default), ``${{
github.action_path }}`` the checkout, ``${{ steps.ID.outputs.NAME }}`` what an earlier step
wrote to ``$GITHUB_OUTPUT``. Steps with ``uses:`` (setup-python, upload-sarif) are GitHub's
own and are recorded, not run; a step's ``if:`` is not evaluated.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


@dataclass
class ActionRun:
    """What the steps did: each run step's exit code and every step's outputs."""

    codes: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    stderr: dict[str, str] = field(default_factory=dict)


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def _substitute(text: str, inputs: dict[str, str], action_path: Path, run: ActionRun) -> str:
    def value(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        if expression == "github.action_path":
            return str(action_path)
        parts = expression.split(".")
        if parts[0] == "steps" and parts[2] == "outputs":
            return run.outputs.get(parts[1], {}).get(parts[3], "")
        raise AssertionError(f"expression not supported here: {expression}")

    return _EXPRESSION.sub(value, text)


def run_action(
    action_path: Path, given: dict[str, str], *, cwd: Path, env: dict[str, str], timeout: float
) -> ActionRun:
    """Run the ``run:`` steps of ``action_path/action.yml`` with the inputs ``given``."""
    action = load(action_path / "action.yml")
    assert action["runs"]["using"] == "composite"
    declared = action.get("inputs", {})
    unknown = set(given) - set(declared)
    assert not unknown, f"inputs the action does not declare: {sorted(unknown)}"
    inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    inputs.update(given)
    run = ActionRun()
    for index, step in enumerate(action["runs"]["steps"]):
        step_id = str(step.get("id", f"step{index}"))
        if "uses" in step:
            run.skipped.append(step)
            continue
        assert step.get("shell") == "bash", "composite run steps name their shell"
        output_file = cwd / f".github-output-{index}"
        output_file.write_text("")
        step_env = dict(env, GITHUB_OUTPUT=str(output_file))
        for name, raw in (step.get("env") or {}).items():
            step_env[name] = _substitute(str(raw), inputs, action_path, run)
        script = _substitute(str(step["run"]), inputs, action_path, run)
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=cwd,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        run.codes[step_id] = done.returncode
        run.stderr[step_id] = done.stderr
        outputs = dict(
            line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line
        )
        run.outputs[step_id] = outputs
        output_file.unlink()
    return run


def venv_seeing(site_packages: list[str], folder: Path) -> dict[str, str]:
    """A new virtual environment that also sees ``site_packages`` (the test environment's
    dependencies, so installing elicitguard into it needs no download of them); the
    environment variables that put it first on PATH."""
    subprocess.run(["python3", "-m", "venv", str(folder)], check=True, timeout=120)
    [own] = (folder / "lib").glob("python3*/site-packages")
    (own / "_test_dependencies.pth").write_text("\n".join(site_packages) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ELICITGUARD_", "VIRTUAL_"))}
    env["PATH"] = f"{folder / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(folder)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env
