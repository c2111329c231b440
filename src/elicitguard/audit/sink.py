"""Audit sinks: structlog loggers that write one JSON object per line.

No global structlog configuration is touched: each sink is its own bound logger with its
own processor chain (stamp, redact, seal, render: :mod:`elicitguard.audit.processors`), so
embedding elicitguard never changes an application's logging.

A sink either writes each record as it comes (``queue=0``: the caller does all the work,
which tests and embedders reading a stream right away rely on) or hands it to a
:class:`~elicitguard.audit.writer.BackgroundWriter` (``queue=N``, what ``audit.queue``
configures for the sinks a policy opens): the caller only queues (a decision record as
text its audit log rendered, or what the record is built from), and the writer thread
runs the same chain (the redaction boundary included: nothing reaches the stream
unredacted either way) and writes many lines per ``write``. Every sink still open when the
interpreter exits is closed then, which writes what is queued and the chain checkpoint.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

from elicitguard.audit.chain import ChainState, ChainWriter, read_tail_state
from elicitguard.audit.processors import (
    Processor,
    RedactEvent,
    RedactRecord,
    Seal,
    Stamp,
    render_json,
    timestamp,
)
from elicitguard.audit.redact import Redactor
from elicitguard.audit.writer import BackgroundWriter, WhenFull
from elicitguard.base.keys import KeyRing

__all__ = ["AuditSink", "open_sink", "timestamp"]

#: What a sink queues: the chain to run (records, events, or ``None`` for a line already in
#: another format), a builder that makes the event dict in the writer (or ``None``), and
#: the event dict or the builder's arguments.
_Job = tuple[Any, Callable[..., dict[str, Any]] | None, Any]
_RENDERED = "rendered"
#: A decision record its audit log rendered, all but its time and number
#: (:meth:`AuditSink.submit_line`).
_LINE = "line"

_open_sinks: weakref.WeakSet[AuditSink] = weakref.WeakSet()


def _stamped(body: str, seq: int, ts: float) -> str:
    """A decision record's line: its time and sequence number, then the rest of it."""
    return f'{{"ts":"{timestamp(ts)}","seq":{seq},{body}'


class _LineCollector:
    """What structlog writes rendered lines to: a list the sink writes out per batch.

    structlog's ``PrintLogger`` goes through ``print`` once per record; collecting the lines
    and writing them with one ``write`` and one ``flush`` per batch is the same bytes for
    less work.
    """

    __slots__ = ("lines",)

    def __init__(self) -> None:
        self.lines: list[str] = []

    def msg(self, message: str) -> None:
        self.lines.append(message)

    info = msg  # structlog's native bound logger proxies ``msg`` to ``info``


