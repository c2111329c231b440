"""Raw JSON-RPC JSONL: the direction-inference algorithm, and lines it refuses to guess."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from elicitguard.cli import main
from elicitguard.lint.capture import Skipped
from elicitguard.lint.envelopes import LineError
from elicitguard.lint.jsonrpc_reader import read_jsonrpc
from elicitguard.lint.runner import detect_format
from elicitguard.protocol.envelope import Envelope

C2S, S2C = "client_to_server", "server_to_client"


def directions(*messages: dict[str, Any] | str) -> list[str]:
    """The direction the reader gives each line, or why it skipped it."""
    text = "\n".join(m if isinstance(m, str) else json.dumps(m) for m in messages) + "\n"
    out: list[str] = []
    for _, entry in read_jsonrpc(io.BytesIO(text.encode()), max_bytes=1 << 20, max_depth=64):
        if isinstance(entry, Envelope):
            out.append(entry.direction.value)
        elif isinstance(entry, Skipped):
            out.append("skip:" + entry.message if entry.report else "silent")
        else:
            assert isinstance(entry, LineError)
            out.append("error:" + entry.error.kind)
    return out


def req(id_: Any, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def res(id_: Any, **result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


ELICIT = {
    "mode": "form",
    "message": "Name?",
    "requestedSchema": {"type": "object", "properties": {}},
}


def test_requests_by_method() -> None:
    """elicitation, sampling and roots go server to client; the rest client to server."""
    assert directions(
        req(1, "tools/call", name="t"),
        req(1, "elicitation/create", **ELICIT),
        req(2, "sampling/createMessage", messages=[]),
        req(3, "roots/list"),
        req(2, "resources/read", uri="file:///x"),
    ) == [C2S, S2C, S2C, S2C, C2S]


def test_responses_go_opposite_to_their_request() -> None:
    """Each direction has its own id space; the only open request decides."""
    assert directions(
        req(7, "tools/call", name="t"),
        req(8, "elicitation/create", **ELICIT),
        res(8, action="accept", content={}),
        res(7, content=[]),
    ) == [C2S, S2C, C2S, S2C]


def test_same_id_in_both_directions_is_decided_by_the_result_shape() -> None:
    """SDKs on both sides count from 1: an ElicitResult answers the server, content the client."""
    assert directions(
        req(1, "tools/call", name="t"),
        req(1, "elicitation/create", **ELICIT),
        res(1, action="accept", content={"name": "Ada"}),
        res(1, content=[], isError=False),
    ) == [C2S, S2C, C2S, S2C]


def test_an_error_for_an_id_open_both_ways_is_ambiguous_and_skipped() -> None:
    """An error response fits both requests: reported, skipped, never guessed."""
    out = directions(
        req(1, "tools/call", name="t"),
        req(1, "elicitation/create", **ELICIT),
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no"}},
    )
    assert out[:2] == [C2S, S2C]
    assert out[2].startswith("skip:direction cannot be inferred")


def test_a_response_to_nothing_is_ambiguous() -> None:
    """A response whose id no open request has cannot be placed."""
    out = directions(res(42, content=[]))
    assert out[0].startswith("skip:")
    assert "no request seen" in out[0]


def test_task_requests_go_to_the_side_holding_the_task() -> None:
    """tasks/result goes to whoever returned the CreateTaskResult; unknown tasks follow the default."""
    task = {"taskId": "t-1", "status": "working", "createdAt": "2026-01-01T00:00:00Z", "ttl": 1}
    server_task = {
        "taskId": "t-2",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "ttl": 1,
    }
    assert directions(
        req(1, "elicitation/create", **ELICIT, task={"ttl": 1}),
        res(1, task=task),
        req(2, "tasks/result", taskId="t-1"),
        req(3, "tools/call", name="t", task={"ttl": 1}),
        res(3, task=server_task),
        req(4, "tasks/result", taskId="t-2"),
        req(5, "tasks/get", taskId="unknown"),
        req(6, "tasks/result", taskId="unknown"),
    ) == [S2C, C2S, S2C, C2S, S2C, C2S, C2S, S2C]


def test_ping_and_unplaceable_notifications_are_skipped_silently() -> None:
    """No rule reads them, so skipping cannot hide a finding; the ping's answer goes too."""
    assert directions(
        req(9, "ping"),
        res(9),
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": 1},
        },
    ) == ["silent", "silent", "silent"]


def test_progress_and_cancelled_follow_their_request() -> None:
    """Progress goes opposite to the request holding the token; cancel goes with its request."""
    assert directions(
        req(1, "tools/call", name="t", _meta={"progressToken": "p1"}),
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p1", "progress": 1},
        },
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": {"elicitationId": "e"},
        },
    ) == [C2S, S2C, C2S, S2C]


def test_initialize_starts_a_new_session() -> None:
    """Open requests of the previous run are dropped; sessions are numbered."""
    text = "\n".join(
        json.dumps(m)
        for m in (
            req(0, "initialize", protocolVersion="2025-11-25", capabilities={}),
            res(0, protocolVersion="2025-11-25", capabilities={}),
            req(1, "elicitation/create", **ELICIT),
            req(0, "initialize", protocolVersion="2025-11-25", capabilities={}),
            res(1, action="decline"),
        )
    )
    entries = list(read_jsonrpc(io.BytesIO(text.encode()), max_bytes=1 << 20, max_depth=64))
    sessions = [e.session for _, e in entries if isinstance(e, Envelope)]
    assert sessions == ["session-1", "session-1", "session-1", "session-2"]
    assert isinstance(entries[-1][1], Skipped)


def test_bad_lines_are_frame_errors() -> None:
    """Not JSON, a batch: frame errors (EG904 in the report), reading goes on."""
    assert directions("{oops", "[1, 2]", req(1, "tools/list")) == [
        "error:not_json",
        "error:batch",
        C2S,
    ]


def test_cli_reports_skips_in_errors_without_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--input-format jsonrpc: ambiguous lines are errors[] entries with their line."""
    path = tmp_path / "log.jsonl"
    path.write_text(
        json.dumps(res("tok-SECRET", content=[])) + "\n" + json.dumps(req(1, "tools/list")) + "\n"
    )
    code = main(["lint", "--format", "json", "--input-format", "jsonrpc", str(path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [e["line"] for e in report["errors"]] == [1]
    assert "SECRET" not in json.dumps(report)
    assert report["summary"]["messages"] == 2


def test_auto_detection_sniffs_the_first_object_line(tmp_path: Path) -> None:
    """.har by extension; an object with direction and message is an envelope; else raw."""
    envelope = tmp_path / "a.jsonl"
    envelope.write_text('garbage\n{"direction": "client_to_server", "message": {}}\n')
    raw = tmp_path / "b.jsonl"
    raw.write_text('\n{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n')
    har = tmp_path / "c.har"
    har.write_text("{}")
    empty = tmp_path / "d.jsonl"
    empty.write_text("")
    assert tuple(detect_format(p, 1 << 20) for p in (envelope, raw, har, empty)) == (
        "envelope",
        "jsonrpc",
        "har",
        "envelope",
    )
