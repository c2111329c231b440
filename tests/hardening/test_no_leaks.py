"""Planted secrets and PII never leave the stdio proxy except on the wire they came on.

tests/audit/test_secrets_never_logged.py covers the engine, the linter's text/JSON/SARIF
reports and the audit records; this drives the same planted values through a real
``elicitguard proxy stdio`` (requests, elicitation answers, a broken frame) with an audit
file and a recording, and checks the audit log, the recording and the proxy's stderr
(error messages and any traceback).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.audit.test_secrets_never_logged import PLANTED
from tests.integrations.support import ELICITGUARD, read_line

SERVER = str(Path(__file__).parent / "fault_server.py")


@pytest.mark.integration
def test_planted_values_reach_no_log_recording_or_error(tmp_path: Path) -> None:
    """Only keyed fingerprints of planted values may appear in what the proxy writes."""
    audit = tmp_path / "audit.jsonl"
    record = tmp_path / "record.jsonl"
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "name: leaks\nextends: [builtin:strict]\n"
        f"audit: {{sink: file, file: {json.dumps(str(audit))}}}\n",
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "stdio",
            "--policy",
            str(policy),
            "--record",
            str(record),
            "--",
            sys.executable,
            SERVER,
            "echo",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "leaks", "version": "1"},
        },
    }
    lines = [json.dumps(init).encode()]
    for n, secret in enumerate(PLANTED, start=1):
        call = {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {
                "name": "t",
                "arguments": {"password": secret, "note": secret},
                "elicit": True,
            },
        }
        lines.append(json.dumps(call).encode())
    lines.append(
        b'{"jsonrpc":"2.0","id":99,"method":"x","params":"' + PLANTED[0].encode()
    )  # broken
    for line in lines:
        process.stdin.write(line + b"\n")
    process.stdin.flush()
    read_line(process.stdout, 60)  # initialize answer
    for n, secret in enumerate(PLANTED, start=1):
        while True:
            message = json.loads(read_line(process.stdout, 60))
            if message.get("method") == "elicitation/create":
                answer = {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"action": "accept", "content": {"name": secret}},
                }
                process.stdin.write(json.dumps(answer).encode() + b"\n")
                process.stdin.flush()
                continue
            if message.get("id") == n:
                break
    process.stdin.close()
    stderr = process.stderr.read() if process.stderr else b""
    process.wait(30)
    process.stdout.close()
    if process.stderr:
        process.stderr.close()
    outputs = {
        "audit": audit.read_bytes() if audit.exists() else b"",
        "recording": record.read_bytes() if record.exists() else b"",
        "stderr": stderr,
    }
    assert outputs["recording"], "the recording must not be empty (the test would prove nothing)"
    for name, data in outputs.items():
        text = data.decode("utf-8", "replace")
        for secret in PLANTED:
            assert secret not in text, f"a planted value reached the {name}"
