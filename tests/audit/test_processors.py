"""The audit sink is a processor chain: stamp, redact, seal, render; the render step is
swappable."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path
from typing import Any

import orjson

from elicitguard.audit.processors import Stamp, render_json
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import load_keyring


def test_the_render_step_can_be_swapped() -> None:
    """A renderer of another format gets the redacted (and sealed) event."""

    def key_value(_logger: Any, _name: str, event: Any) -> str:
        return " ".join(f"{k}={event[k]}" for k in sorted(event))

    stream = io.StringIO()
    sink = AuditSink(stream, renderer=key_value)
    sink.write({"event": "elicitguard.test", "ts": "T", "password": "hunter2", "n": 1})
    assert stream.getvalue() == "event=elicitguard.test n=1 password=[REDACTED] ts=T\n"


def test_the_stamp_step_gives_a_time_and_keeps_the_callers() -> None:
    """An event without ``ts`` is stamped; the audit log's own ``ts`` and ``seq`` are kept."""
    stream = io.StringIO()
    sink = AuditSink(stream)
    sink.write({"event": "elicitguard.warning", "n": 1})
    sink.write({"event": "elicitguard.warning", "ts": "2026-01-02T03:04:05.000006Z", "seq": 7})
    first, second = (orjson.loads(line) for line in stream.getvalue().splitlines())
    assert first["ts"].endswith("Z")
    assert first["ts"][:4].isdigit()
    assert "seq" not in first  # numbering is the audit log's
    assert (second["ts"], second["seq"]) == ("2026-01-02T03:04:05.000006Z", 7)
    assert Stamp(lambda: "now")(None, "", {"a": 1}) == {"a": 1, "ts": "now"}


def test_records_and_events_are_redacted_without_a_reserved_key() -> None:
    """A decision record's values are scanned, an event's keys too; no marker key is written."""
    stream = io.StringIO()
    sink = AuditSink(stream)
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    sink.write_record({"event": "elicitguard.decision", "jsonrpc_id": secret, "seq": 1})
    sink.write({"event": "elicitguard.warning", "token": "t0k3n"})
    first, second = (orjson.loads(line) for line in stream.getvalue().splitlines())
    assert secret not in stream.getvalue()
    assert second["token"] == "[REDACTED]"
    assert all(not k.startswith("_") for k in (*first, *second))


def test_a_chain_seals_after_redaction(tmp_path: Path) -> None:
    """The chain value covers the redacted event (what is written)."""
    stream = io.StringIO()
    sink = AuditSink(stream)
    secret = base64.b64encode(os.urandom(32)).decode()
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"id": "k1", "secret": secret, "purposes": ["chain"]}]}))
    sink.enable_chain(load_keyring(keys, None))
    sink.write({"event": "elicitguard.warning", "password": "p"})
    record = orjson.loads(stream.getvalue())
    assert record["password"] == "[REDACTED]"
    assert {"chain", "chain_key", "seq"} <= set(record)


def test_the_default_renderer_is_compact_json() -> None:
    """render_json writes what orjson writes."""
    assert render_json(None, "", {"a": 1, "b": [1, 2]}) == '{"a":1,"b":[1,2]}'
