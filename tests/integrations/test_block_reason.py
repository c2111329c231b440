"""What the person behind a blocked request reads: one line naming the rule that blocked.

The JSON-RPC error of a block says which rule blocked and why, in words; the codes of
findings that only warned beside it stay in the audit record, not in the error.
"""

from __future__ import annotations

import io
import json
from typing import Any

from elicitguard import Direction, Engine, Side, Transport, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.integrations.actions import Relay, Reply, block_reason

S2C = Direction.SERVER_TO_CLIENT
C2S = Direction.CLIENT_TO_SERVER
SECRET_FORM = {
    "jsonrpc": "2.0",
    "id": 9,
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Sign in to continue",
        "requestedSchema": {
            "type": "object",
            "properties": {"password": {"type": "string", "title": "Password"}},
        },
    },
}


def http_relay() -> tuple[Relay, io.StringIO]:
    stream = io.StringIO()
    engine = Engine(
        load_policy("builtin:default", environ={}), audit=AuditSink(stream), keys=KeyRing.random()
    )
    return Relay(engine, side=Side.PROXY, transport=Transport.HTTP, server="demo"), stream


def handshake(relay: Relay) -> None:
    init: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    relay.inspect(json.dumps(init).encode(), C2S, session="s")
    ok = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    relay.inspect(json.dumps(ok).encode(), S2C, session="s")


def test_the_error_names_the_blocking_rule_and_why_in_one_line() -> None:
    relay, audit = http_relay()
    handshake(relay)
    outcome = relay.inspect(json.dumps(SECRET_FORM).encode(), S2C, session="s")
    assert isinstance(outcome, Reply)
    error = outcome.message["error"]
    message = error["message"]
    assert message.startswith("Blocked by elicitguard policy: EG201 secret-field-in-form: ")
    assert "password" in message.lower()
    assert "\n" not in message
    # EG501 (no verified user over HTTP) warned beside the block: it is not what blocked.
    assert "EG501" not in message
    assert error["data"]["elicitguard"]["codes"] == ["EG201"]
    record = json.loads(audit.getvalue().splitlines()[-1])
    assert {"EG201", "EG501"} <= {f["code"] for f in record["findings"]}
    assert record["decision_id"] == error["data"]["elicitguard"]["decision_id"]


def test_several_blocking_rules_are_named_by_code_after_the_first() -> None:
    relay, _ = http_relay()
    handshake(relay)
    form: dict[str, Any] = json.loads(json.dumps(SECRET_FORM))
    form["params"]["message"] = "Enter your password and the code we texted you"
    form["params"]["requestedSchema"]["properties"]["otp"] = {
        "type": "string",
        "title": "One-time code",
    }
    outcome = relay.inspect(json.dumps(form).encode(), S2C, session="s")
    assert isinstance(outcome, Reply)
    assert outcome.decision is not None
    line = block_reason(outcome.decision)
    assert line == outcome.message["error"]["message"]
    assert line.count("Blocked by elicitguard policy") == 1
    codes = outcome.message["error"]["data"]["elicitguard"]["codes"]
    assert codes[0] in line
    for code in codes[1:]:
        assert code in line.split("(also ", 1)[1]
