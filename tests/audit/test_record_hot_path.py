"""What the audit record's hot path takes as shortcuts writes what the plain path wrote.

Timestamps formatted once per second read as ``datetime`` formats them; decision ids are
24 random hex digits, never repeated; the background writer, which gathers records before
writing, still writes every record without being asked, and at once when flushed.
"""

from __future__ import annotations

import datetime as dt
import io
import random
import time

from elicitguard.audit.processors import timestamp
from elicitguard.audit.sink import AuditSink
from elicitguard.engine.decision_ids import new_decision_id


def _datetime_text(at: float) -> str:
    moment = dt.datetime.fromtimestamp(at, dt.UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def test_timestamps_read_as_datetime_writes_them() -> None:
    rng = random.Random(7)
    samples = [0.0, 1.0, 1.9999995, 1.0000005, -0.5, 1_700_000_000.0000005]
    samples += [rng.uniform(-1e6, 4e9) for _ in range(20_000)]
    samples += [rng.randint(0, 10**9) + rng.randint(0, 10**6) / 1e6 + 5e-7 for _ in range(5_000)]
    for at in samples:
        assert timestamp(at) == _datetime_text(at), at
    now = timestamp()
    assert now.endswith("Z")
    assert len(now) == len("2026-01-02T03:04:05.000006Z")


def test_decision_ids_are_random_hex_and_unique() -> None:
    ids = [new_decision_id() for _ in range(2_000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 24 and int(i, 16) >= 0 for i in ids)


def test_queued_records_are_written_unasked_and_at_once_when_flushed() -> None:
    stream = io.StringIO()
    sink = AuditSink(stream, queue=8192)
    try:
        sink.write({"event": "first"})
        deadline = time.monotonic() + 5
        while "first" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert "first" in stream.getvalue(), "a lone record must be written without a flush"
        for i in range(10):
            sink.write({"event": "more", "i": i})
        sink.flush()
        assert stream.getvalue().count('"more"') == 10
    finally:
        sink.close()


def test_a_small_queue_never_stalls() -> None:
    stream = io.StringIO()
    sink = AuditSink(stream, queue=2)
    try:
        started = time.monotonic()
        for i in range(200):
            sink.write({"event": "e", "i": i})
        sink.flush()
        assert stream.getvalue().count("\n") == 200
        assert time.monotonic() - started < 10
    finally:
        sink.close()
