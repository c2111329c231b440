"""``Engine.evaluate_message`` and ``Engine.fast_path`` decide like ``evaluate``."""

from __future__ import annotations

from typing import Any

from elicitguard import Direction, Engine, Envelope, Side
from elicitguard.base.keys import KeyRing
from elicitguard.testing import quiet_engine

KEYS = KeyRing.random()

INIT: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}},
}
URL_REQUEST: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "elicitation/create",
    "params": {
        "mode": "url",
        "message": "Connect",
        "url": "http://example.com/connect?password=hunter2hunter2",
        "elicitationId": "e-1",
    },
}
CALL: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "t", "arguments": {}},
}


def _engine() -> Engine:
    return quiet_engine(keys=KEYS)


def _codes(engine: Engine, message: dict[str, Any], direction: Direction, **ctx: Any) -> list[str]:
    decision = engine.evaluate_message(message, direction, Side.PROXY, "s", **ctx)
    return [f.code for f in decision.findings]


def test_elicitation_is_judged_like_evaluate() -> None:
    """A URL request with violations gets the same findings through both entry points."""
    a, b = _engine(), _engine()
    for engine in (a, b):
        engine.evaluate(Envelope(INIT, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="s"))
    expected = [
        f.code
        for f in b.evaluate(
            Envelope(URL_REQUEST, Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="s")
        ).findings
    ]
    assert expected
    assert _codes(a, URL_REQUEST, Direction.SERVER_TO_CLIENT) == expected


def test_ordinary_traffic_takes_the_fast_path_and_is_counted() -> None:
    """A tools/call and its result are decided without rules and counted as fast path."""
    engine = _engine()
    decision = engine.evaluate_message(CALL, Direction.CLIENT_TO_SERVER, Side.PROXY, "s")
    assert decision.fast_path
    answer = {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}
    assert engine.fast_path(answer, Direction.SERVER_TO_CLIENT, Side.PROXY, "s")
    assert engine.audit.counters["fast_path"] == 2


def test_headers_send_a_message_to_the_full_path() -> None:
    """With headers (HTTP) the client-request rules get their look: EG604's query token."""
    engine = _engine()
    headers = {":path": "/mcp?access_token=abcdefghijklmnopqrstuvwxyz123456"}
    decision = engine.evaluate_message(
        CALL, Direction.CLIENT_TO_SERVER, Side.PROXY, "s", headers=headers
    )
    assert not decision.fast_path
    assert "EG604" in {f.code for f in decision.findings}
