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
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

from elicitguard.audit.chain import ChainState, ChainWriter, read_tail_state
from elicitguard.audit.redact import SENSITIVE_KEYS, Redactor
from elicitguard.identity.keys import KeyRing

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


class AuditSink:
    """Writes event dicts as JSON lines through the redaction boundary.

    The boundary works on the rendered line, which keeps it cheap on the hot path: one
    search for sensitive key names and one scan of the whole line for recognised secrets.
    Only when either finds something is the event walked key by key.
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
        printer = structlog.PrintLogger(stream) if stream is not None else None  # type: ignore[arg-type]
        self._logger = structlog.wrap_logger(printer, processors=[self._render])
        self.enabled = stream is not None
        self.path = path
        self._chain: ChainWriter | None = None

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
        line = orjson.dumps(event, default=str)
        if _has_sensitive_key(line) or self._redact.finds_secret(line.decode("utf-8")):
            event = self._redact(event)
            line = orjson.dumps(event, default=str)
        if self._chain is not None:  # sealed after redaction: the MAC covers what is written
            line = orjson.dumps(self._chain.seal(event), default=str)
        return line.decode("utf-8")

    def write(self, event: dict[str, Any]) -> None:
        """Write one record (``event`` key included in the dict)."""
        if not self.enabled:
            return
        name = event.pop("event", "elicitguard.decision")
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
