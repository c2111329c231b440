"""Fuzz target: a raw frame through parse_frame, extract() for every era, and the engine."""

from __future__ import annotations

import io

import atheris
from _common import EXPECTED, main

with atheris.instrument_imports():
    from elicitguard import Direction, Engine, Envelope, Side, load_policy
    from elicitguard.audit.sink import AuditSink
    from elicitguard.base.keys import KeyRing
    from elicitguard.protocol.extract import extract
    from elicitguard.protocol.parsing import parse_frame
    from elicitguard.protocol.session import SessionState

ERAS = (None, "2025-06-18", "2025-11-25", "2026-07-28")
ENGINE = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())


def test_one_input(data: bytes) -> None:
    """parse_frame refuses with FrameError or returns a value extract() and evaluate() accept."""
    if not data:
        return
    selector, data = data[0], data[1:]
    try:
        value = parse_frame(data, max_bytes=1 << 20, max_depth=64)
    except EXPECTED:
        return
    direction = Direction.SERVER_TO_CLIENT if selector & 1 else Direction.CLIENT_TO_SERVER
    envelope = Envelope(value, direction, side=Side.PROXY, session=str(selector & 6))
    extract(envelope, SessionState(), ERAS[(selector >> 1) % len(ERAS)])
    decision = ENGINE.evaluate(envelope)
    assert decision.action is not None


if __name__ == "__main__":
    main(test_one_input)
