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


def test_result_type_object_is_judged_not_raised() -> None:
    """Fuzzing finding: a ``resultType`` object made extract() raise TypeError (EG901)."""
    from elicitguard.protocol.envelope import Direction, Envelope
    from elicitguard.protocol.extract import extract
    from elicitguard.protocol.session import SessionState

    for value in ({"a": 1}, ["input_required"], None, 7):
        message = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": value}}
        items = extract(Envelope(message, Direction.SERVER_TO_CLIENT), SessionState(), "2026-07-28")
        assert [i.kind.value for i in items] == ["result"]


def test_extends_name_too_long_is_a_policy_error_with_file_and_line(tmp_path: Path) -> None:
    """Fuzzing finding: an ``extends:`` entry past the file system's limit raised OSError."""
    from elicitguard.engine.policy import load_policy
    from elicitguard.errors import PolicyError

    policy = tmp_path / "p.yaml"
    policy.write_text("name: x\nextends:\n  - " + "a" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="file name too long") as caught:
        load_policy(policy, environ={})
    assert caught.value.file == str(policy)
    assert caught.value.line == 3
    assert len(str(caught.value)) < 400  # the huge name is shortened, not repeated


def test_extends_name_too_long_through_the_cli(tmp_path: Path) -> None:
    """``elicitguard policy validate`` reports it as a policy error, not a traceback."""
    policy = tmp_path / "p.yaml"
    policy.write_text("name: x\nextends:\n  - " + "b" * 5000 + "\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "elicitguard", "policy", "validate", str(policy)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert f"{policy}:3" in result.stderr + result.stdout


def test_har_with_invalid_utf8_stops_with_a_reported_line() -> None:
    """Fuzzing finding: overlong UTF-8 in a HAR string raised UnicodeDecodeError from read_har."""
    import io

    from elicitguard.lint.capture import Skipped
    from elicitguard.lint.har_reader import read_har

    har = (
        b'{"log":{"entries":[{"request":{"method":"POST","url":"http://x/mcp",'
        b'"postData":{"text":"\xc0\x80"}}}]}}'
    )
    entries = list(read_har(io.BytesIO(har), max_bytes=1 << 20, max_depth=64))
    skipped = [e for _, e in entries if isinstance(e, Skipped)]
    assert skipped
    assert "not UTF-8" in skipped[-1].message
