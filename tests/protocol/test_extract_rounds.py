"""Session facts for EG113-EG122, and that ordinary traffic still costs no items."""

from __future__ import annotations

from typing import Any

from elicitguard.protocol.envelope import Direction, Envelope
from elicitguard.protocol.extract import extract
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.session import SessionState

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
MODERN = "2026-07-28"
FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "n?",
        "requestedSchema": {"type": "object", "properties": {}},
    },
}


def retry(items: list[Item]) -> Item:
    return next(i for i in items if i.kind is ItemKind.RETRY)


def run(
    state: SessionState, direction: Direction, message: dict[str, Any], era: str = MODERN
) -> list[Item]:
    return extract(Envelope(message, direction, protocol_version=era), state)


def call(id_: Any, **extra: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"a": 1}, **extra},
    }


def test_ordinary_results_stay_on_the_fast_path() -> None:
    """complete, absent resultType, and push-era results produce no item at all."""
    state = SessionState()
    for result in ({"resultType": "complete", "content": []}, {"content": []}):
        run(state, C2S, call(1))
        assert [
            i.kind for i in run(state, S2C, {"jsonrpc": "2.0", "id": 1, "result": result})
        ] == []
    assert (
        run(state, S2C, {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "odd"}}, "2025-11-25")
        == []
    )


def test_unknown_result_type_and_retired_codes_are_items_in_2026() -> None:
    """An unknown resultType is a RESULT item; -32050 and -32002 are ERROR items; -32021 is not."""
    state = SessionState()
    run(state, C2S, call(1))
    items = run(
        state,
        S2C,
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "task", "task": {"taskId": "x"}}},
    )
    assert [(i.kind, i.facts["tasks_in_use"]) for i in items] == [(ItemKind.RESULT, True)]
    for code, kinds in ((-32050, [ItemKind.ERROR]), (-32002, [ItemKind.ERROR]), (-32021, [])):
        run(state, C2S, call(2))
        error = {"jsonrpc": "2.0", "id": 2, "error": {"code": code, "message": "m"}}
        assert kinds == [i.kind for i in run(state, S2C, error)]


def test_retry_facts_state_echo_and_reused_id() -> None:
    """The round is found by its state or, when the state changed, by method and arguments."""
    state = SessionState()
    run(state, C2S, call(5))
    run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {
                "resultType": "input_required",
                "inputRequests": {"q": FORM},
                "requestState": "S",
            },
        },
    )
    exact = retry(
        run(state, C2S, call(5, inputResponses={"q": {"action": "decline"}}, requestState="S"))
    )
    assert (exact.facts["state_echo"], exact.facts["reused_id"]) == ("exact", True)
    changed = retry(
        run(state, C2S, call(6, inputResponses={"q": {"action": "decline"}}, requestState="T"))
    )
    assert (changed.facts["state_echo"], changed.facts["reused_id"]) == ("modified", False)
    dropped = retry(run(state, C2S, call(7, inputResponses={"q": {"action": "decline"}})))
    assert dropped.facts["state_echo"] == "dropped"
    assert set(dropped.facts["chain"].requests) == {"q"}


def test_refusals_finish_url_elicitations_and_mark_repeats() -> None:
    """A declined URL elicitation is finished; the identical next push is marked, then reset."""
    state = SessionState()
    era = "2025-11-25"
    url = {"mode": "url", "message": "Go", "url": "https://a.example/x", "elicitationId": "e1"}
    run(state, S2C, {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": url}, era)
    run(state, C2S, {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}}, era)
    assert state.elicitations.get("e1") == "decline"
    again = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "elicitation/create",
            "params": {**url, "elicitationId": "e2"},
        },
        era,
    )
    assert again[0].facts["asked_again_after"] == "decline"
    third = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "elicitation/create",
            "params": {**url, "elicitationId": "e3"},
        },
        era,
    )
    assert "asked_again_after" not in third[0].facts
    done = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": {"elicitationId": "e1"},
        },
        era,
    )
    assert (
        done[0].facts["elicitation_status"],
        done[0].facts["session_observed"],
    ) == ("decline", False)
