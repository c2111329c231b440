"""The same scenario as envelope JSONL, raw JSON-RPC JSONL and HAR gives the same findings."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from elicitguard.cli import main
from elicitguard.lint.har_reader import sse_events

ROOT = Path(__file__).resolve().parents[2]
TRAFFIC = ROOT / "examples" / "traffic"
#: The scenarios scripts/make_example_traffic.py writes in all three formats.
SCENARIOS = sorted(
    s["name"]
    for s in yaml.safe_load((TRAFFIC / "scenarios.yaml").read_text(encoding="utf-8"))["scenarios"]
)


def _report(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    main(["lint", "--format", "json", "--server-name", "acme-crm", "--fail-on", "never", str(path)])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def _key(finding: dict[str, Any]) -> tuple[Any, ...]:
    return (
        finding["code"],
        finding["pointer"],
        finding["method"],
        finding["direction"],
        finding["jsonrpc_id"],
        finding["fingerprint"],
    )


def _har_message(har: dict[str, Any], entry: int, event: int | None, direction: str) -> Any:
    """The message a HAR location names: request body, JSON response, or SSE event."""
    item = har["log"]["entries"][entry]
    if direction == "client_to_server":
        return json.loads(item["request"]["postData"]["text"])
    content = item["response"]["content"]
    text = content["text"]
    if content.get("encoding") == "base64":
        text = base64.b64decode(text).decode()
    if event is None:
        return json.loads(text)
    return json.loads(sse_events(text)[event])


def test_the_generated_files_are_current() -> None:
    """scripts/make_example_traffic.py --check: all three formats match the definition."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_example_traffic.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("name", SCENARIOS)
def test_all_three_readers_agree(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Same findings (rule, pointer, method, direction, id, fingerprint) at the same message."""
    envelope = _report(capsys, TRAFFIC / f"{name}.jsonl")
    raw = _report(capsys, TRAFFIC / "raw" / f"{name}.jsonl")
    har_path = TRAFFIC / "har" / f"{name}.har"
    har = _report(capsys, har_path)
    assert sorted(map(_key, envelope["findings"])) == sorted(map(_key, raw["findings"]))
    assert sorted(map(_key, envelope["findings"])) == sorted(map(_key, har["findings"]))
    # raw lines are envelope lines, one for one
    assert sorted((f["line"], f["code"]) for f in envelope["findings"]) == sorted(
        (f["line"], f["code"]) for f in raw["findings"]
    )
    # a HAR finding's entry and event name the very message the envelope line holds
    lines = (TRAFFIC / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    document = json.loads(har_path.read_text(encoding="utf-8"))
    by_key = {_key(f): f for f in envelope["findings"]}
    for finding in har["findings"]:
        assert finding["line"] is None
        located = _har_message(
            document, finding["entry"], finding.get("event"), finding["direction"]
        )
        expected = json.loads(lines[by_key[_key(finding)]["line"] - 1])["message"]
        assert expected == located
    assert envelope["errors"] == []
    assert har["errors"] == []
    assert envelope["summary"]["messages"] == har["summary"]["messages"]
