"""The raw-bytes lane (lint/lane.py) judges exactly the lines the full route calls ordinary.

Each capture is linted twice, with the lane and without it (the full route: every line
parsed and handed to ``Engine.evaluate``), on the bundled traffic, the linter's test
captures and generated lines (ordinary traffic, elicitation, and mutations of both that
make a line doubtful: repeated keys, escapes, unknown envelope keys, wrong types, floats
and long numbers, tasks, depth, bytes that are not ASCII or not JSON). The two runs must
give the same report, the same counters (fast path, decisions, audit records) and the same
session states; and every line the lane kept from the engine must have been the engine's
fast-path decision in the full run. A lane that judges a doubtful line is caught: the last
test breaks the lane's byte checks and expects the comparison to fail.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from elicitguard import Engine, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.lint import lane as lane_module
from elicitguard.lint import runner
from elicitguard.lint.lane import OrdinaryLane, server_hint
from elicitguard.lint.runner import Linter
from elicitguard.protocol.envelope import Direction, Side
from elicitguard.protocol.frame_route import (
    ServerFrame,
    classify_frame,
    frame_bytes_pass,
    server_stand_in,
)
from elicitguard.protocol.reading import classify
from elicitguard.protocol.session import BoundedMap, SessionState

ROOT = Path(__file__).resolve().parents[2]
TRAFFIC = ROOT / "examples" / "traffic"
POLICIES = ("builtin:default", "builtin:strict")


def _captures() -> list[Path]:
    found = sorted(TRAFFIC.glob("*.jsonl"))
    found += sorted((ROOT / "tests").glob("**/*.jsonl"))
    return [p for p in found if p.is_file()]


# --- generated lines -------------------------------------------------------------------


def _ordinary(rng: random.Random, n: int) -> dict[str, Any]:
    choice = rng.randrange(6)
    if choice == 0:
        return {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"q": f"term {n}", "api_key": "k"}},
        }
    if choice == 1:
        return {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": "ok"}]}}
    if choice == 2:
        return {"jsonrpc": "2.0", "id": n, "method": "tools/list"}
    if choice == 3:
        return {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": n, "progress": 0.5},
        }
    if choice == 4:
        return {"jsonrpc": "2.0", "id": n, "error": {"code": -32601, "message": "nope"}}
    return {"jsonrpc": "2.0", "id": n, "result": {"tools": [{"name": "t", "inputSchema": {}}]}}


def _elicitation(rng: random.Random, n: int) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {
            "jsonrpc": "2.0",
            "id": n,
            "method": "elicitation/create",
            "params": {
                "message": "Your password",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"password": {"type": "string"}},
                },
            },
        }
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "url": "https://login.example.com/x",
            "message": "go",
            "elicitationId": f"e{n}",
        },
    }


def _text_mutations(line: str, rng: random.Random) -> str:
    """One mutation of a line's text that may make it doubtful (or merely unusual)."""
    kind = rng.randrange(22)
    if kind == 0:
        return line.replace('"direction"', '"direction":"client_to_server","direction"', 1)
    if kind == 1:
        return line[:-1] + ',"message":{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}}'
    if kind == 2:
        return line.replace('"session"', '"sess\\u0069on"', 1)
    if kind == 3:
        return line[:-1] + ',"headers":{"x-a":"b"}}'
    if kind == 4:
        return line[:-1] + ',"protocol_version":"2025-06-18"}'
    if kind == 5:
        return line[:-1] + ',"transport":"' + rng.choice(["stdio", "http", "pigeon"]) + '"}'
    if kind == 6:
        return line[:-1] + ',"ts":' + rng.choice(['"2026-01-01T00:00:00Z"', "5", "null"]) + "}"
    if kind == 7:
        return line[:-1] + ',"colour":1}'
    if kind == 8:
        return line.replace('"id":', '"id":1.0e0,"x":', 1)
    if kind == 9:
        return line.replace('"id":', '"id":' + "9" * 30 + ',"y":', 1)
    if kind == 10:
        return line.replace('"result":{', '"result":{"status":"working",', 1)
    if kind == 11:
        return line.replace('"result":{', '"result":{"task":{"taskId":"t"},', 1)
    if kind == 12:
        return line.replace('"jsonrpc"', '"jsonrpc":"2.0","resultType":"complete","jsonrpc"', 1)
    if kind == 13:
        return line.replace('"session":"', '"session":"\u00e9', 1)
    if kind == 14:
        return line[: rng.randrange(1, len(line))]
    if kind == 15:
        return line.replace('"jsonrpc"', '"deep":' + "[" * 70 + "]" * 70 + ',"jsonrpc"', 1)
    if kind == 16:
        return line.replace('"jsonrpc"', '"n":' + "7" * 5000 + ',"jsonrpc"', 1)
    if kind == 17:
        return line.replace('"method":"', '"method":"Elicitation/', 1)
    if kind == 18:
        return line.replace('"session":', '"session":7,"s":', 1)
    if kind == 19:
        return line.replace('"jsonrpc"', '"jsonrpc":"2.0","jsonrpc"', 1)
    if kind == 20:
        return line.replace(":", ": ", 3)
    return line.replace('"message":{', '"message":{"id":2,', 1)


