"""Holding a background audit writer still, so a test sets up its queue rather than racing it."""

from __future__ import annotations

import threading
from typing import Any

from elicitguard.audit.sink import AuditSink


def park(sink: AuditSink) -> tuple[threading.Event, threading.Event]:
    """Submit a job that holds the writer until released; returns (entered, release)."""
    entered, release = threading.Event(), threading.Event()

    def hold() -> dict[str, Any]:
        entered.set()
        release.wait()
        return {"event": "test.parked"}

    sink.submit_record(hold, ())
    assert entered.wait(10)
    return entered, release
