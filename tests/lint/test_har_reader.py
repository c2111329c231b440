"""HAR 1.2 captures of Streamable HTTP: bodies, SSE events, sessions, eras, missing bodies."""

from __future__ import annotations

import base64
import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from elicitguard.cli import main
from elicitguard.lint.capture import Location, Skipped
from elicitguard.lint.envelopes import LineError
from elicitguard.lint.har_reader import read_har, sse_events
from elicitguard.protocol.envelope import Envelope

URL = "https://mcp.example.com/mcp?token=QUERYSECRET"
SESSION = "SESSIONSECRET-0123456789"


def entry(
    body: dict[str, Any] | None,
    *,
    response: str | None = None,
    mime: str = "application/json",
    status: int = 200,
    method: str = "POST",
    headers: dict[str, str] | None = None,
    response_headers: dict[str, str] | None = None,
    encoding: str | None = None,
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "method": method,
        "url": URL,
        "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()],
    }
    if body is not None:
        request["postData"] = {"mimeType": "application/json", "text": json.dumps(body)}
    content: dict[str, Any] = {"size": len(response or ""), "mimeType": mime}
    if response is not None:
        content["text"] = response
    if encoding is not None:
        content["encoding"] = encoding
    return {
        "startedDateTime": "2026-11-29T10:00:00.000Z",
        "request": request,
        "response": {
            "status": status,
            "headers": [{"name": k, "value": v} for k, v in (response_headers or {}).items()],
            "content": content,
        },
    }


def har(*entries: dict[str, Any]) -> bytes:
    return json.dumps(
        {"log": {"version": "1.2", "creator": {"name": "t"}, "entries": list(entries)}}
    ).encode()


def read(data: bytes) -> list[tuple[Location, Envelope | LineError | Skipped]]:
    return list(read_har(io.BytesIO(data), max_bytes=1 << 20, max_depth=64))


def sse(*messages: dict[str, Any]) -> str:
    return ": comment\n\nid: 0\ndata:\n\n" + "".join(
        f"event: message\ndata: {json.dumps(m)}\n\n" for m in messages
    )


