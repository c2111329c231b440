"""``Engine.evaluate`` decides alike whatever form the message comes in.

Bytes, the parsed object and an :class:`Envelope` are the three forms callers hold; a frame
that a caller could not read comes as its :class:`FrameError`, and in-process items come
with ``items=``.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from elicitguard import Direction, Engine, Envelope, Side
from elicitguard.base.decision import Action
from elicitguard.base.keys import KeyRing
from elicitguard.errors import FrameError
from elicitguard.protocol.items import Item, ItemKind
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
    decision = engine.evaluate(message, direction, side=Side.PROXY, session="s", **ctx)
    return [f.code for f in decision.findings]


def test_elicitation_is_judged_like_evaluate() -> None:
    """A URL request with violations gets the same findings as an object and an envelope."""
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
    decision = engine.evaluate(CALL, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="s")
    assert decision.fast_path
    answer = {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}
    decision = engine.evaluate(
        orjson.dumps(answer), Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="s"
    )
    assert decision.fast_path
    assert engine.audit.counters["fast_path"] == 2


def test_headers_send_a_message_to_the_full_path() -> None:
    """With headers (HTTP) the client-request rules get their look: EG604's query token."""
    engine = _engine()
    headers = {":path": "/mcp?access_token=abcdefghijklmnopqrstuvwxyz123456"}
    decision = engine.evaluate(
        CALL, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="s", headers=headers
    )
    assert not decision.fast_path
    assert "EG604" in {f.code for f in decision.findings}


def test_bytes_are_judged_like_the_parsed_object() -> None:
    """One frame's bytes: parsed under the policy's limits, then judged like the object."""
    a, b = _engine(), _engine()
    for engine in (a, b):
        engine.evaluate(INIT, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="s")
    expected = _codes(b, URL_REQUEST, Direction.SERVER_TO_CLIENT)
    decision = a.evaluate(
        orjson.dumps(URL_REQUEST), Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="s"
    )
    assert [f.code for f in decision.findings] == expected
    assert decision.envelope is not None
    assert decision.envelope.raw == orjson.dumps(URL_REQUEST)


def test_bytes_that_do_not_parse_are_a_frame_decision() -> None:
    """Broken bytes and a caller's own FrameError both become a recorded EG90x block."""
    engine = _engine()
    decision = engine.evaluate(b"{not json", Direction.SERVER_TO_CLIENT, session="s")
    assert decision.frame_error == "not_json"
    assert decision.action is Action.BLOCK
    assert [f.code for f in decision.findings] == ["EG904"]
    error = FrameError("too_large", "frame of 9 bytes is over the limit of 8 bytes")
    decision = engine.evaluate(error, Direction.CLIENT_TO_SERVER, session="s")
    assert decision.frame_error == "too_large"
    assert [f.code for f in decision.findings] == ["EG903"]


def test_items_built_in_process_are_judged() -> None:
    """``items=`` judges what the caller built (an egress call) instead of the message."""
    engine = _engine()
    envelope = Envelope({}, Direction.CLIENT_TO_SERVER, side=Side.SERVER, server="s")
    assert engine.evaluate(envelope, items=[]).action is Action.ALLOW
    item = Item(ItemKind.URL_BINDING, "", None, {"reason": "expired"})
    decision = engine.evaluate(envelope, items=[item])
    assert decision.items == (item,)


def test_a_message_without_a_direction_is_refused() -> None:
    """Bytes and objects carry no direction of their own: the caller must name it."""
    with pytest.raises(TypeError):
        _engine().evaluate(CALL)


def test_a_misspelt_envelope_field_is_refused_even_on_the_fast_path() -> None:
    """``sesion=`` would silently judge in the wrong session: refused like any bad keyword."""
    with pytest.raises(TypeError, match="sesion"):
        _engine().evaluate(CALL, Direction.CLIENT_TO_SERVER, sesion="s")
