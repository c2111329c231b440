"""The domain example captures (EG401-EG407): generated from their definition, and linting
them reports exactly the planted EG4xx findings, in the envelope, raw and HAR formats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from elicitguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
TRAFFIC = ROOT / "examples" / "traffic"

#: (line, code) of every EG4xx finding each envelope capture plants.
PLANTED = {
    "2025-11-25-domain-violations": {
        (5, "EG401"),  # all-Cyrillic apple.com (recorded) ...
        (5, "EG403"),  # ... whole-script confusable ...
        (5, "EG404"),  # ... look-alike of apple.com
        (9, "EG401"),  # 例え.jp: legitimate, only recorded
        (13, "EG406"),  # -32042 data: paypal.com@pay.evil.example
        (15, "EG405"),  # right-to-left override in the path
        (19, "EG401"),  # software-update with a Cyrillic o (recorded) ...
        (19, "EG402"),  # ... mixed script
        (23, "EG407"),  # punycode that does not decode
    },
    "2026-07-28-domain-violations": {
        (4, "EG404"),  # rnicrosoft.com (ASCII look-alike)
        (8, "EG401"),  # bücher.de: legitimate, only recorded
        (12, "EG404"),  # accounts.google.com.secure-login.example: google under bait words ...
        (12, "EG406"),  # ... and a protected domain spelled inside another
        (16, "EG401"),  # пример.рф: legitimate, only recorded
        (20, "EG401"),  # all-Cyrillic paypal.com (recorded) ...
        (20, "EG403"),  # ... whole-script confusable ...
        (20, "EG404"),  # ... look-alike of paypal.com
    },
}


def test_captures_match_their_definition() -> None:
    """`make_example_traffic.py --check --definition examples/traffic/domain-scenarios.yaml` passes."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_example_traffic.py"), "--check", "--definition", str(TRAFFIC / "domain-scenarios.yaml")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_lint_reports_the_planted_domain_findings(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every planted EG4xx finding at its line, and no other EG4xx finding."""
    code = main(["lint", "--format", "json", str(TRAFFIC / f"{name}.jsonl")])
    report = json.loads(capsys.readouterr().out)
    found = {(f["line"], f["code"]) for f in report["findings"] if f["code"].startswith("EG4")}
    assert found == PLANTED[name]
    assert report["errors"] == []
    assert code == 1


@pytest.mark.parametrize("name", sorted(PLANTED))
@pytest.mark.parametrize("fmt", ["raw", "har"])
def test_other_formats_find_the_same_codes(name: str, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The raw JSON-RPC and HAR copies of the capture yield the same EG4xx codes."""
    path = TRAFFIC / fmt / (f"{name}.jsonl" if fmt == "raw" else f"{name}.har")
    main(["lint", "--format", "json", "--protocol-version", name[:10], str(path)])
    report = json.loads(capsys.readouterr().out)
    codes = sorted(f["code"] for f in report["findings"] if f["code"].startswith("EG4"))
    assert codes == sorted(code for _, code in PLANTED[name])
