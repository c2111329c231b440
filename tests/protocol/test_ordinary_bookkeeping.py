"""The classification step of the one protocol pass agrees with its extraction step.

``ordinary_bookkeeping`` (the first step of :func:`elicitguard.protocol.reading.read`) answers for most messages without building anything; whenever it says
"ordinary", :func:`extract` must find no item in the same message and leave the session in
exactly the same state. Checked on every rule case and example capture (in order, so the
sessions carry real history), on the benchmark's ordinary workload, and on generated
JSON-RPC shapes built around the keys the extractor looks at.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.corpus import capture_envelopes, case_envelopes

from elicitguard import Direction, Envelope, Side
from elicitguard.protocol.extract import extract, ordinary_bookkeeping
from elicitguard.protocol.session import BoundedMap, SessionState

ROOT = Path(__file__).resolve().parents[2]


def _snapshot(state: SessionState) -> tuple[Any, ...]:
    def plain(value: Any) -> Any:
        if isinstance(value, BoundedMap):
            return tuple((k, plain(v)) for k, v in value._data.items())
        return value

    return tuple(
        plain(getattr(state, name))
        for name in (f.name for f in dataclasses.fields(state))
        if name != "last_seen"
    )


def _agree(envelope: Envelope, state: SessionState, default: str | None = None) -> bool:
    """Run both on copies of ``state``; assert agreement; advance ``state`` like extract."""
    fast_state = copy.deepcopy(state)
    slow_state = copy.deepcopy(state)
    handled = ordinary_bookkeeping(envelope.message, envelope.direction, fast_state, default)
    items = extract(envelope, slow_state, default)
    if handled:
        assert items == [], envelope.message
        assert _snapshot(fast_state) == _snapshot(slow_state), envelope.message
    else:  # the caller runs extract after a refusal: together they must equal extract
        again = extract(envelope, fast_state, default)
        assert [(i.kind, i.pointer) for i in again] == [(i.kind, i.pointer) for i in items]
        assert _snapshot(fast_state) == _snapshot(slow_state), envelope.message
    extract(envelope, state, default)
    return handled


def _corpus() -> Iterator[tuple[str, Envelope]]:
    """Cases and captures as the fast route meets them: no headers, no explicit version."""
    for envelope in [*case_envelopes(), *capture_envelopes()]:
        envelope.headers = {}
        envelope.protocol_version = None
        yield envelope.session or "", envelope


def test_fast_route_agrees_on_cases_and_captures() -> None:
    """Every message of the case corpus and example captures, in order, per session."""
    states: dict[str, SessionState] = {}
    handled = total = 0
    for session, envelope in _corpus():
        state = states.setdefault(session, SessionState())
        handled += _agree(envelope, state)
        total += 1
    assert total > 1000
    assert handled > 100, "ordinary messages in the corpus take the fast route"


def test_fast_route_agrees_on_the_benchmark_workload() -> None:
    """The fast path benchmark's traffic, in every era a session can be in."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from workloads import ordinary_messages
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for era in (None, "2025-06-18", "2025-11-25", "2026-07-28"):
        state = SessionState(era=era)
        fast = 0
        for direction, frame in ordinary_messages(400):
            envelope = Envelope(orjson.loads(frame), Direction(direction), side=Side.PROXY)
            fast += _agree(envelope, state)
        assert fast > (0 if era == "2026-07-28" else 300)


