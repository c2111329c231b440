"""``elicitguard init`` and the pre-commit hooks, run for real in a temporary git repository.

The newcomer's path from the README: ``elicitguard init`` in a project, captures under
``captures/``, ``pre-commit run``: green on benign traffic, red on planted violations, and
the same for the hook that ``.pre-commit-hooks.yaml`` publishes (run as a local hook with
the fields it declares, since installing it from the repository would build a virtual
environment from the package index).
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.examples.actions import venv_seeing
from tests.examples.support import ROOT

from elicitguard.cli import main

TRAFFIC = ROOT / "examples" / "traffic"
BIN = Path(sys.executable).parent


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELICITGUARD_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PRE_COMMIT_HOME"] = str(home / "pre-commit-home")
    env["GIT_CONFIG_GLOBAL"] = str(home / "gitconfig")
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["NO_COLOR"] = "1"
    return env


def _git_repo(path: Path, env: dict[str, str]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (Path(env["GIT_CONFIG_GLOBAL"])).write_text(
        "[user]\n\tname = t\n\temail = t@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)


def _pre_commit(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    return subprocess.run(
        [str(BIN / "pre-commit"), "run", "--all-files", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    if shutil.which("git") is None or not (BIN / "pre-commit").exists():
        pytest.fail("git and pre-commit (the test extra) are needed")
    return _env(tmp_path)


def test_init_writes_policy_pre_commit_and_workflow(tmp_path: Path) -> None:
    """The three files; the policy starts with the schema line and validates."""
    project = tmp_path / "shop"
    project.mkdir()
    assert main(["init", "--directory", str(project)]) == 0
    policy = (project / ".elicitguard.yaml").read_text()
    first = policy.splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    schema = Path(first.split("=", 1)[1])
    assert schema.name == "policy.schema.json"
    assert schema.is_file()
    assert yaml.safe_load(policy)["extends"] == ["builtin:default"]
    assert main(["policy", "validate", str(project / ".elicitguard.yaml")]) == 0
    hooks = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())
    assert hooks["repos"][0]["hooks"][0]["entry"] == "elicitguard lint"
    workflow = yaml.safe_load((project / ".github/workflows/elicitguard.yml").read_text())
    assert workflow["jobs"]["lint-captures"]["permissions"]["security-events"] == "write"


def test_init_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An existing file stops init before it writes anything; --force overwrites."""
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n")
    assert main(["init", "--directory", str(tmp_path)]) == 2
    assert "--force" in capsys.readouterr().err
    assert not (tmp_path / ".elicitguard.yaml").exists()
    assert (tmp_path / ".pre-commit-config.yaml").read_text() == "repos: []\n"
    assert main(["init", "--directory", str(tmp_path), "--force"]) == 0
    assert "elicitguard-lint" in (tmp_path / ".pre-commit-config.yaml").read_text()


def test_a_new_project_goes_green_through_init_and_pre_commit(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The README's path in a fresh venv: `pip install -e .` of the checkout, init, benign
    captures, pre-commit run: passes; a planted violation: fails."""
    fresh = venv_seeing(
        [p for p in site.getsitepackages() if p.startswith(sys.prefix)], tmp_path / "venv"
    )
    install = subprocess.run(
        ["python", "-m", "pip", "install", "--quiet", "-e", str(ROOT)],
        env=fresh,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    own = tmp_path / "venv" / "bin" / "elicitguard"
    assert own.exists(), "the install put elicitguard in the fresh venv"
    env = env | {"PATH": fresh["PATH"] + os.pathsep + str(BIN), "VIRTUAL_ENV": fresh["VIRTUAL_ENV"]}
    repo = tmp_path / "project"
    _git_repo(repo, env)
    done = subprocess.run([str(own), "init"], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (repo / "captures").mkdir()
    for name in ("2025-11-25-benign.jsonl", "2026-07-28-benign.jsonl"):
        shutil.copy(TRAFFIC / name, repo / "captures" / name)
    (repo / "notes.jsonl").write_text("not a capture: outside captures/\n")
    green = _pre_commit(repo, env)
    assert green.returncode == 0, green.stdout + green.stderr
    assert "elicitguard lint" in green.stdout
    lint = subprocess.run([str(own), "lint", "captures/"], cwd=repo, env=env, capture_output=True)
    assert lint.returncode == 0, lint.stdout
    shutil.copy(TRAFFIC / "2025-11-25-violations.jsonl", repo / "captures" / "new.jsonl")
    red = _pre_commit(repo, env)
    assert red.returncode == 1
    assert "EG" in red.stdout


def test_the_published_hook_lints_staged_captures(tmp_path: Path, env: dict[str, str]) -> None:
    """.pre-commit-hooks.yaml's hook (entry, files, serial) as a local hook in a new repo."""
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["language"] == "python"
    assert hook["id"] == "elicitguard-lint"
    repo = tmp_path / "repo"
    _git_repo(repo, env)
    local = dict(hook, language="system")
    local.pop("minimum_pre_commit_version", None)
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    shutil.copy(TRAFFIC / "2026-07-28-benign.jsonl", repo / "ok.jsonl")
    (repo / "README.txt").write_text("not a capture\n")
    assert _pre_commit(repo, env).returncode == 0
    shutil.copy(TRAFFIC / "har" / "2026-07-28-violations.har", repo / "bad.har")
    red = _pre_commit(repo, env)
    assert red.returncode == 1
    assert "bad.har" in red.stdout
