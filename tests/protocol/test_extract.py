"""Extraction of elicitation items in every protocol era."""

from __future__ import annotations

from typing import Any

from elicitguard.protocol.envelope import Direction, Envelope
from elicitguard.protocol.extract import extract
from elicitguard.protocol.items import ABSENT, ItemKind
from elicitguard.protocol.session import SessionState

C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
SCHEMA = {"type": "object", "properties": {"n": {"type": "string"}}}


def run(
    state: SessionState, direction: Direction, message: dict[str, Any], era: str | None = None
) -> list[Any]:
    return extract(Envelope(message=message, direction=direction), state, era)


def test_ordinary_traffic_has_no_items() -> None:
    """tools/list, results, notifications: the fast path."""
    state = SessionState()
    assert run(state, C2S, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) == []
    assert run(state, S2C, {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}) == []
    assert (
        run(state, S2C, {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}) == []
    )


def test_push_era_request_and_answer_are_correlated_by_id() -> None:
    """The answer carries the schema of the request it answers; ids are per direction."""
    state = SessionState()
    run(
        state,
        C2S,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}},
        },
    )
    run(state, S2C, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}})
    assert state.era == "2025-11-25"
    assert state.client_capabilities == {}
    run(state, C2S, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}})
    [request] = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "elicitation/create",
            "params": {"message": "m", "requestedSchema": SCHEMA},
        },
    )
    assert request.kind == ItemKind.FORM_REQUEST
    assert request.mode == "form"
    [answer] = run(
        state,
        C2S,
        {"jsonrpc": "2.0", "id": 1, "result": {"action": "accept", "content": {"n": "x"}}},
    )
    assert answer.kind == ItemKind.ELICIT_RESULT
    assert answer.schema == SCHEMA
    # The server's answer to the client's tools/call id 1 is not an elicitation result.
    assert run(state, S2C, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}) == []


def test_initialize_without_elicitation_is_absent() -> None:
    """A client that declares nothing is ABSENT, not unknown."""
    state = SessionState()
    [item] = run(
        state,
        C2S,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}},
    )
    assert item.capabilities is ABSENT


def test_task_augmented_elicitation_answer_through_tasks_result() -> None:
    """2025-11-25: params.task, CreateTaskResult, then tasks/result carries the answer."""
    state = SessionState(era="2025-11-25")
    [request] = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "elicitation/create",
            "params": {"message": "m", "requestedSchema": SCHEMA, "task": {"ttl": 1000}},
        },
    )
    assert request.task
    [created] = run(
        state,
        C2S,
        {"jsonrpc": "2.0", "id": 3, "result": {"task": {"taskId": "t1", "status": "working"}}},
    )
    assert created.kind == ItemKind.TASK_CREATED
    assert (
        run(
            state,
            S2C,
            {"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": "t1"}},
        )
        == []
    )
    [answer] = run(
        state,
        C2S,
        {"jsonrpc": "2.0", "id": 4, "result": {"action": "accept", "content": {"n": "x"}}},
    )
    assert answer.kind == ItemKind.ELICIT_RESULT
    assert answer.schema == SCHEMA
    assert answer.task


def test_url_required_error_lists_url_requests() -> None:
    """-32042 error data holds URL-mode requests."""
    state = SessionState(era="2025-11-25")
    items = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 9,
            "error": {
                "code": -32042,
                "message": "m",
                "data": {
                    "elicitations": [
                        {
                            "mode": "url",
                            "url": "https://a.example",
                            "message": "m",
                            "elicitationId": "e",
                        }
                    ]
                },
            },
        },
    )
    assert [i.kind for i in items] == [ItemKind.URL_REQUIRED_ERROR, ItemKind.URL_REQUEST]
    assert items[1].pointer == "/error/data/elicitations/0"


