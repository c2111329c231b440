"""The background audit writer: nothing lost on close or at exit, full-queue policies both
ways, the redaction boundary kept, and the ``audit.queue`` / ``audit.when_full`` knobs.

The writer is parked on a first job that waits for an event, so "the queue is full" is a
state the test sets up, not a race it hopes to win; nothing here asserts a duration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.audit.writer_support import park as _park

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.records import AuditLog
from elicitguard.audit.sink import AuditSink, open_sink
from elicitguard.base.keys import KeyRing
from elicitguard.errors import PolicyError

TOKEN = "ghp_" + "Zq8bX2vN4kL7mP1sR6tY9wA3cE5gH0jK2dF4"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _form(request_id: int) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    params = {"mode": "form", "message": "Your name?", "requestedSchema": schema}
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params}


def test_no_record_is_lost_on_close(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    sink = open_sink("file", str(log), queue=4)  # far smaller than the burst: puts block
    engine = Engine(load_policy(environ={}), audit=sink, keys=KeyRing.random())
    assert sink.background
    for n in range(300):
        engine.evaluate(Envelope(_form(n), Direction.SERVER_TO_CLIENT, side=Side.PROXY))
    engine.close()
    records = [r for r in _lines(log) if r["event"] == "elicitguard.decision"]
    assert [r["jsonrpc_id"] for r in records] == list(range(300))
    assert [r["seq"] for r in records] == sorted(r["seq"] for r in records)


def test_block_waits_for_room_and_loses_nothing(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    sink = open_sink("file", str(log), queue=2, when_full="block")
    _, release = _park(sink)
    audit = AuditLog(sink, KeyRing.random())
    done = threading.Event()

    def burst() -> None:
        for n in range(5):
            audit.event("test.event", n=n)
        done.set()

    writer = threading.Thread(target=burst)
    writer.start()
    assert not done.wait(0.3)  # two fit; the third put waits for the parked writer
    release.set()
    writer.join(10)
    assert done.is_set()
    sink.close()
    events = _lines(log)
    assert [e.get("n") for e in events if e["event"] == "test.event"] == [0, 1, 2, 3, 4]
    assert sink.dropped == 0


def test_count_drops_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    sink = open_sink("file", str(log), queue=3, when_full="count")
    _, release = _park(sink)
    audit = AuditLog(sink, KeyRing.random())
    for n in range(10):
        audit.event("test.event", n=n)  # never waits: three queued, seven counted
    assert sink.dropped == 7
    release.set()
    sink.close()
    events = _lines(log)
    assert [e.get("n") for e in events if e["event"] == "test.event"] == [0, 1, 2]
    reports = [e for e in events if e["event"] == "elicitguard.audit.dropped"]
    assert [(r["dropped"], r["dropped_total"], r["when_full"]) for r in reports] == [
        (7, 7, "count")
    ]


def test_the_writer_redacts_before_writing(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    sink = open_sink("file", str(log), queue=16)
    audit = AuditLog(sink, KeyRing.random())
    audit.event("test.event", detail=f"token {TOKEN}", password="hunter2")
    message = _form(1)
    message["params"]["message"] = f"Paste {TOKEN} here"
    engine = Engine(load_policy(environ={}), audit=sink, keys=KeyRing.random())
    engine.evaluate(Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.PROXY))
    sink.close()
    text = log.read_text()
    assert len(text.splitlines()) == 2
    assert TOKEN not in text
    assert "hunter2" not in text


def test_records_queued_at_exit_are_written(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    program = f"""
from elicitguard.audit.records import AuditLog
from elicitguard.audit.sink import open_sink
from elicitguard.base.keys import KeyRing
audit = AuditLog(open_sink("file", {str(log)!r}, queue=64), KeyRing.random())
for n in range(2000):
    audit.event("test.event", n=n)
"""  # the sink is never closed: the exit hook writes what is queued
    subprocess.run([sys.executable, "-c", program], check=True, timeout=120)
    assert [e["n"] for e in _lines(log)] == list(range(2000))


def test_policy_sinks_use_the_configured_writer(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    layer = {"audit": {"sink": "file", "file": str(log), "queue": 5, "when_full": "count"}}
    engine = Engine(load_policy(environ={}, extra_layers=[layer]), keys=KeyRing.random())
    sink = engine.audit.sink
    assert sink.background
    engine.close()
    inline = {"audit": {"sink": "file", "file": str(log), "queue": 0}}
    engine = Engine(load_policy(environ={}, extra_layers=[inline]), keys=KeyRing.random())
    assert not engine.audit.sink.background
    engine.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_writes_its_own_records_once(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    sink = open_sink("file", str(log), queue=16)
    audit = AuditLog(sink, KeyRing.random())
    audit.event("test.parent", n=0)
    sink.flush()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            audit.event("test.child", n=1)
            sink.close()
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    audit.event("test.parent", n=2)
    sink.close()
    events = sorted((e["event"], e["n"]) for e in _lines(log))
    assert events == [("test.child", 1), ("test.parent", 0), ("test.parent", 2)]


@pytest.mark.parametrize("audit", [{"queue": -1}, {"queue": "big"}, {"when_full": "drop"}])
def test_bad_writer_settings_are_policy_errors(audit: dict[str, Any]) -> None:
    with pytest.raises(PolicyError):
        load_policy(environ={}, extra_layers=[{"audit": audit}])


def test_writer_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="when_full"):
        AuditSink(sys.stderr, queue=4, when_full="drop")  # type: ignore[arg-type]
