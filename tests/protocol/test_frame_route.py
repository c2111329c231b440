"""The fast route for a frame's bytes agrees with the full route, or steps aside.

``classify_frame`` reads only a frame's top-level keys. Whenever it says "ordinary", the
full route (``parse_frame``, then ``read`` with the bytes) must say ordinary with no
finding and make exactly the same session changes; whenever it says no, the session must
be as it was, and the full route decides. Checked on the benchmark's traffic, on the
generated shapes of the bookkeeping tests written out in several JSON spellings (spaces,
escapes, repeated keys), on mutated bytes, and on each edge a top-level look could miss.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.protocol.test_ordinary_bookkeeping import _grid_messages, _grid_states, _messages

from elicitguard import Direction, Engine, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.engine.ordinary import ordinary_needs
from elicitguard.errors import FrameError
from elicitguard.protocol.frame_route import classify_frame
from elicitguard.protocol.parsing import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, parse_frame
from elicitguard.protocol.reading import NO_NEEDS, ORDINARY, OrdinaryNeeds, read
from elicitguard.protocol.session import BoundedMap, PendingServerRequest, SessionState

ROOT = Path(__file__).resolve().parents[2]
C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
_POLICY_NEEDS = ordinary_needs(load_policy(environ={}))


def _contents(state: SessionState) -> tuple[Any, ...]:
    """The state, maps compared as maps (a refused answer may move its entry: harmless)."""

    def plain(value: Any) -> Any:
        return dict(value._data) if isinstance(value, BoundedMap) else value

    return tuple(
        plain(getattr(state, name))
        for name in (f.name for f in dataclasses.fields(state))
        if name != "last_seen"
    )


def _ordered(state: SessionState) -> tuple[Any, ...]:
    def plain(value: Any) -> Any:
        return tuple(value._data.items()) if isinstance(value, BoundedMap) else value

    return tuple(
        plain(getattr(state, name))
        for name in (f.name for f in dataclasses.fields(state))
        if name != "last_seen"
    )


def _agree(
    raw: bytes,
    direction: Direction,
    state: SessionState,
    default: str | None = None,
    needs: OrdinaryNeeds = NO_NEEDS,
) -> bool:
    """Both routes on copies of ``state``: assert agreement; advance ``state`` like the full."""
    before = copy.deepcopy(state)
    fast_state = copy.deepcopy(state)
    fast = classify_frame(
        raw,
        direction,
        Side.PROXY,
        fast_state,
        default,
        needs,
        {},
        max_bytes=DEFAULT_MAX_BYTES,
        max_depth=DEFAULT_MAX_DEPTH,
    )
    try:
        message = parse_frame(raw)
    except FrameError:
        assert not fast, raw
        return False
    reading = read(
        message, direction, state, default, side=Side.PROXY, context={"raw": raw}, needs=needs
    )
    if fast:
        assert reading is ORDINARY, raw  # ordinary, no finding, nothing built
        assert _ordered(fast_state) == _ordered(state), raw
    else:
        assert _contents(fast_state) == _contents(before), raw
    return fast


def _spellings(message: dict[str, Any]) -> list[bytes]:
    """One message written as different encoders write it."""
    compact = orjson.dumps(message)
    return [
        compact,
        json.dumps(message).encode(),  # spaces after separators
        json.dumps(message, indent=1).encode(),  # newlines
        json.dumps(message, ensure_ascii=True).encode(),
        json.dumps(message, sort_keys=True).encode(),
    ]


def _repeated(message: dict[str, Any]) -> list[bytes]:
    """The message with a key written twice: the first copy is another value."""
    body = orjson.dumps(message)
    out = []
    for key, first in (
        ("method", "initialize"),
        ("method", "ping"),
        ("id", 99),
        ("result", {"status": "working"}),
        ("result", {"task": {"taskId": "t"}}),
        ("result", {"content": []}),
        ("params", {"_meta": {"x": 1}}),
        ("params", {"name": "x"}),
        ("error", {"code": 1}),
    ):
        out.append(b"{" + orjson.dumps(key) + b":" + orjson.dumps(first) + b"," + body[1:])
    return out


def test_agrees_on_the_benchmark_workload() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from workloads import ordinary_messages
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for era in (None, "2025-11-25", "2026-07-28"):
        for needs in (NO_NEEDS, _POLICY_NEEDS):
            state = SessionState(era=era)
            fast = 0
            for direction, frame in ordinary_messages(300):
                fast += _agree(frame, Direction(direction), state, needs=needs)
            assert fast > (0 if era == "2026-07-28" else 250)


def test_agrees_on_the_grid_in_every_spelling() -> None:
    for message in _grid_messages():
        for direction in Direction:
            for raw in [*_spellings(message), *_repeated(message)]:
                for state in _grid_states():
                    _agree(raw, direction, state)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(list(Direction)), _messages), min_size=1, max_size=10),
    st.sampled_from([None, "2025-11-25", "2026-07-28"]),
    st.integers(0, 4),
)
def test_agrees_on_generated_sequences(
    sequence: list[tuple[Direction, dict[str, Any]]], default: str | None, spelling: int
) -> None:
    state = SessionState()
    for direction, message in sequence:
        _agree(_spellings(message)[spelling], direction, state, default, _POLICY_NEEDS)


_INSERTS = [
    b"1e999",
    b"9" * 5000,
    b"NaN",
    b"\x00",
    b"\xff",
    b"\xc3\xa9",
    b'"\\ud800"',
    b"[" * 70 + b"]" * 70,
    b'"x",',
    b",",
    b"}",
    b" ",
    b'"\\"_meta\\""',
]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(list(_grid_messages())),
    st.sampled_from(list(Direction)),
    st.sampled_from(_INSERTS),
    st.integers(0, 200),
)
def test_mutated_bytes_never_pass_where_the_full_route_stops(
    message: dict[str, Any], direction: Direction, insert: bytes, where: int
) -> None:
    raw = orjson.dumps(message)
    where = where % (len(raw) + 1)
    _agree(raw[:where] + insert + raw[where:], direction, SessionState())


def _pending_server(era: str | None = None) -> SessionState:
    state = SessionState(era=era)
    state.pending_server.put(("int", 7), PendingServerRequest("elicitation/create", era))
    return state


@pytest.mark.parametrize(
    ("raw", "direction", "state"),
    [
        # elicitation below the top level: the 2026-07-28 round inside a tool's result
        (
            b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required",'
            b'"inputRequests":{"a":{"method":"elicitation/create","params":{}}}}}',
            S2C,
            SessionState(),
        ),
        (b'{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{}}}', S2C, SessionState()),
        # task-augmented: a CreateTaskResult, a tasks/get status
        (b'{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t"}}}', S2C, SessionState()),
        (b'{"jsonrpc":"2.0","id":1,"result":{"status":"working"}}', S2C, SessionState()),
        (b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}', C2S, None),
        # retries and _meta
        (
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"inputResponses":{}}}',
            C2S,
            None,
        ),
        (
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"requestState":"s"}}',
            C2S,
            None,
        ),
        (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"x":1}}}', C2S, None),
        # an answer to a tracked elicitation request
        (
            b'{"jsonrpc":"2.0","id":7,"result":{"action":"accept","content":{}}}',
            C2S,
            _pending_server(),
        ),
        # the handshake, and escapes that could spell anything
        (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}', C2S, None),
        (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_m\\u0065ta":{}}}', C2S, None),
        (b'{"jsonrpc":"2.0","id":2,"method":"elicitation\\/create","params":{}}', S2C, None),
        (b'{"jsonrpc":"2.0","id":2,"method":"ELICITATION/CREATE","params":{}}', S2C, None),
        # a repeated key whose first copy is elicitation
        (b'{"jsonrpc":"2.0","id":1,"method":"elicitation/create","method":"ping"}', S2C, None),
        # an error (-32042 and friends are read by the full route), a float id
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}', S2C, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', C2S, None),
        # lone surrogates, non-ASCII, oversize numbers, deep frames
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\\ud800"}}', C2S, None),
        ('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"é"}}'.encode(), C2S, None),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + b"9" * 5000 + b"}}",
            C2S,
            None,
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 65 + b"]" * 65 + b"}",
            C2S,
            None,
        ),
    ],
)
def test_what_a_top_level_look_could_miss_takes_the_full_route(
    raw: bytes, direction: Direction, state: SessionState | None
) -> None:
    state = state if state is not None else SessionState()
    assert not classify_frame(
        raw,
        direction,
        Side.PROXY,
        copy.deepcopy(state),
        None,
        _POLICY_NEEDS,
        {},
        max_bytes=DEFAULT_MAX_BYTES,
        max_depth=DEFAULT_MAX_DEPTH,
    )
    _agree(raw, direction, state, needs=_POLICY_NEEDS)


def test_ordinary_frames_take_it_and_remember_the_request() -> None:
    state = SessionState()
    request = (
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"s","arguments":{"q":1}}}'
    )
    assert _agree(request, C2S, state)
    pending = state.pending_client.get(("int", 3))
    assert pending is not None
    assert pending.params == {"name": "s", "arguments": {"q": 1}}
    assert _agree(b'{"jsonrpc":"2.0","id":3,"result":{"content":[]}}', S2C, state)
    assert state.pending_client.get(("int", 3)) is None
    assert _agree(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}', S2C, state)


def _engine() -> Engine:
    return Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())


def _summary(decision: Any) -> tuple[Any, ...]:
    return (decision.action, decision.fast_path, decision.codes, decision.frame_error)


def test_the_engine_decides_bytes_as_it_decides_the_parsed_message() -> None:
    """Ordinary bytes leave on the fast route; the rest is judged as before, finding for
    finding, whichever form the message came in."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}},
    }
    frames: list[tuple[Direction, bytes]] = [
        (C2S, orjson.dumps(init)),
        (C2S, b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a"}}'),
        (S2C, b'{"jsonrpc":"2.0","id":5,"result":{"content":[]}}'),
        (
            S2C,
            orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Your password please",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"password": {"type": "string", "title": "Password"}},
                        },
                    },
                }
            ),
        ),
        (S2C, b'{"jsonrpc":"2.0","id":1,"method":"elicitation/create","method":"ping"}'),
        (S2C, b"not json"),
    ]
    by_bytes, by_object = _engine(), _engine()
    fast = 0
    for direction, frame in frames:
        left = by_bytes.evaluate(frame, direction, side=Side.PROXY, session="s")
        try:
            parsed: Any = parse_frame(frame)
            right = by_object.evaluate(parsed, direction, side=Side.PROXY, session="s", raw=frame)
        except FrameError:
            right = by_object.evaluate(frame, direction, side=Side.PROXY, session="s")
        assert _summary(left) == _summary(right), frame
        fast += left.fast_path
    assert fast == 2
    assert by_bytes.audit.counters["fast_path"] == by_object.audit.counters["fast_path"]
