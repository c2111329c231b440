"""EG501 when no identity is configured at all: said at startup and once per session.

Without an ``identity:`` section nothing could ever be verified, so the same "no verified
user" finding on every elicitation would only bury the findings that matter. The default
preset reports the first elicitation of each session; ``strict``, which blocks on EG501,
still blocks (and names EG501 on) every one; a policy with identity configured reports it
on every unverified request.
"""

from __future__ import annotations

import io
import json
from typing import Any

from elicitguard import Direction, Engine, Side, Transport, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.commands.proxy import unverified_user_notice
from elicitguard.integrations.actions import Relay, Reply

S2C = Direction.SERVER_TO_CLIENT
C2S = Direction.CLIENT_TO_SERVER


def relay_for(policy: str, extra: list[dict[str, Any]] | None = None) -> tuple[Relay, io.StringIO]:
    stream = io.StringIO()
    engine = Engine(
        load_policy(policy, environ={}, extra_layers=extra),
        audit=AuditSink(stream),
        keys=KeyRing.random(),
    )
    return Relay(engine, side=Side.PROXY, transport=Transport.HTTP, server="demo"), stream


def handshake(relay: Relay, session: str) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    relay.inspect(json.dumps(init).encode(), C2S, session=session)
    ok = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    relay.inspect(json.dumps(ok).encode(), S2C, session=session)


def ask(relay: Relay, session: str, jsonrpc_id: int) -> Any:
    form = {
        "jsonrpc": "2.0",
        "id": jsonrpc_id,
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Which colour?",
            "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string"}}},
        },
    }
    return relay.inspect(json.dumps(form).encode(), S2C, session=session)


def codes(audit: io.StringIO) -> list[list[str]]:
    records = [json.loads(line) for line in audit.getvalue().splitlines()]
    return [
        sorted(f["code"] for f in r["findings"])
        for r in records
        if r.get("event") == "elicitguard.decision" and r.get("method") == "elicitation/create"
    ]


def test_default_reports_the_first_elicitation_of_each_session() -> None:
    relay, audit = relay_for("builtin:default")
    for session in ("a", "b"):
        handshake(relay, session)
        for n in range(3):
            ask(relay, session, 10 + n)
    assert codes(audit) == [["EG501"], [], [], ["EG501"], [], []]


def test_strict_still_blocks_every_elicitation_on_eg501() -> None:
    relay, audit = relay_for("builtin:strict")
    handshake(relay, "a")
    outcomes = [ask(relay, "a", 10 + n) for n in range(3)]
    assert all(isinstance(o, Reply) for o in outcomes)
    assert all("EG501" in o.message["error"]["data"]["elicitguard"]["codes"] for o in outcomes)
    assert codes(audit) == [["EG501"]] * 3


def test_with_identity_configured_every_unverified_request_is_reported() -> None:
    extra = [{"identity": {"audience": "https://mcp.example.com/mcp"}}]
    relay, audit = relay_for("builtin:default", extra)
    handshake(relay, "a")
    for n in range(2):
        ask(relay, "a", 10 + n)
    assert codes(audit) == [["EG501"], ["EG501"]]


def test_the_http_proxy_says_it_at_startup() -> None:
    relay, _ = relay_for("builtin:default")
    notice = unverified_user_notice(relay.engine)
    assert notice is not None
    assert "EG501" in notice
    configured, _ = relay_for(
        "builtin:default", [{"identity": {"audience": "https://mcp.example.com/mcp"}}]
    )
    assert unverified_user_notice(configured.engine) is None
    off, _ = relay_for("builtin:default", [{"rules": {"EG501": {"action": "off"}}}])
    assert unverified_user_notice(off.engine) is None