class AuditSink:
    """Writes event dicts as JSON lines through the redaction boundary.

    Each event goes through a processor chain (:mod:`elicitguard.audit.processors`):
    redact, seal, render. Decision records (:meth:`write_record`) and other events
    (:meth:`write`) have a chain each, differing in the redaction step; ``renderer`` is the
    last step of both (default: one JSON object per line).
    """

    def __init__(
        self,
        stream: IO[str] | None,
        *,
        redactor: Redactor | None = None,
        path: str | None = None,
        renderer: Processor = render_json,
        queue: int = 0,
        when_full: WhenFull = "block",
    ) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        redact = redactor or Redactor()
        self._redact_any = RedactEvent(redact)
        self._seal = Seal()
        self.renderer = renderer
        self._out = _LineCollector()
        # bind() once (and cache_logger_on_first_use): the lazy proxy wrap_logger returns
        # would otherwise build a logger per record.
        #: Decision records run their chain directly (:meth:`_render_record`): the same
        #: processors, without a bound logger's per-call context copy and dispatch (the
        #: record is already a fresh dict of elicitguard's own keys). ``_records`` names
        #: the chain in queued jobs.
        self._redact_record = RedactRecord(redact)
        self._record_chain: tuple[Processor, ...] = (
            Stamp(),
            self._redact_record,
            self._seal,
            renderer,
        )
        self._records = structlog.wrap_logger(
            self._out, processors=list(self._record_chain), cache_logger_on_first_use=True
        ).bind()
        self._events = structlog.wrap_logger(
            self._out,
            processors=[Stamp(), RedactEvent(redact), self._seal, renderer],
            cache_logger_on_first_use=True,
        ).bind()
        self.enabled = stream is not None
        self.path = path
        #: Decision records in another format (OCSF, ECS): each record is converted, then
        #: written through the same redaction boundary (:func:`~elicitguard.audit.formats.wrap_sink`).
        self.record_format: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        #: Called with each decision record as the boundary would write it (span exporters).
        self.exporters: list[Callable[[dict[str, Any]], Any]] = []
        self._writer: BackgroundWriter | None = None
        if stream is not None and queue > 0:
            self._writer = BackgroundWriter(self._write_batch, size=queue, when_full=when_full)
            _open_sinks.add(self)

    def enable_chain(self, keys: KeyRing) -> None:
        """Seal every record from now on (``audit.chain``); continues an existing file's chain.

        Raises :class:`~elicitguard.errors.KeyConfigError` without configured keys.
        """
        state = read_tail_state(self.path) if self.path is not None else ChainState()
        self._seal.chain = ChainWriter(keys, state)

    @property
    def checkpoint_path(self) -> str | None:
        """Where the sink writes its checkpoint on close (file sinks with a chain)."""
        return self.path + ".checkpoint" if self.path is not None else None

    @property
    def background(self) -> bool:
        """True when records are written by a background writer (``audit.queue`` > 0)."""
        return self._writer is not None

    @property
    def dropped(self) -> int:
        """Records dropped on a full queue (``audit.when_full: count``); 0 otherwise."""
        return self._writer.dropped if self._writer is not None else 0

    def write(self, event: dict[str, Any]) -> None:
        """Write one record (``event`` key included in the dict)."""
        if self.enabled:
            self._submit((self._events, None, event))

    def write_record(self, event: dict[str, Any]) -> None:
        """Write a decision record built by :func:`~elicitguard.audit.records.decision_record`.

        Its keys are elicitguard's own (never a key from traffic), so only its values go
        through the secret scan; every string value still does, as with :meth:`write`.
        """
        if self.enabled:
            self._submit((self._records, None, event))

    def submit_record(self, build: Callable[..., dict[str, Any]], args: tuple[Any, ...]) -> None:
        """Write the decision record ``build(*args)`` makes, built where it is written.

        With a background writer the caller waits only for the queue; the record is built,
        redacted and rendered by the writer thread, in submission order.
        """
        if self.enabled:
            self._submit((self._records, build, args))

    def writes_lines(self) -> bool:
        """True when a decision record is written as :func:`render_json` writes it: the
        record chain's stamp, redaction and seal leave a clean, stamped record as it is
        (no other format, renderer, exporter or chain). Only then may a record be handed
        over already rendered (:meth:`submit_line`)."""
        return (
            self.renderer is render_json
            and self._seal.chain is None
            and self.record_format is None
            and not self.exporters
        )

    def submit_line(self, body: str, shape: Any, jsonrpc_id: Any, seq: int, ts: float) -> None:
        """Write a decision record rendered by its audit log, all but its time and number.

        ``body`` is the record's JSON after ``"seq"`` (``"decision_id":...}``); ``shape``
        is the record without its generated fields, and ``jsonrpc_id`` its id, for the
        redaction boundary to judge (:meth:`RedactRecord.passes_line`). The job holds only
        text and numbers, never the message: queued records keep no traffic alive, which
        kept the collector busy. A line the boundary does not pass (or a sink that no
        longer writes plain lines) is read back into the record it renders, which is
        the record the plain path builds, and takes that path: redacted as ever.
        """
        if not self.enabled:
            return
        job = (body, shape, jsonrpc_id, seq, ts)
        writer = self._writer
        if writer is not None:
            writer.put((_LINE, None, job))
            return
        with self._lock:  # written here: a clean line at once, without a batch's machinery
            stream = self._stream
            line, clean = self._judged_line(job)
            if clean and stream is not None:
                stream.write(line + "\n")
                stream.flush()
                return
            self._write_batch(((self._records, None, orjson.loads(line)),), 0, 0, strict=True)

    def _judged_line(self, job: tuple[str, Any, Any, int, float]) -> tuple[str, bool]:
        """A rendered record's whole line, and whether it may be written as it is: the sink
        still writes plain lines and the redaction boundary passes it. Otherwise the line
        is read back (``orjson.loads``) into the record the plain path would have built."""
        body, shape, jsonrpc_id, seq, ts = job
        line = _stamped(body, seq, ts)
        return line, self.writes_lines() and self._redact_record.passes_line(
            line, shape, jsonrpc_id
        )

    def write_rendered(self, record: dict[str, Any]) -> None:
        """Write a record in another format (OCSF, ECS) through the same redaction boundary."""
        if self.enabled:
            self._submit((_RENDERED, None, record))

    def flush(self) -> None:
        """Wait until every record submitted so far is written (no-op without a writer)."""
        if self._writer is not None:
            self._writer.flush()

    def _submit(self, job: _Job) -> None:
        if self._writer is not None:
            self._writer.put(job)
            return
        with self._lock:
            self._write_batch((job,), 0, 0, strict=True)

    def _write_batch(
        self, jobs: Sequence[_Job], dropped: int, dropped_total: int, *, strict: bool = False
    ) -> None:
        """Run each job's chain and write the lines with one ``write`` and ``flush``.

        ``strict`` (writing in the caller) lets a failing job raise to the caller, which
        counts it; in the writer thread a failing job is counted and reported on stderr
        (its type only) and the rest of the batch is still written.
        """
        stream = self._stream
        if stream is None:
            return
        out = self._out.lines
        if dropped:
            self._events.msg(
                "elicitguard.audit.dropped",
                ts=timestamp(),
                dropped=dropped,
                dropped_total=dropped_total,
                when_full="count",
            )
        for chain, build, payload in jobs:
            try:
                if chain is _LINE:
                    line, clean = self._judged_line(payload)
                    if clean:
                        out.append(line)
                        continue
                    chain, payload = self._records, orjson.loads(line)
                event = build(*payload) if build is not None else payload
                if chain is self._records and (self.exporters or self.record_format):
                    for export in self.exporters:
                        export(self.redact_record(event))
                    if self.record_format is not None:
                        event, chain = self.record_format(event), _RENDERED
                if chain is _RENDERED:  # identity: a bound logger's == is a Python call
                    out.append(render_json(None, "", self.redact_record(event)))
                    continue
                name = event.pop("event", "elicitguard.decision")
                if chain is self._records:
                    rendered = self._render_record(name, event)
                    if rendered is not None:
                        out.append(rendered)
                    continue
                chain.msg(name, **event)
            except Exception as exc:
                if strict:
                    out.clear()
                    raise
                print(f"elicitguard: audit record failed: {type(exc).__name__}", file=sys.stderr)
        if out:
            text = "\n".join(out) + "\n"
            out.clear()
            stream.write(text)
            stream.flush()

    def _render_record(self, name: str, event: dict[str, Any]) -> str | None:
        """A decision record through its chain, as a bound logger would run it: ``event``
        last among the keys, then stamp, redact, seal, render (``None``: a processor
        dropped it, structlog's ``DropEvent``)."""
        event["event"] = name
        result: Any = event
        try:
            for processor in self._record_chain:
                result = processor(self._out, "msg", result)
        except structlog.DropEvent:
            return None
        if not isinstance(result, str):
            msg = f"the audit renderer returned {type(result).__name__}, not a line"
            raise TypeError(msg)
        return result

    def redact_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` as the boundary would write it (for exporters that are not lines)."""
        redacted: dict[str, Any] = self._redact_any(None, "", dict(record))
        return redacted

    def close(self) -> None:
        """Write what is queued, close the stream (not stderr/stdout), write the checkpoint."""
        if self._writer is not None:
            self._writer.close()
            _open_sinks.discard(self)
        stream = self._stream
        if stream is not None and stream not in (sys.stderr, sys.stdout):
            stream.close()
        chain = self._seal.chain
        if self.enabled and chain is not None and self.checkpoint_path is not None:
            chain.checkpoint().write(self.checkpoint_path)
        self.enabled = False


def open_sink(
    kind: str, file: str | None = None, *, queue: int = 0, when_full: WhenFull = "block"
) -> AuditSink:
    """Open ``stderr``, ``file`` (appending, mode 0600) or ``none``.

    ``queue`` > 0 writes through a background writer holding up to that many records, and
    ``when_full`` says what a full queue does (``audit.queue``, ``audit.when_full``).
    """
    if kind == "none":
        return AuditSink(None)
    if kind == "stderr":
        return AuditSink(sys.stderr, queue=queue, when_full=when_full)
    if file is None:
        msg = "audit sink `file` needs `audit.file: PATH`"
        raise ValueError(msg)
    path = Path(file)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    # Fully buffered: the sink flushes once per batch of lines, not once per line.
    stream = os.fdopen(fd, "a", encoding="utf-8")
    return AuditSink(stream, path=str(path), queue=queue, when_full=when_full)


def close_open_sinks() -> None:
    """At interpreter exit: write what every background writer still holds."""
    for sink in list(_open_sinks):
        sink.close()


def _forget_parent_lines() -> None:
    """In a forked child: lines the parent's writer was collecting are the parent's."""
    for sink in list(_open_sinks):
        sink._out.lines.clear()


atexit.register(close_open_sinks)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parent_lines)
