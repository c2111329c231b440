"""The engine: fast path, decisions, failing closed, monitor mode, exceptions, audit records."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from elicitguard import Action, Direction, Engine, Envelope, Hit, Side, load_policy
from elicitguard.engine.context import CheckContext, check
from elicitguard.engine.rule_overrides import dispatch_table
from elicitguard.protocol.items import Item
from elicitguard.testing import quiet_engine

S2C = Direction.SERVER_TO_CLIENT
C2S = Direction.CLIENT_TO_SERVER
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}},
}
INIT_OK = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}
URL_REQUEST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "elicitation/create",
    "params": {
        "mode": "url",
        "message": "Connect",
        # bound to its user (an eg_bind handle), so only the planted problem fires
        "url": "https://auth.example.com/c?eg_bind=Hn4Tq8Vw2Xy6Zb0Cd3Ef5Gh7Jk9Lm1Np_Qr-St4UvWx",
        "elicitationId": "e1",
    },
}
FORM_REQUEST = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}},
    },
}


def make_engine(policy: Any = None) -> tuple[Engine, io.StringIO]:
    stream = io.StringIO()
    return quiet_engine(policy, audit=stream), stream


def handshake(engine: Engine) -> None:
    engine.evaluate(Envelope(INIT, C2S, side=Side.PROXY, session="a"))
    engine.evaluate(Envelope(INIT_OK, S2C, side=Side.PROXY, session="a"))


def records(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_fast_path_writes_no_record() -> None:
    """Ordinary traffic is allowed, counted, and never recorded."""
    engine, stream = make_engine()
    decision = engine.evaluate(Envelope({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, C2S))
    assert decision.fast_path
    assert decision.action == Action.ALLOW
    assert stream.getvalue() == ""
    assert engine.audit.counters["fast_path"] >= 1


def test_undeclared_mode_is_blocked_and_recorded() -> None:
    """A URL request to a form-only client blocks, with one audit record."""
    engine, stream = make_engine()
    handshake(engine)
    decision = engine.evaluate(
        Envelope(URL_REQUEST, S2C, side=Side.PROXY, session="a", server="crm")
    )
    assert decision.action == Action.BLOCK
    assert decision.blocked
    assert decision.codes == ("EG102",)
    [record] = records(stream)
    assert record["event"] == "elicitguard.decision"
    assert record["action"] == "block"
    assert record["server"] == "crm"
    assert record["findings"][0]["code"] == "EG102"
    assert record["elicitation"][0]["url_domain"] == "example.com"
    assert "https://auth.example.com/c" not in stream.getvalue()
    assert "Hn4Tq8Vw2Xy6" not in stream.getvalue()


def test_allowed_elicitation_is_recorded() -> None:
    """Elicitation traffic gets a record even when allowed."""
    engine, stream = make_engine()
    handshake(engine)
    decision = engine.evaluate(Envelope(FORM_REQUEST, S2C, side=Side.PROXY, session="a"))
    assert decision.action == Action.ALLOW
    assert len(records(stream)) == 1
    assert records(stream)[0]["elicitation"][0]["fields"] == [{"name": "n", "type": "string"}]


def test_monitor_mode_decides_but_does_not_enforce() -> None:
    """monitor: the action is recorded, enforced is false."""
    engine, stream = make_engine(load_policy("builtin:monitor", environ={}))
    handshake(engine)
    decision = engine.evaluate(Envelope(URL_REQUEST, S2C, side=Side.PROXY, session="a"))
    assert decision.action == Action.BLOCK
    assert not decision.enforced
    assert not decision.blocked
    assert records(stream)[0]["enforced"] is False


@check("tests.always_raises")
def _always_raises(item: Item, ctx: CheckContext, params: Mapping[str, Any]) -> Iterator[Hit]:
    raise RuntimeError("boom with a secret sk_live_should_not_leak")


def _crashing_policy(on_error: str) -> Any:
    policy = load_policy(environ={}, extra_layers=[{"on_error": on_error}])
    rule = policy.rules["EG104"]
    rule.check = _always_raises
    policy.dispatch = dispatch_table(policy.rules)
    return policy


@pytest.mark.parametrize(("on_error", "expected"), [("block", Action.BLOCK), ("warn", Action.WARN)])
def test_a_crashing_check_fails_closed_by_default(on_error: str, expected: Action) -> None:
    """A check that raises becomes EG901 with the on_error action, and is audited."""
    engine, stream = make_engine(_crashing_policy(on_error))
    handshake(engine)
    decision = engine.evaluate(Envelope(FORM_REQUEST, S2C, side=Side.PROXY, session="a"))
    assert expected == decision.action
    assert "EG901" in decision.codes
    assert "EG104 raised RuntimeError" in records(stream)[0]["errors"]
    assert "sk_live" not in stream.getvalue()


def test_exception_suppresses_for_the_named_server_only(tmp_path: Path) -> None:
    """An exception matches the operator's server name, never serverInfo."""
    policy = load_policy(
        environ={},
        extra_layers=[
            {
                "exceptions": [
                    {
                        "rules": ["EG102"],
                        "where": {"server": "legacy-*"},
                        "reason": "migration",
                        "expires": "2099-01-01",
                    }
                ]
            }
        ],
    )
    engine, _stream = make_engine(policy)
    handshake(engine)
    suppressed = engine.evaluate(
        Envelope(URL_REQUEST, S2C, side=Side.PROXY, session="a", server="legacy-crm")
    )
    assert suppressed.action == Action.ALLOW
    assert suppressed.suppressed[0].reason == "migration"
    other = engine.evaluate(
        Envelope({**URL_REQUEST, "id": 9}, S2C, side=Side.PROXY, session="a", server="crm")
    )
    assert other.action == Action.BLOCK
    assert engine.unused_exceptions() == []


