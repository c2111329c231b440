"""``--record``: envelope JSONL that lint reads, without credentials or values."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from elicitguard.integrations.recorder import Recorder
from elicitguard.lint.envelopes import read_envelopes
from elicitguard.protocol.envelope import Direction, Transport

ANSWER = {
    "jsonrpc": "2.0",
    "id": 4,
    "params": {"requestState": "v1.secret-state"},
    "result": {"action": "accept", "content": {"name": "Ada Lovelace", "age": 36, "ok": True}},
}
HEADERS = {
    "Authorization": "Bearer tok_abc",
    "Cookie": "sid=1",
    "Mcp-Session-Id": "session-secret",
    "Mcp-Param-Region": "eu",
}


def test_redacted_recording_keeps_shape_and_drops_credentials(tmp_path: Path) -> None:
    """Values are blanked with their JSON types kept; credential headers never appear."""
    path = tmp_path / "rec.jsonl"
    path.write_text("")
    path.chmod(0o644)
    recorder = Recorder(path, transport=Transport.HTTP, server="crm")
    recorder.record(ANSWER, Direction.CLIENT_TO_SERVER, session="session-secret", headers=HEADERS)
    recorder.record(ANSWER, Direction.CLIENT_TO_SERVER, session="session-secret", headers=HEADERS)
    recorder.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    for secret in ("tok_abc", "sid=1", "session-secret", "Ada", "secret-state"):
        assert secret not in text
    first, second = (json.loads(line) for line in text.splitlines())
    assert first["message"]["result"] == {
        "action": "accept",
        "content": {"name": "[REDACTED]", "age": 0, "ok": False},
    }
    assert first["headers"] == {
        "mcp-session-id": first["session"],
        "mcp-param-region": "eu",
    }
    assert first["session"] == second["session"]
    with path.open("rb") as stream:
        [(_, envelope), _] = list(read_envelopes(stream, max_bytes=1 << 20, max_depth=64))
    assert envelope.server == "crm"  # type: ignore[union-attr]


def test_raw_recording_keeps_values_but_not_credentials(tmp_path: Path) -> None:
    """--record-raw keeps values; authorization and cookies are still left out."""
    path = tmp_path / "raw.jsonl"
    recorder = Recorder(path, raw=True)
    recorder.record(ANSWER, Direction.CLIENT_TO_SERVER, headers=HEADERS)
    recorder.close()
    line = json.loads(path.read_text())
    assert line["message"] == ANSWER
    assert "authorization" not in line["headers"]
    assert "cookie" not in line["headers"]
    assert "session-secret" not in path.read_text()