def generated_lines(seed: int, count: int) -> Iterator[str]:
    """Envelope lines of a few sessions: ordinary, elicitation, and mutated ones."""
    rng = random.Random(seed)
    for n in range(count):
        direction = rng.choice(["server_to_client", "client_to_server"])
        message = _elicitation(rng, n) if rng.random() < 0.1 else _ordinary(rng, n)
        value: dict[str, Any] = {"direction": direction, "message": message}
        if rng.random() < 0.8:
            value["session"] = f"s{rng.randrange(3)}"
        if rng.random() < 0.3:
            value["server"] = "acme"
        keys = list(value)
        if rng.random() < 0.3:
            rng.shuffle(keys)
        line = json.dumps({k: value[k] for k in keys}, separators=(",", ":"))
        if rng.random() < 0.35:
            line = _text_mutations(line, rng)
        yield line


# --- running both routes ---------------------------------------------------------------


def _state(state: SessionState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(state):
        if f.name == "last_seen":
            continue
        value = getattr(state, f.name)
        if isinstance(value, BoundedMap):
            value = (list(value._data.items()), value.evictions)
        out[f.name] = repr(value)
    return out


def _run(
    paths: list[Path], policy: str, *, lane: bool, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """Lint ``paths``; return the report, counters, states, and per line whether the
    engine decided it on its fast path (``None``: the lane kept it from the engine)."""
    engine = Engine(load_policy(policy, environ={}), audit=AuditSink(None))
    linter = Linter(engine, input_format="envelope")
    if not lane:
        monkeypatch.setattr(OrdinaryLane, "usable", property(lambda self: False))
    where: list[tuple[str, int]] = [("", 0)]
    judged: dict[tuple[str, int], bool] = {}
    reading = runner.read_lines

    def lines(stream: Any, max_bytes: int) -> Iterator[Any]:
        for captured in reading(stream, max_bytes):
            where[0] = (stream.name, captured.line)
            yield captured

    evaluate = engine.evaluate

    def spy(*args: Any, **kwargs: Any) -> Any:
        decision = evaluate(*args, **kwargs)
        judged[where[0]] = decision is engine._fast
        return decision

    monkeypatch.setattr(runner, "read_lines", lines)
    monkeypatch.setattr(engine, "evaluate", spy)
    try:
        result = linter.lint_paths(paths)
    finally:
        monkeypatch.undo()
    return {
        "findings": [f.to_dict() for f in result.findings],
        "errors": [e.to_dict() for e in result.errors],
        "suppressed": [repr(s) for s in result.suppressed],
        "summary": result.summary(),
        "counters": dict(engine._counters),
        "states": {k: _state(v) for k, v in engine.store._sessions.items()},
        "judged": judged,
    }


def _compare(paths: list[Path], policy: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What differs between the lane's run and the full route's (empty: nothing)."""
    lane = _run(paths, policy, lane=True, monkeypatch=monkeypatch)
    full = _run(paths, policy, lane=False, monkeypatch=monkeypatch)
    problems = [
        key
        for key in ("findings", "errors", "suppressed", "summary", "counters", "states")
        if lane[key] != full[key]
    ]
    for line, fast in full["judged"].items():
        if line not in lane["judged"] and not fast:
            problems.append(f"the lane judged {line}, which the full route did not call ordinary")
    return problems


def _write(tmp_path: Path, name: str, lines: Iterator[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("policy", POLICIES)
def test_lane_agrees_on_bundled_and_test_captures(
    policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _compare(_captures(), policy, monkeypatch) == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lane_agrees_on_generated_and_mutated_lines(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, f"generated-{seed}.jsonl", generated_lines(seed, 1500))
    for policy in POLICIES:
        assert _compare([path], policy, monkeypatch) == []


def test_lane_takes_the_ordinary_lines_of_a_capture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lane is not idle: most ordinary server lines never reach the engine's evaluate."""
    path = _write(tmp_path, "generated.jsonl", generated_lines(5, 600))
    lane = _run([path], "builtin:default", lane=True, monkeypatch=monkeypatch)
    full = _run([path], "builtin:default", lane=False, monkeypatch=monkeypatch)
    assert len(lane["judged"]) < len(full["judged"]) * 0.7


def test_a_lane_that_judges_doubtful_lines_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its byte checks broken (every line passes), the lane calls lines ordinary that
    the full route does not, and the comparison says so."""
    path = _write(tmp_path, "generated.jsonl", generated_lines(7, 1500))
    with monkeypatch.context() as patched:
        patched.setattr(lane_module, "frame_bytes_pass", lambda raw, **limits: True)
        problems = _compare([path, *_captures()], "builtin:default", patched)
    assert problems


# --- the frame route's pieces agree with classify_frame ---------------------------------


def _server_frames(seed: int, count: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    for line in generated_lines(seed, count):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        message = value.get("message") if isinstance(value, dict) else None
        if message is None:
            continue
        raw = json.dumps(message, separators=(",", ":"))
        if rng.random() < 0.2:
            raw = _text_mutations('{"direction":"x","session":"s","message":' + raw + "}", rng)
            raw = raw[raw.find('"message":') + 10 : -1] if '"message":' in raw else raw
        yield raw.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("policy", POLICIES)
def test_split_frame_route_matches_classify_frame(policy: str) -> None:
    """frame_bytes_pass + ServerFrame + server_stand_in + classify == classify_frame, on
    the same frames and fresh states, with the same states after."""
    import msgspec

    engine = Engine(load_policy(policy, environ={}), audit=AuditSink(None))
    limits = engine.policy.limits
    decode = msgspec.json.Decoder(ServerFrame).decode
    direction = Direction.SERVER_TO_CLIENT
    agreed = 0
    for raw in _server_frames(11, 3000):
        first, second = SessionState(), SessionState()
        whole = classify_frame(
            raw,
            direction,
            Side.CAPTURE,
            first,
            engine.default_era,
            engine._needs,
            engine.services,
            max_bytes=limits.max_message_bytes,
            max_depth=limits.max_depth,
        )
        split = False
        if frame_bytes_pass(raw, max_bytes=limits.max_message_bytes, max_depth=limits.max_depth):
            try:
                top = decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                top = None
            stand_in = server_stand_in(top) if top is not None else None
            if stand_in is not None:
                split = classify(
                    stand_in,
                    direction,
                    Side.CAPTURE,
                    second,
                    engine.default_era,
                    engine._needs,
                    engine.services,
                )
        assert whole == split, raw
        assert _state(first) == _state(second), raw
        agreed += whole
    assert agreed > 100


def test_server_hint_is_only_a_hint() -> None:
    assert server_hint(b'{"direction":"server_to_client","message":{}}')
    assert not server_hint(b'{"direction":"client_to_server","message":{}}')
    late = b'{"session":"' + b"x" * 200 + b'","direction":"server_to_client","message":{}}'
    assert not server_hint(late)  # decoded by the usual route, as before
    assert sys.get_int_max_str_digits() > 0


def test_line_owner_hint_reads_the_session_the_decoder_reads() -> None:
    """On every valid line the quick read agrees with :func:`session_hint`; where it
    cannot be sure (a second ``"session"``, an escape) it falls back to it."""
    from elicitguard.lint.parallel import line_owner_hint, session_hint

    tricky = [
        b'{"session":"a","direction":"server_to_client","message":{},"session":"b"}',
        b'{"session":"a","message":{"x":"session"},"direction":"client_to_server"}',
        b'{"session":"a","sess\\u0069on":"b","message":{},"direction":"client_to_server"}',
        b'{"direction":"server_to_client","session":"s","message":{"t":"\\\\u"}}',
        b'{"direction":"server_to_client","session":"","message":{}}',
        b'{"session":"\xc3\xa9t\xc3\xa9","direction":"server_to_client","message":{}}',
    ]
    quick = 0
    for line in [*tricky, *(x.encode("utf-8", "surrogatepass") for x in generated_lines(9, 3000))]:
        if session_hint(line) is None:
            continue  # not a JSON object: nobody's line either way (see line_owner_hint)
        assert line_owner_hint(line) == session_hint(line), line
        quick += line.startswith((b'{"session"', b'{"direction"'))
    assert quick > 1000


def test_an_envelope_direction_that_is_not_a_string_is_a_clear_error() -> None:
    """A ``direction`` holding an object or a list is a bad envelope, never a TypeError
    (found by fuzz/run.sh captures)."""
    from elicitguard.lint.envelopes import FrameError, envelope_from_dict

    for direction in ({"a": 1}, ["client_to_server"]):
        with pytest.raises(FrameError, match="direction"):
            envelope_from_dict({"direction": direction, "message": {"jsonrpc": "2.0"}})