_ids = st.one_of(
    st.integers(-3, 3), st.sampled_from(["1", "a", "init-1"]), st.none(), st.floats(0, 2)
)
_methods = st.sampled_from(
    [
        "tools/call",
        "tools/list",
        "initialize",
        "ping",
        "elicitation/create",
        "tasks/result",
        "tasks/get",
        "tasks/update",
        "tasks/input_response",
        "notifications/progress",
        "notifications/elicitation/complete",
        "sampling/createMessage",
    ]
)
_small = st.one_of(st.none(), st.booleans(), st.integers(-32100, 5), st.text(max_size=6))
_params = st.one_of(
    _small,
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.text(max_size=4),
            "arguments": st.dictionaries(st.text(max_size=3), _small, max_size=2),
            "_meta": st.dictionaries(
                st.sampled_from(["io.modelcontextprotocol/protocolVersion", "x"]),
                _small,
                max_size=2,
            ),
            "inputResponses": st.dictionaries(st.text(max_size=2), _small, max_size=2),
            "requestState": _small,
            "mode": st.sampled_from(["form", "url"]),
            "taskId": st.text(max_size=3),
            "task": st.dictionaries(st.text(max_size=3), _small, max_size=2),
        },
    ),
)
_results = st.one_of(
    _small,
    st.fixed_dictionaries(
        {},
        optional={
            "resultType": st.sampled_from(["complete", "input_required", "task", "weird"]),
            "inputRequests": st.dictionaries(st.text(max_size=2), _small, max_size=2),
            "status": st.sampled_from(["input_required", "working"]),
            "task": st.fixed_dictionaries(
                {},
                optional={
                    "taskId": st.text(max_size=2),
                    "status": st.sampled_from(["input_required", "working"]),
                },
            ),
            "protocolVersion": st.sampled_from(["2025-06-18", "2025-11-25", "2026-07-28", "x"]),
            "content": st.lists(_small, max_size=2),
            "action": st.sampled_from(["accept", "decline"]),
        },
    ),
)
_requests = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": _ids, "method": st.one_of(_methods, _small)},
    optional={"params": _params},
)
_notifications = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": _methods}, optional={"params": _params}
)
_answers = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": _ids, "result": _results})
_errors = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": _ids},
    optional={
        "error": st.one_of(
            _small,
            st.fixed_dictionaries({"code": st.sampled_from([-32042, -32002, -32600, -32050])}),
        ),
        "result": _results,
        "method": _small,
    },
)
_messages = st.one_of(_requests, _notifications, _answers, _errors)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(list(Direction)), _messages), min_size=1, max_size=12),
    st.sampled_from([None, "2025-06-18", "2025-11-25", "2026-07-28"]),
)
def test_fast_route_agrees_on_generated_sequences(
    sequence: list[tuple[Direction, dict[str, Any]]], default: str | None
) -> None:
    """Any sequence of JSON-RPC shapes around the keys the extractor reads."""
    state = SessionState()
    for direction, message in sequence:
        _agree(Envelope(message, direction, side=Side.PROXY), state, default)


_GRID_PARAMS: list[Any] = [
    None,
    "x",
    {},
    {"name": "t", "arguments": {"a": 1}},
    {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    {"inputResponses": {"a": {}}},
    {"requestState": "s"},
    {"taskId": "t1"},
    {"mode": "url", "url": "https://a.example/", "message": "m", "elicitationId": "e"},
]
_GRID_RESULTS: list[Any] = [
    None,
    [],
    "x",
    {},
    {"content": []},
    {"resultType": "complete"},
    {"resultType": "input_required", "inputRequests": {}},
    {"resultType": "weird"},
    {"inputRequests": {"a": {"method": "elicitation/create", "params": {}}}},
    {"status": "input_required"},
    {"status": "working"},
    {"task": {"taskId": "t1", "status": "input_required"}},
    {"task": "t"},
    {"protocolVersion": "2025-11-25"},
    {"action": "accept", "content": {"a": 1}},
]


def _grid_messages() -> Iterator[dict[str, Any]]:
    methods = [
        "tools/call",
        "initialize",
        "elicitation/create",
        "tasks/result",
        "tasks/get",
        "tasks/update",
        "tasks/input_response",
        "notifications/elicitation/complete",
        "notifications/progress",
    ]
    for method in methods:
        for params in _GRID_PARAMS:
            yield {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            yield {"jsonrpc": "2.0", "method": method, "params": params}
    for result in _GRID_RESULTS:
        yield {"jsonrpc": "2.0", "id": 1, "result": result}
    for error in ({"code": -32042}, {"code": -32002}, {"code": -32600}, "x"):
        yield {"jsonrpc": "2.0", "id": 1, "error": error}
    yield {"jsonrpc": "2.0", "id": 1}
    yield {"jsonrpc": "2.0", "result": {}}


def _grid_states() -> Iterator[SessionState]:
    from elicitguard.protocol.session import PendingClientRequest, PendingServerRequest

    for era in (None, "2025-06-18", "2025-11-25", "2026-07-28"):
        yield SessionState(era=era)
        for method in ("tools/call", "initialize", "tasks/get", "tasks/result"):
            state = SessionState(era=era)
            state.pending_client.put(("int", 1), PendingClientRequest(method, era, None, {}))
            yield state
        for method in ("elicitation/create", "tasks/result"):
            state = SessionState(era=era)
            state.pending_server.put(("int", 1), PendingServerRequest(method, era, task_id="t1"))
            yield state


def test_fast_route_agrees_on_a_grid_of_shapes() -> None:
    """Every method, params, result and error shape the extractor reads, in every state."""
    checked = 0
    for state in _grid_states():
        for message in _grid_messages():
            for direction in Direction:
                _agree(Envelope(message, direction, side=Side.PROXY), copy.deepcopy(state))
                checked += 1
    assert checked > 5000