def test_modern_round_trip_ties_the_retry_to_its_input_required_result() -> None:
    """2026-07-28: inputRequests entries, then a retry whose answers know their schema."""
    state = SessionState()
    request = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"a": 1}, "_meta": META},
    }
    [caps] = run(state, C2S, request)
    assert caps.kind == ItemKind.CAPABILITIES
    assert caps.facts["missing_meta"] == []
    items = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {
                "resultType": "input_required",
                "inputRequests": {
                    "q": {
                        "method": "elicitation/create",
                        "params": {"mode": "form", "message": "m", "requestedSchema": SCHEMA},
                    }
                },
                "requestState": "opaque",
            },
        },
    )
    assert [i.kind for i in items] == [ItemKind.INPUT_REQUIRED, ItemKind.FORM_REQUEST]
    assert items[1].input_key == "q"
    assert items[1].capabilities == {"form": {}}
    assert items[1].pointer == "/result/inputRequests/q/params"
    retry = {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "tools/call",
        "params": {
            "name": "t",
            "arguments": {"a": 1},
            "inputResponses": {"q": {"action": "accept", "content": {"n": "x"}}},
            "requestState": "opaque",
            "_meta": META,
        },
    }
    kinds = run(state, C2S, retry)
    assert [i.kind for i in kinds] == [
        ItemKind.CAPABILITIES,
        ItemKind.RETRY,
        ItemKind.ELICIT_RESULT,
    ]
    assert kinds[2].schema == SCHEMA


def test_modern_round_without_state_is_tied_by_method_name_and_arguments() -> None:
    """No requestState: the chain key is method + name + arguments digest."""
    state = SessionState()
    run(
        state,
        C2S,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "t", "arguments": {"a": 1}, "_meta": META},
        },
    )
    run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "resultType": "input_required",
                "inputRequests": {
                    "q": {
                        "method": "elicitation/create",
                        "params": {"message": "m", "requestedSchema": SCHEMA},
                    }
                },
            },
        },
    )
    items = run(
        state,
        C2S,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "t",
                "arguments": {"a": 1},
                "inputResponses": {"q": {"action": "decline"}},
                "_meta": META,
            },
        },
    )
    assert items[-1].schema == SCHEMA


def test_modern_missing_meta_is_recorded() -> None:
    """A 2026-07-28 request without its required _meta keys."""
    state = SessionState()
    [caps] = run(
        state,
        C2S,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}},
        era="2026-07-28",
    )
    assert len(caps.facts["missing_meta"]) == 2


def test_tasks_get_with_input_required_and_tasks_update() -> None:
    """The tasks extension's second channel for elicitation."""
    state = SessionState()
    run(
        state,
        C2S,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tasks/get",
            "params": {"taskId": "t", "_meta": META},
        },
    )
    items = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "resultType": "complete",
                "taskId": "t",
                "status": "input_required",
                "inputRequests": {
                    "k": {
                        "method": "elicitation/create",
                        "params": {"message": "m", "requestedSchema": SCHEMA},
                    }
                },
            },
        },
    )
    assert ItemKind.FORM_REQUEST in [i.kind for i in items]
    update = run(
        state,
        C2S,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tasks/update",
            "params": {
                "taskId": "t",
                "inputResponses": {"k": {"action": "accept", "content": {"n": "x"}}},
                "_meta": META,
            },
        },
    )
    assert ItemKind.ELICIT_RESULT in [i.kind for i in update]


def test_draft_shapes_are_extracted_and_marked() -> None:
    """The WG draft's IncompleteResult (no resultType) and wrapped answers."""
    state = SessionState()
    run(
        state,
        C2S,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "_meta": META}},
    )
    items = run(
        state,
        S2C,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "inputRequests": {
                    "q": {
                        "method": "elicitation/create",
                        "params": {"message": "m", "requestedSchema": SCHEMA},
                    }
                },
                "requestState": "s",
            },
        },
    )
    assert all(i.draft for i in items)
    answers = run(
        state,
        C2S,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "t",
                "inputResponses": {"q": {"result": {"action": "accept", "content": {"n": "x"}}}},
                "requestState": "s",
                "_meta": META,
            },
        },
    )
    assert answers[-1].draft
    assert answers[-1].data["action"] == "accept"


def test_unknown_fields_and_wrong_types_never_crash() -> None:
    """Garbage in every position yields items or nothing, never an exception."""
    state = SessionState()
    for message in [
        {"method": "elicitation/create", "id": [1], "params": "x"},
        {"method": "elicitation/create", "id": 1, "params": {"mode": 5, "requestedSchema": []}},
        {"id": 1, "result": {"resultType": "input_required", "inputRequests": [1, 2]}},
        {"id": 1, "result": {"resultType": "input_required", "inputRequests": {"a": "b"}}},
        {"id": 2, "error": "boom"},
        {"id": 2, "error": {"code": -32042, "data": {"elicitations": "no"}}},
        {"method": "notifications/elicitation/complete", "params": None},
    ]:
        for direction in (C2S, S2C):
            run(state, direction, message)
