"""Configuration found without flags, ``--config``, ``--isolated``, and baselines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from elicitguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
TRAFFIC = ROOT / "examples" / "traffic"
VIOLATIONS = TRAFFIC / "2025-11-25-violations.jsonl"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with one capture, the working directory one level below it."""
    (tmp_path / "captures").mkdir()
    shutil.copy(VIOLATIONS, tmp_path / "captures" / "c.jsonl")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    monkeypatch.delenv("ELICITGUARD_ENV", raising=False)
    return tmp_path


def _lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main(["lint", "../captures", "--format", "json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def _codes(report: dict[str, object]) -> set[str]:
    return {f["code"] for f in report["findings"]}  # type: ignore[index, union-attr]


def test_pyproject_table_is_found_upward(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.elicitguard]\nselect = ["EG1*"]\nignore = "EG102"\n'
        'fail-on = "never"\n'
    )
    code, report = _lint(capsys)
    assert code == 0
    assert _codes(report)
    assert all(c.startswith("EG1") for c in _codes(report))
    assert "EG102" not in _codes(report)


def test_flags_win_over_the_configuration(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".elicitguard.toml").write_text('fail-on = "never"\nformat = "text"\n')
    code, report = _lint(capsys, "--fail-on", "low")
    assert code == 1
    assert report["findings"]


def test_format_from_the_configuration(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / ".elicitguard.toml").write_text('format = "sarif"\n')
    main(["lint", "../captures"])
    assert json.loads(capsys.readouterr().out)["version"] == "2.1.0"


def test_elicitguard_yaml_is_the_project_policy(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """init's .elicitguard.yaml is used without --policy; --isolated ignores it."""
    (project / ".elicitguard.yaml").write_text(
        'name: mine\nextends: [builtin:default]\nrules:\n  "EG1*": {action: "off"}\n'
    )
    _, report = _lint(capsys)
    assert not any(c.startswith("EG1") for c in _codes(report))
    _, isolated = _lint(capsys, "--isolated")
    assert any(c.startswith("EG1") for c in _codes(isolated))


def test_config_flag_names_the_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = project / "ci.toml"
    other.write_text('select = "EG105"\n')
    _, report = _lint(capsys, "--config", str(other))
    assert _codes(report) == {"EG105"}


def test_a_relative_policy_is_read_from_the_configuration_folder(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "policies").mkdir()
    (project / "policies" / "p.yaml").write_text(
        'extends: [builtin:default]\nrules:\n  "*": {action: "off"}\n'
    )
    (project / "pyproject.toml").write_text('[tool.elicitguard]\npolicy = "policies/p.yaml"\n')
    code, report = _lint(capsys)
    assert code == 0
    assert report["findings"] == []


def test_a_bad_configuration_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".elicitguard.toml").write_text('fail_on_typo = "x"\n')
    assert main(["lint", "../captures"]) == 2
    assert "unknown setting 'fail_on_typo'" in capsys.readouterr().err
    (project / ".elicitguard.toml").write_text('fail-on = "sometimes"\n')
    assert main(["lint", "../captures"]) == 2
    assert "fail-on must be one of" in capsys.readouterr().err
    (project / ".elicitguard.toml").write_text("fail-on = \n")
    assert main(["lint", "../captures"]) == 2
    assert "not valid TOML" in capsys.readouterr().err


# --- baselines ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["json", "sarif"])
def test_a_baseline_keeps_known_findings_quiet_and_new_ones_fail(
    kind: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = project / f"baseline.{kind}"
    if kind == "json":
        assert main(["lint", "../captures", "--write-baseline", str(baseline)]) == 0
    else:
        main(["lint", "../captures", "--format", "sarif", "--output", str(baseline)])
    capsys.readouterr()
    code, report = _lint(capsys, "--baseline", str(baseline))
    assert code == 0
    assert report["findings"] == []
    assert main(["lint", "../captures", "--baseline", str(baseline)]) == 0
    assert "known findings left out by the baseline" in capsys.readouterr().out
    # a new problem in a new capture is not in the baseline
    shutil.copy(TRAFFIC / "2026-07-28-violations.jsonl", project / "captures" / "new.jsonl")
    code, report = _lint(capsys, "--baseline", str(baseline))
    assert code == 1
    assert report["findings"]
    assert {f["file"].rsplit("/", 1)[-1] for f in report["findings"]} == {"new.jsonl"}  # type: ignore[index, union-attr]


def test_a_baseline_survives_edits_of_the_capture(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fingerprints never name a line: lines added above keep the findings known."""
    baseline = project / "b.json"
    main(["lint", "../captures", "--write-baseline", str(baseline)])
    capture = project / "captures" / "c.jsonl"
    benign = (TRAFFIC / "2025-11-25-benign.jsonl").read_text()
    capture.write_text(benign + capture.read_text())
    code, report = _lint(capsys, "--baseline", str(baseline))
    assert code == 0, report


def test_a_baseline_that_is_not_a_report_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "b.json").write_text('{"x": 1}')
    assert main(["lint", "../captures", "--baseline", str(project / "b.json")]) == 2
    assert "neither an elicitguard JSON report nor a SARIF log" in capsys.readouterr().err
    assert main(["lint", "../captures", "--baseline", str(project / "missing.json")]) == 2
