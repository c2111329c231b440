"""Duplicate-key smuggling: a frame whose first copy of a key is elicitation, last ordinary.

orjson, ``JSON.parse`` and Python's json keep the last copy of a repeated key; a client
whose parser keeps the first could be shown an elicitation the guard read as ``ping``. Such
frames are refused (EG904) on every path that has the frame's bytes: the engine with
``raw``, ``evaluate`` given the parsed object, the linter's fast lane; frames that repeat a key but mention
nothing elicitation-shaped stay on the fast path.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from elicitguard import Action, Direction, Engine, Envelope, Side
from elicitguard.lint.runner import Linter
from elicitguard.protocol.parsing import may_hide_elicitation
from elicitguard.testing import quiet_engine

ASK = (
    b'"method":"elicitation/create","params":{"mode":"url","message":"m",'
    b'"url":"https://evil.example/login","elicitationId":"e"}'
)
SMUGGLED = b'{"jsonrpc":"2.0","id":9,' + ASK + b',"method":"ping","params":{}}'
ESCAPED = b'{"jsonrpc":"2.0","id":9,"\\u006dethod":"elicitation/create","method":"ping"}'
HARMLESS = b'{"jsonrpc":"2.0","id":9,"method":"ping","method":"ping"}'


def _engine() -> Engine:
    return quiet_engine()


def test_the_marker_scan_needs_both_a_repeat_and_a_marker() -> None:
    """Smuggled and escaped frames are caught; a repeat without markers is not."""
    assert may_hide_elicitation(SMUGGLED)
    assert may_hide_elicitation(ESCAPED)
    assert not may_hide_elicitation(HARMLESS)
    assert not may_hide_elicitation(SMUGGLED.replace(b',"method":"ping","params":{}', b""))


def test_evaluate_with_raw_blocks_the_smuggled_frame() -> None:
    """The parsed message reads as ping; with the bytes, the engine blocks it (EG904)."""
    engine = _engine()
    message = orjson.loads(SMUGGLED)
    assert message["method"] == "ping"
    decision = engine.evaluate(
        Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.PROXY, raw=SMUGGLED)
    )
    assert decision.action is Action.BLOCK
    assert [f.code for f in decision.findings] == ["EG904"]
    decision = engine.evaluate(
        orjson.loads(ESCAPED), Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="s", raw=ESCAPED
    )
    assert [f.code for f in decision.findings] == ["EG904"]


def test_a_harmless_repeat_stays_on_the_fast_path() -> None:
    """Repeating a key without anything elicitation-shaped is forwarded as before."""
    decision = _engine().evaluate(
        orjson.loads(HARMLESS),
        Direction.SERVER_TO_CLIENT,
        side=Side.PROXY,
        session="s",
        raw=HARMLESS,
    )
    assert decision.fast_path


def test_the_linter_reports_the_smuggled_frame(tmp_path: Path) -> None:
    """A capture line carrying the frame is reported, not waved through the fast lane."""
    capture = tmp_path / "capture.jsonl"
    line = b'{"direction":"server_to_client","session":"s","message":' + SMUGGLED + b"}\n"
    capture.write_bytes(line)
    result = Linter(_engine(), input_format="envelope").lint_paths([capture])
    assert [f.finding.code for f in result.findings] == ["EG904"]
