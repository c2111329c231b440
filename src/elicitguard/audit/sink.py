"""Audit sinks: structlog loggers that write one JSON object per line.

No global structlog configuration is touched: each sink is its own bound logger with its
own processor chain (stamp, redact, seal, render: :mod:`elicitguard.audit.processors`), so
embedding elicitguard never changes an application's logging.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import IO, Any

import structlog

from elicitguard.audit.chain import ChainState, ChainWriter, read_tail_state
from elicitguard.audit.processors import (
    Processor,
    RedactEvent,
    RedactRecord,
    Seal,
    Stamp,
    render_json,
)
from elicitguard.audit.redact import Redactor
from elicitguard.base.keys import KeyRing

__all__ = ["AuditSink", "open_sink"]


class _LineWriter:
    """What structlog writes rendered lines to: one line and a flush per record.

    structlog's ``PrintLogger`` goes through ``print``; writing the line ourselves is the
    same bytes for less work on the hot path.
    """

    __slots__ = ("_stream",)

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def msg(self, message: str) -> None:
        self._stream.write(message + "\n")
        self._stream.flush()

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
    ) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        redact = redactor or Redactor()
        self._redact_any = RedactEvent(redact)
        self._seal = Seal()
        self.renderer = renderer
        writer = _LineWriter(stream) if stream is not None else None
        # bind() once: the lazy proxy wrap_logger returns would build a logger per record.
        self._records = structlog.wrap_logger(
            writer, processors=[Stamp(), RedactRecord(redact), self._seal, renderer]
        ).bind()
        self._events = structlog.wrap_logger(
            writer, processors=[Stamp(), RedactEvent(redact), self._seal, renderer]
        ).bind()
        self.enabled = stream is not None
        self.path = path

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

    def write(self, event: dict[str, Any]) -> None:
        """Write one record (``event`` key included in the dict)."""
        if not self.enabled:
            return
        name = event.pop("event", "elicitguard.decision")
        with self._lock:
            self._events.msg(name, **event)

    def write_record(self, event: dict[str, Any]) -> None:
        """Write a decision record built by :func:`~elicitguard.audit.records.decision_record`.

        Its keys are elicitguard's own (never a key from traffic), so only its values go
        through the secret scan; every string value still does, as with :meth:`write`.
        """
        if not self.enabled:
            return
        name = event.pop("event", "elicitguard.decision")
        with self._lock:
            self._records.msg(name, **event)

    def write_rendered(self, record: dict[str, Any]) -> None:
        """Write a record in another format (OCSF, ECS) through the same redaction boundary."""
        if not self.enabled or self._stream is None:
            return
        line = render_json(None, "", self.redact_record(record))
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def redact_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` as the boundary would write it (for exporters that are not lines)."""
        redacted: dict[str, Any] = self._redact_any(None, "", dict(record))
        return redacted

    def close(self) -> None:
        stream = self._stream
        if stream is not None and stream not in (sys.stderr, sys.stdout):
            stream.close()
        chain = self._seal.chain
        if self.enabled and chain is not None and self.checkpoint_path is not None:
            chain.checkpoint().write(self.checkpoint_path)
        self.enabled = False


def open_sink(kind: str, file: str | None = None) -> AuditSink:
    """Open ``stderr``, ``file`` (appending, mode 0600) or ``none``."""
    if kind == "none":
        return AuditSink(None)
    if kind == "stderr":
        return AuditSink(sys.stderr)
    if file is None:
        msg = "audit sink `file` needs `audit.file: PATH`"
        raise ValueError(msg)
    path = Path(file)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    return AuditSink(os.fdopen(fd, "a", encoding="utf-8", buffering=1), path=str(path))
