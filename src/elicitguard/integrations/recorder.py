"""``--record FILE``: live traffic as envelope JSONL that ``elicitguard lint`` reads back.

One line per message each peer sent (what arrived, before the guard acted), in the format
of :mod:`elicitguard.lint.envelopes`. The file is created with mode 0600 (an existing file is
narrowed to 0600 too). ``authorization``, ``proxy-authorization``, ``cookie`` and
``set-cookie`` headers are never written; every other value passes through the one
redaction boundary (:class:`~elicitguard.audit.redact.Redactor`), unless the operator asked
for ``--record-raw`` explicitly, for debugging on a machine they trust. Session ids (the
envelope's ``session`` and the ``Mcp-Session-Id`` header) are bearers of a session: they are
always replaced by a hash keyed per recording, so lint can still group messages by session.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from elicitguard.audit.redact import Redactor
from elicitguard.integrations.actions import dumps
from elicitguard.protocol.envelope import Direction, Transport

__all__ = ["DROPPED_HEADERS", "Recorder"]

#: Headers that are left out of recordings entirely, whatever the mode.
DROPPED_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
#: Headers whose value is a bearer of the session: recorded as a keyed hash, whatever the mode.
HASHED_HEADERS = frozenset({"mcp-session-id"})


class Recorder:
    """Appends envelopes to a file; safe to call from several threads."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        raw: bool = False,
        transport: Transport | None = None,
        server: str | None = None,
    ) -> None:
        fd = os.open(Path(path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)
        self._stream: IO[bytes] = os.fdopen(fd, "ab", buffering=0)
        self._lock = threading.Lock()
        self._redact = None if raw else Redactor()
        self._key = os.urandom(16)  # session ids hash alike within one recording, only
        self.transport = transport
        self.server = server
        self.lines = 0

    def record(
        self,
        message: Mapping[str, Any],
        direction: Direction,
        *,
        session: str | None = None,
        headers: Mapping[str, str] | None = None,
        protocol_version: str | None = None,
    ) -> None:
        """Write one envelope line (a closed recorder ignores the call)."""
        envelope: dict[str, Any] = {
            "direction": direction.value,
            "message": message,
            "ts": dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z"),
        }
        if self.transport is not None:
            envelope["transport"] = self.transport.value
        if self.server is not None:
            envelope["server"] = self.server
        if session is not None:
            envelope["session"] = self._hash(session)
        if protocol_version is not None:
            envelope["protocol_version"] = protocol_version
        if headers:
            kept = {
                k.lower(): self._hash(v) if k.lower() in HASHED_HEADERS else v
                for k, v in headers.items()
                if k.lower() not in DROPPED_HEADERS
            }
            if kept:
                envelope["headers"] = kept
        if self._redact is not None:
            # The envelope's own fields are metadata; the message and headers are traffic.
            envelope["message"] = self._redact.keep_shape(envelope["message"])
            if "headers" in envelope:
                envelope["headers"] = self._redact(envelope["headers"])
        line = dumps(envelope) + b"\n"
        with self._lock:
            if self._stream.closed:
                return
            self._stream.write(line)
            self.lines += 1

    def _hash(self, value: str) -> str:
        """A session id is a bearer of the session: keep only a keyed hash of it."""
        digest = hmac.new(self._key, value.encode("utf-8", "surrogatepass"), hashlib.sha256)
        return "s-" + digest.hexdigest()[:24]

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._stream.close()