def req(id_: Any, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def res(id_: Any, **result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


ELICIT = req(
    1,
    "elicitation/create",
    mode="form",
    message="Name?",
    requestedSchema={"type": "object", "properties": {"n": {"type": "string"}}},
)


def test_sse_events_follow_the_event_stream_rules() -> None:
    """data lines join with newlines; comments, other event types and empty data are no events."""
    text = (
        'data: {"a":\r\ndata: 1}\r\n\r\n: c\nevent: ping\ndata: x\n\nid: 7\ndata:\n\ndata: {"b": 2}'
    )
    assert sse_events(text) == ['{"a":\n1}', '{"b": 2}']


def test_request_json_and_sse_bodies_with_entry_and_event() -> None:
    """Requests are client to server; each SSE event is its own server-to-client message."""
    items = read(
        har(
            entry(req(1, "tools/list"), response=json.dumps(res(1, tools=[]))),
            entry(
                req(2, "tools/call", name="t"),
                response=sse(
                    {"jsonrpc": "2.0", "method": "notifications/message", "params": {}},
                    res(2, content=[]),
                ),
                mime="text/event-stream",
            ),
        )
    )
    seen = [(w.entry, w.event, e.direction.value) for w, e in items if isinstance(e, Envelope)]
    assert seen == [
        (0, None, "client_to_server"),
        (0, None, "server_to_client"),
        (1, None, "client_to_server"),
        (1, 0, "server_to_client"),
        (1, 1, "server_to_client"),
    ]


def test_a_stream_waits_for_the_clients_answer() -> None:
    """Events after a server request are read after the later entry that answers it."""
    items = read(
        har(
            entry(
                req(1, "tools/call", name="t"),
                response=sse(ELICIT, res(1, content=[])),
                mime="text/event-stream",
            ),
            entry(res(1, action="accept", content={"n": "x"}), response="", status=202),
        )
    )
    order = [(w.entry, w.event) for w, e in items if isinstance(e, Envelope)]
    assert order == [(0, None), (0, 0), (1, None), (0, 1)]


def test_sessions_are_numbered_and_ids_never_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Mcp-Session-Id keys state; reports carry session-N and never the id or the URL query."""
    init = req(
        0, "initialize", protocolVersion="2025-11-25", capabilities={"elicitation": {"form": {}}}
    )
    bad = req(
        1,
        "elicitation/create",
        mode="url",
        message="Go",
        url="https://auth.example.com/x",
        elicitationId="e",
    )
    path = tmp_path / "c.har"
    path.write_bytes(
        har(
            entry(
                init,
                response=json.dumps(res(0, protocolVersion="2025-11-25", capabilities={})),
                response_headers={"Mcp-Session-Id": SESSION},
            ),
            entry(
                req(1, "tools/call", name="t"),
                response=sse(bad),
                mime="text/event-stream",
                headers={"Mcp-Session-Id": SESSION, "MCP-Protocol-Version": "2025-11-25"},
            ),
        )
    )
    main(["lint", "--format", "json", str(path)])
    report = json.loads(capsys.readouterr().out)
    eg102 = [f for f in report["findings"] if f["code"] == "EG102"]
    assert [(f["session"], f["entry"], f["event"]) for f in eg102] == [("session-1", 1, 0)]
    text = json.dumps(report)
    assert SESSION not in text
    assert "QUERYSECRET" not in text


def test_protocol_version_header_gives_the_era() -> None:
    """MCP-Protocol-Version sets each message's era; the URL host names the server."""
    items = read(
        har(
            entry(
                req(3, "tools/list"),
                response=json.dumps(res(3, tools=[])),
                headers={"MCP-Protocol-Version": "2026-07-28"},
            )
        )
    )
    envelope = items[0][1]
    assert isinstance(envelope, Envelope)
    assert (envelope.protocol_version, envelope.server, envelope.session) == (
        "2026-07-28",
        "mcp.example.com",
        "endpoint-1",
    )


@pytest.mark.parametrize(
    ("broken", "why"),
    [
        # the exporter left out the request body
        (
            dict(
                entry(req(1, "tools/call", name="t"), response="{}"),
                request={
                    "method": "POST",
                    "url": URL,
                    "headers": [{"name": "Mcp-Session-Id", "value": "s"}],
                },
            ),
            "request body was not captured",
        ),
        # the response body of a request was not saved
        (entry(req(1, "tools/call", name="t"), response=None), "was not captured"),
        # the request was aborted: status 0 and no body
        (entry(req(1, "tools/call", name="t"), response=None, status=0), "aborted"),
        # an HTML error page where JSON-RPC was expected
        (
            entry(
                req(1, "tools/call", name="t"),
                response="<html>oops</html>",
                mime="text/html",
                status=502,
            ),
            "neither JSON nor an SSE",
        ),
        # a body marked base64 that is not
        (
            entry(req(1, "tools/call", name="t"), response="***", encoding="base64"),
            "does not decode",
        ),
    ],
)
def test_missing_or_unusable_bodies_are_errors(broken: dict[str, Any], why: str) -> None:
    """An MCP entry whose body is missing is reported, never passed over silently."""
    skipped = [e for _, e in read(har(broken)) if isinstance(e, Skipped)]
    assert len(skipped) == 1
    assert why in skipped[0].message


def test_error_statuses_without_a_body_are_not_missing_bodies() -> None:
    """A 401 asking for authorization or a 405 refusing the GET stream has no body to miss."""
    unauthorized = entry(req(0, "initialize", protocolVersion="2025-11-25"), status=401)
    refused = entry(None, method="GET", status=405, headers={"Mcp-Session-Id": "s"})
    skipped = [e for _, e in read(har(unauthorized, refused)) if isinstance(e, Skipped)]
    assert skipped == []


def test_non_mcp_entries_are_ignored_and_202_needs_no_body() -> None:
    """Pages, scripts and images are not MCP; an accepted notification has no body."""
    page = {
        "request": {"method": "GET", "url": "https://example.com/app.js", "headers": []},
        "response": {"status": 200, "content": {"mimeType": "text/javascript", "text": "x()"}},
    }
    note = entry(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}, response=None, status=202
    )
    items = read(har(page, note))
    assert len(items) == 1
    assert isinstance(items[0][1], Envelope)


def test_base64_bodies_and_bad_frames() -> None:
    """base64 response content decodes; a body that is not JSON is a frame error."""
    body = base64.b64encode(json.dumps(res(1, tools=[])).encode()).decode()
    items = read(
        har(
            entry(req(1, "tools/list"), response=body, encoding="base64"),
            entry(req(2, "x"), response='{"jsonrpc": nope', mime="application/json"),
        )
    )
    kinds = [type(e).__name__ for _, e in items]
    assert kinds == ["Envelope", "Envelope", "Envelope", "LineError"]


def test_not_a_har_is_an_error() -> None:
    """Broken JSON stops reading with an error; a document without entries is one too."""
    broken = [e for _, e in read(b'{"log": {"entries": [{"request": ') if isinstance(e, Skipped)]
    assert "not valid JSON" in broken[0].message
    empty = [e for _, e in read(b'{"hello": 1}') if isinstance(e, Skipped)]
    assert "no log.entries" in empty[0].message


def test_memory_stays_bounded_by_one_entry() -> None:
    """A HAR with thousands of entries is streamed: peak memory far below the document size."""
    one = entry(
        req(1, "tools/call", name="t", arguments={"pad": "x" * 2000}),
        response=json.dumps(res(1, content=[])),
    )
    data = har(*([one] * 3000))
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_har(io.BytesIO(data), max_bytes=1 << 20, max_depth=64))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 6000
    assert peak < len(data) / 4, (peak, len(data))