def test_expired_exception_does_not_apply() -> None:
    """An expired exception is ignored and reported."""
    policy = load_policy(
        environ={},
        extra_layers=[
            {"exceptions": [{"rules": ["EG102"], "reason": "old", "expires": "2001-01-01"}]}
        ],
    )
    engine, stream = make_engine(policy)
    assert engine.expired_exceptions()
    assert "EG902" in stream.getvalue()
    handshake(engine)
    assert (
        engine.evaluate(Envelope(URL_REQUEST, S2C, side=Side.PROXY, session="a")).action
        == Action.BLOCK
    )


def test_duplicate_keys_in_an_elicitation_frame_are_refused() -> None:
    """Two readings of one frame: refuse it (EG904)."""
    engine, _ = make_engine()
    raw = b'{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"message":"a","message":"b","requestedSchema":{"type":"object","properties":{}}}}'
    decision = engine.evaluate(
        Envelope(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "elicitation/create",
                "params": {"message": "b", "requestedSchema": {"type": "object", "properties": {}}},
            },
            S2C,
            raw=raw,
        )
    )
    assert "EG904" in decision.codes
    assert decision.action == Action.BLOCK


def test_unknown_era_skips_version_specific_rules() -> None:
    """No initialize, no version: era-specific rules skip and the message is counted."""
    engine, _ = make_engine()
    decision = engine.evaluate(
        Envelope({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}, S2C)
    )
    assert "EG112" not in decision.codes
    assert engine.unknown_era_messages == 1


def test_session_state_is_bounded() -> None:
    """The memory store forgets the oldest sessions past its limit."""
    policy = load_policy(environ={}, extra_layers=[{"limits": {"state_max_sessions": 10}}])
    engine, _ = make_engine(policy)
    for i in range(50):
        engine.evaluate(Envelope(INIT, C2S, session=f"s{i}"))
    assert len(engine.store) == 10  # type: ignore[arg-type]


def test_ids_beyond_64_bits_never_crash_the_engine() -> None:
    """A huge JSON-RPC id is recorded as text, and evaluate() still returns a decision."""
    engine, stream = make_engine()
    handshake(engine)
    decision = engine.evaluate(
        Envelope({**FORM_REQUEST, "id": 10**30}, S2C, side=Side.PROXY, session="a")
    )
    assert decision.action == Action.ALLOW
    assert str(10**30) == records(stream)[0]["jsonrpc_id"]
