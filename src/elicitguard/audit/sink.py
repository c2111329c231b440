"""Audit sinks: structlog loggers that write one JSON object per line.

No global structlog configuration is touched: each sink is its own bound logger with its
own processor chain (timestamp, redaction, JSON), so embedding elicitguard never changes an
application's logging.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

from elicitguard.audit.chain import ChainState, ChainWriter, read_tail_state
from elicitguard.audit.redact import SENSITIVE_KEYS, Redactor
from elicitguard.base.keys import KeyRing

__all__ = ["AuditSink", "open_sink"]


#: One compiled alternation of every sensitive key followed by a non-null value: a single
#: scan of the lowered line instead of one substring search per key (issue 9, hot path).
_SENSITIVE_KEY = re.compile(
    rb'"(?:'
    + b"|".join(re.escape(k.encode()) for k in sorted(SENSITIVE_KEYS, key=len, reverse=True))
    + rb')":(?!null)'
)


def _has_sensitive_key(line: bytes) -> bool:
    """A cheap look for a sensitive key in a rendered line (orjson writes no spaces)."""
    return _SENSITIVE_KEY.search(line.lower()) is not None


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


#: Fields of a decision record that elicitguard generates itself (times, counters, ids,
#: keyed hashes): left out of the key under which a record's scan verdict is remembered.
_VOLATILE = frozenset({"ts", "seq", "decision_id", "duration_us", "session", "jsonrpc_id"})
#: How many clean decision-record shapes are remembered, and the largest one remembered.
_CLEAN_LIMIT = 4096
_CLEAN_MAX_BYTES = 8192
#: The reserved event key by which :meth:`AuditSink.write_record` marks a decision record.
_TRUSTED = "_eg_trusted_keys"


class AuditSink:
    """Writes event dicts as JSON lines through the redaction boundary.

    The boundary works on the rendered line, which keeps it cheap on the hot path: one
    search for sensitive key names and one scan of the whole line for recognised secrets.
    Only when either finds something is the event walked key by key.

    Decision records (:meth:`write_record`) are built by elicitguard from metadata, so
    their keys are its own and the key search is skipped; and since consecutive records
    mostly differ only in generated fields (time, sequence, ids, duration), the verdict of
    the secret scan is remembered per record with those fields left out: a record that
    repeats a clean shape is not scanned again (a string JSON-RPC id, the one volatile
    field that comes from traffic, is still scanned each time).
    """

    def __init__(
        self,
        stream: IO[str] | None,
        *,
        redactor: Redactor | None = None,
        path: str | None = None,
    ) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._redact = redactor or Redactor()
        writer = _LineWriter(stream) if stream is not None else None
        # bind() once: the lazy proxy wrap_logger returns would build a logger per record.
        self._logger = structlog.wrap_logger(writer, processors=[self._render]).bind()
        self.enabled = stream is not None
        self.path = path
        self._chain: ChainWriter | None = None
        self._clean: OrderedDict[bytes, None] = OrderedDict()

    def enable_chain(self, keys: KeyRing) -> None:
        """Seal every record from now on (``audit.chain``); continues an existing file's chain.

        Raises :class:`~elicitguard.errors.KeyConfigError` without configured keys.
        """
        state = read_tail_state(self.path) if self.path is not None else ChainState()
        self._chain = ChainWriter(keys, state)

    @property
    def checkpoint_path(self) -> str | None:
        """Where the sink writes its checkpoint on close (file sinks with a chain)."""
        return self.path + ".checkpoint" if self.path is not None else None

    def _render(self, _logger: Any, _name: str, event: Any) -> str:
        trusted = bool(event.pop(_TRUSTED, False))
        line = orjson.dumps(event, default=str)
        if trusted:
            unsafe = self._record_has_secret(event, line)
        else:
            unsafe = _has_sensitive_key(line) or self._redact.finds_secret(line.decode("utf-8"))
        if unsafe:
            event = self._redact(event)
            line = orjson.dumps(event, default=str)
        if self._chain is not None:  # sealed after redaction: the MAC covers what is written
            line = orjson.dumps(self._chain.seal(event), default=str)
        return line.decode("utf-8")

    def _record_has_secret(self, event: dict[str, Any], line: bytes) -> bool:
        """The secret scan of a decision record, remembered per clean shape."""
        jsonrpc_id = event.get("jsonrpc_id")
        if isinstance(jsonrpc_id, str) and self._redact.finds_secret(jsonrpc_id):
            return True
        try:
            shape = orjson.dumps({k: v for k, v in event.items() if k not in _VOLATILE})
        except TypeError:
            shape = b""
        if shape and shape in self._clean:
            self._clean.move_to_end(shape)
            return False
        if self._redact.finds_secret(line.decode("utf-8")):
            return True
        if shape and len(shape) <= _CLEAN_MAX_BYTES:
            self._clean[shape] = None
            if len(self._clean) > _CLEAN_LIMIT:
                self._clean.popitem(last=False)
        return False

    def write(self, event: dict[str, Any]) -> None:
        """Write one record (``event`` key included in the dict)."""
        if not self.enabled:
            return
        name = event.pop("event", "elicitguard.decision")
        with self._lock:
            self._logger.msg(name, **event)

    def write_record(self, event: dict[str, Any]) -> None:
        """Write a decision record built by :func:`~elicitguard.audit.records.decision_record`.

        Its keys are elicitguard's own (never a key from traffic), so only its values go
        through the secret scan; every string value still does, as with :meth:`write`.
        """
        if not self.enabled:
            return
        name = event.pop("event", "elicitguard.decision")
        event[_TRUSTED] = True
        with self._lock:
            self._logger.msg(name, **event)

    def close(self) -> None:
        stream = self._stream
        if stream is not None and stream not in (sys.stderr, sys.stdout):
            stream.close()
        if self.enabled and self._chain is not None and self.checkpoint_path is not None:
            self._chain.checkpoint().write(self.checkpoint_path)
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
