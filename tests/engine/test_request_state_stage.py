"""requestState sealing is a stage of ``Engine.evaluate``: every door gets it, not only the relay.

An engine given a request-state guard seals the ``requestState`` of a result on its way to
the client (``decision.replacement``), opens it in the retry before the retry is judged, and
answers a state that does not open with -32602 (``decision.reply``), whichever form the
message comes in: bytes (a proxy), the parsed object (the linter's lane) or an envelope.
"""

from __future__ import annotations

from typing import Any

import orjson

from elicitguard import Direction, Envelope, Side
from elicitguard.identity.setup import build_sealing
from elicitguard.testing import quiet_engine

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
INNER = "upstream-state-42"


def _call(rid: int, state: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "book", "arguments": {}}
    if state is not None:
        params["requestState"] = state
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _input_required(rid: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "result": {"resultType": "input_required", "inputRequests": {}, "requestState": INNER},
    }


def test_sealed_on_the_way_out_and_opened_on_the_way_back() -> None:
    """A result's state leaves sealed; the retry is judged with (and forwards) the original."""
    engine = quiet_engine()
    engine.request_state = build_sealing(engine)
    engine.evaluate(orjson.dumps(_call(1)), C2S, side=Side.PROXY, session="c")
    out = engine.evaluate(_input_required(1), S2C, side=Side.PROXY, session="c")
    assert out.replacement is not None
    token = out.replacement["result"]["requestState"]
    assert token != INNER
    assert token.startswith("egs1.")
    assert out.envelope is not None
    assert out.envelope.message is out.replacement
    back = engine.evaluate(
        Envelope(_call(2, token), C2S, side=Side.PROXY, session="c"),
    )
    assert back.reply is None
    assert back.replacement is not None
    assert back.replacement["params"]["requestState"] == INNER


def test_a_state_that_does_not_open_is_answered_not_judged() -> None:
    """A forged state gets -32602 back in ``decision.reply``; nothing is forwarded."""
    engine = quiet_engine()
    engine.request_state = build_sealing(engine)
    decision = engine.evaluate(orjson.dumps(_call(3, "egs1.forged")), C2S, session="c")
    assert decision.reply is not None
    assert decision.reply["error"]["code"] == -32602
    assert decision.reply["id"] == 3
    assert decision.blocked


def test_without_a_guard_state_passes_untouched() -> None:
    """No guard: the stage does nothing and ordinary traffic stays on the fast path."""
    engine = quiet_engine()
    decision = engine.evaluate(_call(4, INNER), C2S, session="c")
    assert decision.replacement is None
    assert decision.reply is None
