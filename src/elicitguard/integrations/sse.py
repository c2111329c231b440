"""An incremental Server-Sent Events parser that keeps each event's exact bytes.

Streamable HTTP carries JSON-RPC messages as SSE events. The guard must judge every event
while the stream is still open (never buffer a whole stream), and pass unchanged events on
byte for byte, so the parser returns each complete event with its raw bytes next to the
parsed fields. An event over the size limit keeps only its ``id``, ``event`` and ``retry``
fields (the data is counted and skipped), so a hostile stream costs bounded memory.
Lines end with CRLF, LF or CR, as the SSE specification allows.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SseEvent", "SseParser", "format_event"]


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One complete event: the exact bytes, and the fields that matter to MCP.

    ``data`` is ``None`` for an event without a ``data`` field (a comment or a bare id).
    ``oversize`` events have ``data=None`` and ``raw=b""``; ``size`` is what they weighed.
    """

    raw: bytes
    data: bytes | None
    event: bytes | None
    id: bytes | None
    retry: bytes | None
    oversize: bool = False
    size: int = 0


class SseParser:
    """Feed bytes in, get complete events out."""

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._buf = bytearray()
        self._reset()

    def _reset(self) -> None:
        self._raw = bytearray()
        self._data: list[bytes] = []
        self._has_data = False
        self._event: bytes | None = None
        self._id: bytes | None = None
        self._retry: bytes | None = None
        self._oversize = False
        self._size = 0
        self._mid_line = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Add bytes; return the events they complete."""
        self._buf += chunk
        return self._drain(final=False)

    def close(self) -> list[SseEvent]:
        """End of stream: a last event without its blank line is discarded (as browsers do)."""
        events = self._drain(final=True)
        self._reset()
        return events

    @property
    def pending(self) -> bool:
        """True when an event has started but is not complete."""
        return bool(self._raw) or self._oversize or bool(self._buf)

    def _drain(self, *, final: bool) -> list[SseEvent]:
        events: list[SseEvent] = []
        buf = self._buf
        start = 0
        while True:
            cr = buf.find(b"\r", start)
            lf = buf.find(b"\n", start)
            ends = [i for i in (cr, lf) if i >= 0]
            if not ends:
                break
            end = min(ends)
            if buf[end : end + 1] == b"\r":
                if end + 1 == len(buf) and not final:
                    break  # a CR at the end of a chunk may be half of a CRLF
                width = 2 if buf[end + 1 : end + 2] == b"\n" else 1
            else:
                width = 1
            line = bytes(buf[start:end])
            terminator = bytes(buf[end : end + width])
            start = end + width
            event = self._line(line, terminator)
            if event is not None:
                events.append(event)
        del buf[:start]
        if not self._oversize and len(self._raw) + len(buf) > self._max:
            self._oversize = True
            self._size = len(self._raw) + len(buf)
            self._raw = bytearray()
            self._data = []
        if self._oversize and buf and b"\r" not in buf and b"\n" not in buf:
            self._size += len(buf)
            buf.clear()
            self._mid_line = True  # the rest of this line is a fragment, not a field
        return events

    def _line(self, line: bytes, terminator: bytes) -> SseEvent | None:
        if self._mid_line:
            self._mid_line = False
            self._size += len(line) + len(terminator)
            return None
        if not line:
            if not self._raw and not self._oversize:
                return None  # blank lines between events
            event = SseEvent(
                raw=b"" if self._oversize else bytes(self._raw) + terminator,
                data=None if self._oversize or not self._has_data else b"\n".join(self._data),
                event=self._event,
                id=self._id,
                retry=self._retry,
                oversize=self._oversize,
                size=self._size + len(self._raw) + len(terminator),
            )
            self._reset()
            return event
        if self._oversize:
            self._size += len(line) + len(terminator)
        else:
            self._raw += line + terminator
            if len(self._raw) > self._max:
                self._oversize = True
                self._size = len(self._raw)
                self._raw = bytearray()
                self._data = []
        if line.startswith(b":"):
            return None
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._has_data = True
            if not self._oversize:
                self._data.append(value)
        elif name == b"event":
            self._event = value
        elif name == b"id" and b"\x00" not in value:
            self._id = value
        elif name == b"retry" and value.isdigit():
            self._retry = value
        return None


def format_event(
    data: bytes | None,
    *,
    event: bytes | None = None,
    id: bytes | None = None,
    retry: bytes | None = None,
) -> bytes:
    """Serialise one event (``data`` must hold no line breaks: compact JSON never does)."""
    out = bytearray()
    if event is not None:
        out += b"event: " + event + b"\n"
    if id is not None:
        out += b"id: " + id + b"\n"
    if retry is not None:
        out += b"retry: " + retry + b"\n"
    if data is not None:
        out += b"data: " + data + b"\n"
    return bytes(out + b"\n")
