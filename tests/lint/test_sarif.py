"""`elicitguard lint --format sarif`: valid SARIF 2.1.0 that GitHub code scanning accepts."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from elicitguard.cli import main
from elicitguard.engine.policy import load_policy
from elicitguard.lint import sarif
from elicitguard.lint.runner import LintFinding, LintResult

ROOT = Path(__file__).resolve().parents[2]
TRAFFIC = ROOT / "examples" / "traffic"
SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"


@cache
def _validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )


def _valid(document: dict[str, Any]) -> None:
    errors = sorted(_validator().iter_errors(document), key=lambda e: list(e.path))
    assert [f"{list(e.path)}: {e.message}" for e in errors] == []


def lint_sarif(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["lint", "--format", "sarif", *args])
    return code, json.loads(capsys.readouterr().out)


def test_report_validates_against_the_official_schema(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every bundled capture, in all three formats, gives schema-valid SARIF."""
    code, document = lint_sarif(capsys, "--server-name", "acme-crm", str(TRAFFIC))
    assert code == 1
    _valid(document)
    assert document["version"] == "2.1.0"
    run = document["runs"][0]
    assert run["results"]
    assert run["automationDetails"]["id"].startswith("elicitguard/")


def test_rules_carry_security_severity_help_and_few_tags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Code scanning needs security-severity and tags on rules; at most 10 tags are kept."""
    _, document = lint_sarif(capsys, str(TRAFFIC / "2025-11-25-violations.jsonl"))
    rules = {r["id"]: r for r in document["runs"][0]["tool"]["driver"]["rules"]}
    assert {"EG101", "EG113", "EG122", "EG901"} <= set(rules)
    for rule in rules.values():
        props = rule["properties"]
        assert 0.0 < float(props["security-severity"]) <= 10.0
        assert "security" in props["tags"]
        assert len(props["tags"]) <= sarif.MAX_TAGS
        assert rule["help"]["text"]
        assert rule["help"]["markdown"]
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
    assert "external/cwe/cwe-285" in rules["EG101"]["properties"]["tags"]
    assert rules["EG102"]["properties"]["security-severity"] == "8.0"


def test_results_locate_file_line_and_logical_location(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A result points at the capture line and names server / method / pointer."""
    _, document = lint_sarif(capsys, "examples/traffic/2025-11-25-violations.jsonl")
    run = document["runs"][0]
    results = {r["ruleId"]: r for r in run["results"]}
    eg102 = results["EG102"]
    physical = eg102["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "examples/traffic/2025-11-25-violations.jsonl"
    assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert physical["region"]["startLine"] == 5
    logical = eg102["locations"][0]["logicalLocations"][0]
    assert logical["fullyQualifiedName"] == "acme-crm/elicitation/create#/params/mode"
    assert eg102["level"] == "error"
    rules = run["tool"]["driver"]["rules"]
    assert rules[eg102["ruleIndex"]]["id"] == "EG102"


def test_fingerprints_come_from_rule_server_method_pointer_never_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Moving a finding to another line, or changing the offending value, keeps its fingerprint."""
    line = (
        '{"direction":"server_to_client","server":"crm","message":{"jsonrpc":"2.0","id":1,'
        '"method":"elicitation/create","params":{"mode":"url","message":"Open",'
        '"url":"%s"}}}\n'
    )
    one = tmp_path / "one.jsonl"
    one.write_text(line % "/relative-a")
    two = tmp_path / "two.jsonl"
    two.write_text(
        '{"direction":"client_to_server","message":{"jsonrpc":"2.0","method":"x"}}\n'
        + line % "/other-b"
    )
    prints = []
    for path in (one, two):
        _, document = lint_sarif(capsys, "--protocol-version", "2025-11-25", str(path))
        results = [r for r in document["runs"][0]["results"] if r["ruleId"] == "EG107"]
        prints.append({json.dumps(r["partialFingerprints"]) for r in results})
        assert "relative-a" not in json.dumps(document)
        assert "other-b" not in json.dumps(document)
    assert prints[0] == prints[1]
    assert prints[0]


def test_exceptions_become_suppressions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A finding an exception turned off is a result with an accepted external suppression."""
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "extends: ['builtin:default']\n"
        "exceptions:\n"
        "  - {rules: [EG102], where: {server: acme-crm}, reason: 'URL mode is rolled out'}\n"
    )
    _, document = lint_sarif(
        capsys, "--policy", str(policy), str(TRAFFIC / "2025-11-25-violations.jsonl")
    )
    _valid(document)
    suppressed = [r for r in document["runs"][0]["results"] if r.get("suppressions")]
    assert [r["ruleId"] for r in suppressed] == ["EG102"]
    assert suppressed[0]["suppressions"][0]["status"] == "accepted"
    assert suppressed[0]["suppressions"][0]["justification"] == "URL mode is rolled out"


def test_unreadable_lines_are_tool_execution_notifications(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Bad lines and skipped messages show up as notifications, never their content."""
    path = tmp_path / "bad.jsonl"
    path.write_text('not json at all SECRETVALUE\n{"jsonrpc":"2.0","id":3,"result":{}}\n')
    _, document = lint_sarif(capsys, "--input-format", "jsonrpc", str(path))
    _valid(document)
    notes = document["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    lines = [n["locations"][0]["physicalLocation"]["region"]["startLine"] for n in notes]
    assert lines == [1, 2]
    assert "SECRETVALUE" not in json.dumps(document)


def test_results_are_capped_per_rule_and_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the caps, the most severe results are kept and the rest counted."""
    monkeypatch.setattr(sarif, "MAX_RESULTS_PER_RULE", 3)
    monkeypatch.setattr(sarif, "MAX_RESULTS", 5)
    policy = load_policy()
    from elicitguard.base.decision import Action, Confidence, Finding, Severity

    def finding(code: str, severity: Severity, n: int) -> LintFinding:
        f = Finding(
            code=code,
            name="x",
            severity=severity,
            confidence=Confidence.HIGH,
            action=Action.WARN,
            message="m",
            pointer=f"/p/{n}",
            requirements=(),
            fingerprint=f"{code}{n}",
        )
        return LintFinding(f, "c.jsonl", n, None, None, None, None)

    result = LintResult(
        findings=[finding("EG104", Severity.MEDIUM, n) for n in range(4)]
        + [finding("EG102", Severity.HIGH, n) for n in range(4)]
    )
    document = sarif.sarif_document(result, policy)
    _valid(document)
    run = document["runs"][0]
    kept = [r["ruleId"] for r in run["results"]]
    assert kept.count("EG102") == 3
    assert kept.count("EG104") == 2
    assert run["properties"]["resultsLeftOut"] == 3
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert {"results-capped"} == {n["descriptor"]["id"] for n in notes}


def test_har_results_carry_entry_and_event(capsys: pytest.CaptureFixture[str]) -> None:
    """HAR findings have no line: they point at line 1 and name the entry and event."""
    _, document = lint_sarif(capsys, str(TRAFFIC / "har" / "2025-11-25-violations.har"))
    _valid(document)
    result = next(r for r in document["runs"][0]["results"] if r["ruleId"] == "EG102")
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert (result["properties"]["harEntry"], result["properties"]["harEvent"]) == (2, 0)
