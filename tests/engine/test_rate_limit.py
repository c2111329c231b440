"""EG123: the per-server elicitation rate limit (EL-23), with time moving on."""

from __future__ import annotations

import io
from typing import Any

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.integrations.actions import Forward, Reply, act

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}},
}


def form(jsonrpc_id: int) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"team": {"type": "string"}}}
    params = {"mode": "form", "message": "Team?", "requestedSchema": schema}
    return {"jsonrpc": "2.0", "id": jsonrpc_id, "method": "elicitation/create", "params": params}


def at(second: int) -> str:
    return f"2026-01-01T00:{second // 60:02d}:{second % 60:02d}Z"


def test_sliding_window_per_server() -> None:
    """Over the limit is blocked with the push error; a minute later the server is served again."""
    policy = load_policy(environ={}, extra_layers=[{"limits": {"elicitations_per_minute": 2}}])
    engine = Engine(policy, audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    engine.evaluate(Envelope(INIT, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="s"))

    def push(jsonrpc_id: int, second: int, server: str = "crm") -> Any:
        envelope = Envelope(
            form(jsonrpc_id),
            Direction.SERVER_TO_CLIENT,
            side=Side.PROXY,
            session="s",
            server=server,
            ts=at(second),
            protocol_version="2025-11-25",
        )
        decision = engine.evaluate(envelope)
        return act(decision, envelope, policy=policy, state=engine.store.get("s"))

    assert isinstance(push(1, 0), Forward)
    assert isinstance(push(2, 10), Forward)
    third = push(3, 20)
    assert isinstance(third, Reply)
    assert third.message["error"]["code"] == -31001
    assert third.message["error"]["data"]["elicitguard"]["codes"] == ["EG123"]
    assert isinstance(push(4, 30, server="billing"), Forward)
    assert isinstance(push(5, 59), Reply)  # refused requests do not count, but the window is full
    assert isinstance(push(6, 61), Forward)  # the first one aged out
    assert isinstance(push(7, 65), Reply)
