"""`elicitguard proxy stdio --seal-request-state` in front of a real stdio upstream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.identity.test_sealing_replicas import _read_line

HERE = Path(__file__).resolve().parent
ELICITGUARD = str(Path(sys.executable).with_name("elicitguard"))
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
INNER = 'upstream:{"step":2} é ✓ \\ "quoted"'


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> dict[str, Any]:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    return dict(json.loads(_read_line(process.stdout)))


def _call(rid: int, state: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "book", "arguments": {}, "_meta": META}
    if state is not None:
        params["requestState"] = state
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_stdio_proxy_seals_and_opens(tmp_path: Path) -> None:
    """The client sees a sealed token; the upstream gets its exact state back, once."""
    process = subprocess.Popen(
        [
            ELICITGUARD,
            *("proxy", "stdio", "--policy", "builtin:default", "--seal-request-state", "--"),
            sys.executable,
            str(HERE / "servers" / "state_upstream.py"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if not k.startswith("ELICITGUARD_")},
    )
    try:
        first = _send(process, _call(1))
        token = first["result"]["requestState"]
        assert token.startswith("egs1.")
        assert "step" not in token
        done = _send(process, _call(2, token))
        assert done["result"]["content"][0]["text"] == json.dumps(INNER)
        replay = _send(process, _call(3, token))
        assert replay["error"]["code"] == -32602
        forged = _send(process, _call(4, "v1.not-ours"))
        assert forged["error"]["code"] == -32602
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
