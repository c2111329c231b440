"""Dispatch plans and reused verdicts belong to the policy they were made under.

The engine filters each rule's directions and eras once per (kind, side, direction, era)
and reuses pure checks' hits per identical item; a policy replaced on a running engine
must be judged as a fresh engine on that policy judges, never from what the old one found.
"""

from __future__ import annotations

from typing import Any

from elicitguard import Direction, Envelope, Side, load_policy
from elicitguard.base.decision import Decision
from elicitguard.base.keys import KeyRing
from elicitguard.testing import quiet_engine

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}, "url": {}}},
    },
}


def _url_request(url: str, request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "Connect",
            "url": url,
            "elicitationId": f"e{request_id}",
        },
    }


def _judge(engine: Any, message: dict[str, Any]) -> Decision:
    return engine.evaluate(
        Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="s")
    )


def _codes(decision: Decision) -> tuple[tuple[str, str], ...]:
    return tuple((f.code, f.action.value) for f in decision.findings)


def test_a_replaced_policy_is_judged_afresh() -> None:
    """Same message, same engine: after the policy changes, the new policy's verdict."""
    keys = KeyRing.random()
    engine = quiet_engine(keys=keys)
    engine.evaluate(Envelope(INIT, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="s"))
    message = _url_request("https://app.example.com/connect?state=Zk3q9Lr0Vx8Wb2Nc", 1)
    before = _judge(engine, message)
    assert _judge(engine, _url_request(message["params"]["url"], 2)).findings == before.findings

    # EG302 is pure: its hits for this item were reused; a shorter limit must be seen.
    shorter = load_policy(
        environ={}, extra_layers=[{"rules": {"EG302": {"params": {"max_length": 20}}}}]
    )
    engine.policy = shorter
    fresh = quiet_engine(shorter, keys=keys)
    fresh.evaluate(Envelope(INIT, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="s"))
    after = _judge(engine, _url_request(message["params"]["url"], 3))
    assert _codes(after) == _codes(_judge(fresh, _url_request(message["params"]["url"], 3)))
    assert _codes(after) != _codes(before), "the two policies must judge this URL differently"


def test_plans_are_reused_for_one_kind_side_direction_and_era() -> None:
    """One plan per (kind, side, direction, era), however many messages."""
    engine = quiet_engine()
    engine.evaluate(Envelope(INIT, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="s"))
    for i in range(20):
        _judge(engine, _url_request(f"https://auth.example.com/c?state=Q{i:020d}", i + 1))
    url_plans = [key for key in engine._plans if key[0].value == "url_request"]
    assert len(url_plans) == 1
