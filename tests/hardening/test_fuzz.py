"""The atheris fuzz targets run in CI for a few thousand inputs, and every finding stays fixed.

``fuzz/run.sh TARGET SECONDS`` runs them for longer (scripts/hardening_full.sh). Inputs that
once crashed a target live in tests/hardening/fuzz_regressions/ named ``TARGET-what``; each is
replayed through its target's entry point here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from tests.integration_support import require_module

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "fuzz"
TARGETS = ("extract", "urls", "policy", "captures", "sse", "bodies")
RUNS = int(os.environ.get("ELICITGUARD_FUZZ_RUNS", "1000"))
REGRESSIONS = Path(__file__).parent / "fuzz_regressions"


@pytest.mark.parametrize("target", TARGETS)
def test_target_runs_clean(target: str, tmp_path: Path) -> None:
    """A short coverage-guided run from the seed corpus finds no crash."""
    require_module("atheris")
    corpus = tmp_path / "corpus"
    shutil.copytree(FUZZ / "corpus" / target, corpus)
    result = subprocess.run(
        [
            sys.executable,
            f"fuzz_{target}.py",
            str(corpus),
            f"-runs={RUNS}",
            "-timeout=10",
            "-rss_limit_mb=2048",
            f"-artifact_prefix={tmp_path}/",
        ],
        cwd=FUZZ,
        capture_output=True,
        timeout=300,
    )
    log = result.stderr.decode(errors="replace")
    assert result.returncode == 0, log[-3000:]
    done = re.findall(r"Done (\d+) runs", log)
    assert done
    assert int(done[-1]) >= RUNS


def _target(name: str) -> ModuleType:
    sys.path.insert(0, str(FUZZ))
    try:
        spec = importlib.util.spec_from_file_location(f"fuzz_{name}", FUZZ / f"fuzz_{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(FUZZ))


@pytest.mark.parametrize("case", sorted(REGRESSIONS.iterdir()), ids=lambda p: p.name)
def test_fuzz_finding_stays_fixed(case: Path) -> None:
    """Each input that once crashed a target now passes through it cleanly."""
    require_module("atheris")
    target = _target(case.name.split("-", 1)[0])
    target.test_one_input(case.read_bytes())


def test_control_character_in_a_policy_is_a_clear_policy_error(tmp_path: Path) -> None:
    """Fuzzing finding: a control character made PyYAML's ReaderError escape the loader."""
    from elicitguard.engine.policy import load_policy
    from elicitguard.errors import PolicyError

    policy = tmp_path / "p.yaml"
    policy.write_text("name: x\nrules:\n  EG101: \x01\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=r"control character U\+0001") as caught:
        load_policy(policy, environ={})
    assert caught.value.line == 3
