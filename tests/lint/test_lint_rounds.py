"""Linting a guarded exchange: entries the policy blocks are not expected in the retry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elicitguard.cli import main

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}


def _line(direction: str, message: dict[str, Any]) -> str:
    return json.dumps({"direction": direction, "message": message, "server": "crm"})


def _capture(tmp_path: Path) -> Path:
    call = {"name": "connect", "arguments": {}, "_meta": META}
    good = {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Connect", "url": "https://auth.example.com/c"},
    }
    # EG107 blocks this entry: a relative URL
    bad = {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Connect", "url": "/relative"},
    }
    lines = [
        _line(
            "client_to_server", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        ),
        _line(
            "server_to_client",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "resultType": "input_required",
                    "inputRequests": {"good": good, "bad": bad},
                    "requestState": "v1.s",
                },
            },
        ),
        _line(
            "client_to_server",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    **call,
                    "inputResponses": {"good": {"action": "accept"}},
                    "requestState": "v1.s",
                },
            },
        ),
    ]
    path = tmp_path / "guarded.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("mode", "expected"), [("enforce", set()), ("monitor", {3})])
def test_blocked_entries_are_not_unanswered(
    mode: str, expected: set[int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Enforcing, a guard removes the blocked entry, so the retry may omit it (no EG116);
    in monitor mode nothing is removed and the omission is reported."""
    policy = tmp_path / "p.yaml"
    policy.write_text(f"extends: ['builtin:default']\nmode: {mode}\n")
    main(["lint", "--format", "json", "--policy", str(policy), str(_capture(tmp_path))])
    report = json.loads(capsys.readouterr().out)
    assert {f["line"] for f in report["findings"] if f["code"] == "EG116"} == expected
    assert (2, "EG107") in {(f["line"], f["code"]) for f in report["findings"]}
