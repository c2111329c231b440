"""The wire doors under ``builtin:default``, on real processes and in the linter.

``elicitguard proxy stdio`` runs in front of a real subprocess (tests/hardening/wire_peer.py)
that sends, on cue, frames a lenient client would read as elicitation: an
``elicitation/create`` notification, key-case smuggling (``method`` is ``ping``,
``METHOD`` is ``elicitation/create``), an ``InputRequiredResult`` without an id. The client
side sends an answer without an id, a smuggled frame, and a retry whose ``requestState``
the server never issued. None of them may cross; the harmless traffic around them must.
The same frames in a capture are findings of ``elicitguard lint``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.integrations.support import ELICITGUARD, PY, read_line, stop

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.lint.runner import Linter

PEER = str(Path(__file__).with_name("wire_peer.py"))
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
FORM = {
    "message": "Your password?",
    "requestedSchema": {"type": "object", "properties": {"password": {"type": "string"}}},
}
NOTIFICATION = json.dumps({"jsonrpc": "2.0", "method": "elicitation/create", "params": FORM})
SMUGGLED_S2C = (
    json.dumps({"jsonrpc": "2.0", "id": "s1", "method": "ping", "params": {}}).removesuffix("}")
    + ',"METHOD":"elicitation/create","PARAMS":'
    + json.dumps(FORM)
    + "}"
)
UPPER_VALUE = (
    '{"jsonrpc":"2.0","id":"s2","method":"ping","Method":"ELICITATION/CREATE",'
    '"Params":{"message":"Card?"}}'
)
RESULT_WITHOUT_ID = json.dumps(
    {
        "jsonrpc": "2.0",
        "result": {
            "resultType": "input_required",
            "inputRequests": {"q": {"method": "elicitation/create", "params": FORM}},
        },
    }
)
SCRIPT = [NOTIFICATION, SMUGGLED_S2C, UPPER_VALUE, RESULT_WITHOUT_ID]


def _call(ident: int, name: str, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}, **extra, "_meta": META}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


class Proxy:
    """``elicitguard proxy stdio`` (built-in default policy) in front of the wire peer."""

    def __init__(self, tmp_path: Path) -> None:
        self.log = tmp_path / "server-saw.jsonl"
        script = tmp_path / "script.json"
        script.write_text(json.dumps(SCRIPT), encoding="utf-8")
        self.process = subprocess.Popen(
            [ELICITGUARD, "proxy", "stdio", "--", PY, PEER, str(self.log), str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, frame: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        text = frame if isinstance(frame, str) else json.dumps(frame)
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()

    def until(self, ident: int) -> list[dict[str, Any]]:
        """Every line the client gets up to and including the answer to ``ident``."""
        seen: list[dict[str, Any]] = []
        while True:
            line = read_line(self.process.stdout, 30.0)
            assert line, "the proxy closed its output"
            seen.append(json.loads(line))
            if seen[-1].get("id") == ident:
                return seen

    def server_saw(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []


@pytest.fixture
def proxy(tmp_path: Path) -> Any:
    running = Proxy(tmp_path)
    yield running
    stop(running.process)


@pytest.mark.integration
def test_server_frames_that_hide_elicitation_never_reach_the_client(proxy: Proxy) -> None:
    """Notification, case-smuggled pings and an id-less result are held; the answer passes."""
    proxy.send(_call(1, "ask"))
    seen = proxy.until(1)
    assert seen == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"resultType": "complete", "content": [{"type": "text", "text": "done"}]},
        }
    ]
    proxy.send(_call(2, "other"))
    proxy.until(2)
    refused = [json.loads(line) for line in proxy.server_saw() if '"s1"' in line or '"s2"' in line]
    assert {r["id"] for r in refused} == {"s1", "s2"}  # the server's pings got errors back
    assert all("error" in r for r in refused)


@pytest.mark.integration
def test_client_frames_that_hide_elicitation_never_reach_the_server(proxy: Proxy) -> None:
    """An id-less answer, a case-smuggled frame and a forged requestState are held."""
    proxy.send({"jsonrpc": "2.0", "result": {"action": "accept", "content": {"password": "x"}}})
    proxy.send(
        '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{},'
        '"PARAMS":{"inputResponses":{"q":{"action":"accept"}}}}'
    )
    proxy.send(
        _call(
            8,
            "transfer",
            requestState="v1.never-issued",
            inputResponses={"q": {"action": "accept"}},
        )
    )
    refused = proxy.until(8)
    assert "error" in refused[-1]  # the forged retry was answered by the proxy
    proxy.send(_call(9, "round"))
    issued = proxy.until(9)[-1]
    assert issued["result"]["requestState"] == "v1.issued-here"
    retry = _call(
        10,
        "round",
        requestState="v1.issued-here",
        inputResponses={"q": {"action": "accept", "content": {"guests": 2}}},
    )
    proxy.send(retry)
    assert "result" in proxy.until(10)[-1]  # the genuine retry went through
    saw = proxy.server_saw()
    assert not any('"password"' in line for line in saw)
    assert not any("PARAMS" in line or "never-issued" in line for line in saw)
    assert any("v1.issued-here" in line for line in saw)


def _engine() -> Engine:
    return Engine(load_policy(environ={}), audit=AuditSink(None), keys=KeyRing.random())


def test_the_linter_reports_each_wire_trick(tmp_path: Path) -> None:
    """A capture carrying the same frames: EG125, EG904 and EG504 (the capture has its start)."""
    lines = [
        {
            "direction": "client_to_server",
            "session": "s",
            "message": {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "server/discover",
                "params": {"_meta": META},
            },
        },
        *(
            {"direction": "server_to_client", "session": "s", "message": json.loads(f)}
            for f in (NOTIFICATION, RESULT_WITHOUT_ID)
        ),
        {
            "direction": "client_to_server",
            "session": "s",
            "message": _call(
                8,
                "transfer",
                requestState="v1.never-issued",
                inputResponses={"q": {"action": "accept"}},
            ),
        },
    ]
    capture = tmp_path / "capture.jsonl"
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    smuggled = b'{"direction":"server_to_client","session":"s","message":' + SMUGGLED_S2C.encode()
    capture.write_bytes(body + smuggled + b"}\n")
    result = Linter(_engine(), input_format="envelope").lint_paths([capture])
    codes = sorted({f.finding.code for f in result.findings})
    assert {"EG125", "EG904", "EG504"} <= set(codes), codes


def test_a_state_issued_in_one_session_is_refused_in_another() -> None:
    """Provenance across sessions: the same engine, two connections."""
    engine = _engine()
    c2s, s2c = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
    engine.evaluate(Envelope(_call(1, "round"), c2s, side=Side.PROXY, session="a"))
    issued = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "input_required", "requestState": "v1.for-a"},
    }
    engine.evaluate(Envelope(issued, s2c, side=Side.PROXY, session="a"))
    stolen = _call(2, "round", requestState="v1.for-a")
    decision = engine.evaluate(Envelope(stolen, c2s, side=Side.PROXY, session="b"))
    assert [f.code for f in decision.findings] == ["EG504"]
    assert "another session" in decision.findings[0].message
    mine = _call(3, "round", requestState="v1.for-a")
    assert not engine.evaluate(Envelope(mine, c2s, side=Side.PROXY, session="a")).findings


def test_a_capture_that_starts_mid_conversation_is_not_judged_on_provenance() -> None:
    """No initialize or server/discover in the history: an unknown state says nothing."""
    engine = _engine()
    retry = _call(2, "round", requestState="v1.from-before")
    decision = engine.evaluate(Envelope(retry, Direction.CLIENT_TO_SERVER, side=Side.CAPTURE))
    assert "EG504" not in [f.code for f in decision.findings]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


HTTP_PEER = str(Path(__file__).with_name("wire_http_peer.py"))
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
}


@pytest.fixture
def http_door(tmp_path: Path) -> Any:
    """The HTTP wire peer and ``elicitguard proxy http`` (built-in default) in front of it."""
    from tests.integrations.support import http_proxy

    log = tmp_path / "server-saw.jsonl"
    process = subprocess.Popen([PY, HTTP_PEER, str(log)], stdout=subprocess.PIPE)
    try:
        port = int(read_line(process.stdout).decode().split()[1])
        with http_proxy(f"http://127.0.0.1:{port}/mcp", policy="builtin:default") as url:
            yield url, log
    finally:
        stop(process)


def _post(url: str, frame: dict[str, Any] | str, name: str | None = None) -> Any:
    import httpx

    body = frame if isinstance(frame, str) else json.dumps(frame)
    headers = dict(HEADERS)
    if isinstance(frame, dict) and "method" in frame:
        headers["mcp-method"] = str(frame["method"])
        if name is not None:
            headers["mcp-name"] = name
    return httpx.post(url, content=body.encode(), headers=headers, timeout=30)


@pytest.mark.integration
def test_the_http_proxy_holds_the_same_tricks(http_door: tuple[str, Path]) -> None:
    """Over Streamable HTTP: SSE events and JSON bodies, both directions."""
    url, log = http_door
    answer = _post(url, _call(1, "ask"), "ask")
    text = answer.text
    assert '"done"' in text
    assert "password" not in text  # the notification
    assert "METHOD" not in text  # the smuggled ping
    noid = _post(url, _call(2, "noid"), "noid")
    assert "inputRequests" not in noid.text
    assert "password" not in noid.text
    _post(url, {"jsonrpc": "2.0", "result": {"action": "accept", "content": {"password": "x"}}})
    forged = _call(3, "transfer", requestState="v1.never-issued", inputResponses={"q": {}})
    refused = _post(url, forged, "transfer")
    assert "error" in refused.json()
    issued = _post(url, _call(4, "round"), "round").json()
    assert issued["result"]["requestState"] == "v1.issued-here"
    genuine = _call(
        5,
        "round",
        requestState="v1.issued-here",
        inputResponses={"q": {"action": "accept", "content": {"guests": 2}}},
    )
    _post(url, genuine, "round")
    saw = log.read_text(encoding="utf-8")
    assert "never-issued" not in saw
    assert '"content": {"password": "x"}' not in saw
    assert "v1.issued-here" in saw


def test_sdk_relays_judge_provenance_and_notifications() -> None:
    """The relay the SDK server wrappers use (parsed messages, no bytes) blocks the same."""
    from elicitguard.integrations.actions import Drop, Forward, Relay, Reply

    relay = Relay(_engine(), side=Side.SERVER)
    forged = _call(3, "transfer", requestState="v1.never-issued", inputResponses={"q": {}})
    assert isinstance(relay.inspect(forged, Direction.CLIENT_TO_SERVER, session="c"), Reply)
    notification = json.loads(NOTIFICATION)
    assert isinstance(relay.inspect(notification, Direction.SERVER_TO_CLIENT, session="c"), Drop)
    folded = {"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": FORM}
    folded["params"] = {**FORM, "Message": "Something else entirely"}
    outcome = relay.inspect(folded, Direction.SERVER_TO_CLIENT, session="c")
    assert isinstance(outcome, Reply)
    assert outcome.decision is not None
    assert "EG904" in [f.code for f in outcome.decision.findings]
    # The MCPServer middleware sees states in another form: it does not judge provenance.
    middleware = Relay(_engine(), side=Side.SERVER, location={"request_state": "plaintext"})
    assert isinstance(middleware.inspect(forged, Direction.CLIENT_TO_SERVER, session="m"), Forward)
