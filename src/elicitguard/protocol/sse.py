"""The one Server-Sent Events reader: the WHATWG event-stream algorithm, incremental, bytes kept.

Streamable HTTP carries JSON-RPC messages as SSE events, and a guard is only as strong as the
gap between what it reads and what a client reads. So this parser follows the HTML
standard's "event stream interpretation" (html.spec.whatwg.org, server-sent events) step by
step, and every HTTP door (the HTTP proxy, the ASGI middleware, the HAR reader) uses it:

* one leading byte-order mark (``EF BB BF``) is stripped, even when it is split across
  chunks; a second one is part of the first field name, as in browsers;
* lines end with CRLF, LF or CR, a CR at the end of one chunk and an LF at the start of the
  next being one CRLF;
* a line starting with ``:`` is a comment; a line with a colon is a field whose value loses
  one leading space; a line without a colon is a field with an empty value;
* ``data`` values are joined with LF; ``event`` sets the type; ``id`` is ignored when it
  holds NUL; ``retry`` only when it is all ASCII digits; other fields are ignored;
* a blank line dispatches; an event whose data buffer is empty (no ``data`` field) is not a
  message (its bytes are still returned, so the stream passes on unchanged).

One deliberate difference, at the end of the stream: browsers discard an event that is not
followed by a blank line (and a last line without its line end), but a lenient client may
read it, and a guard must judge everything some client could read. :meth:`SseParser.close`
therefore returns that event with ``terminated=False``; callers judge it like any other.
The HTTP guard then sends it on finished with a blank line (so every client reads the one
event that was judged) or drops it like any blocked event.

The guard must judge each event while the stream is still open and never buffer a whole
stream, and pass unchanged events on byte for byte, so each event comes with its raw bytes.
An event over the size limit keeps only its ``id``, ``event`` and ``retry`` fields (the data
is counted and skipped): a hostile stream costs bounded memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["BOM", "SseEvent", "SseParser", "format_event", "parse_events"]

#: The UTF-8 byte-order mark a stream may begin with.
BOM = b"\xef\xbb\xbf"
_EOL = re.compile(rb"[\r\n]")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One event: its exact bytes, and the fields that matter to MCP.

    ``data`` is ``None`` for an event whose data buffer stayed empty (a comment, a bare id):
    the standard dispatches no message for it. ``id`` and ``retry`` are this event's own
    fields (the last valid one of each). ``oversize`` events have ``data=None`` and
    ``raw=b""``; ``size`` is what they weighed. ``terminated`` is False for a last event the
    stream ended without a blank line after (see the module docstring).
    """

    raw: bytes
    data: bytes | None
    event: bytes | None
    id: bytes | None
    retry: bytes | None
    oversize: bool = False
    size: int = 0
    terminated: bool = True


class SseParser:
    """Feed bytes in, get complete events out; :meth:`close` at the end of the stream."""

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._buf = bytearray()
        self._started = False  # past the place where a BOM may stand
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
        if not self._started and not self._strip_bom(final=False):
            return []
        return self._drain(final=False)

    def close(self) -> list[SseEvent]:
        """End of stream: what is left, a last unterminated event included (``terminated=False``)."""
        if not self._started:
            self._strip_bom(final=True)
        events = self._drain(final=True)
        if self._raw or self._oversize:
            events.append(self._dispatch(b"", terminated=False))
        self._reset()
        self._started = False
        return events

    @property
    def pending(self) -> bool:
        """True when an event has started but is not complete."""
        return bool(self._raw) or self._oversize or bool(self._buf)

    def _strip_bom(self, *, final: bool) -> bool:
        """Drop one leading BOM; False while the bytes so far could still be its start."""
        buf = self._buf
        if buf.startswith(BOM):
            del buf[:3]
        elif not final and len(buf) < 3 and BOM.startswith(bytes(buf)):
            return False
        self._started = True
        return True

    def _drain(self, *, final: bool) -> list[SseEvent]:
        events: list[SseEvent] = []
        buf = self._buf
        start = 0
        size = len(buf)
        while True:
            found = _EOL.search(buf, start)
            if found is None:
                break
            end = found.start()
            if buf[end] == 0x0D:
                if end + 1 == size and not final:
                    break  # a CR at the end of a chunk may be half of a CRLF
                width = 2 if end + 1 < size and buf[end + 1] == 0x0A else 1
            else:
                width = 1
            line = bytes(buf[start:end])
            terminator = bytes(buf[end : end + width])
            start = end + width
            event = self._line(line, terminator)
            if event is not None:
                events.append(event)
        if final and start < size:
            # A last line without its line end: browsers drop it, a lenient client may not.
            self._line(bytes(buf[start:]), b"")
            start = size
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

    def _dispatch(self, terminator: bytes, *, terminated: bool) -> SseEvent:
        event = SseEvent(
            raw=b"" if self._oversize else bytes(self._raw) + terminator,
            data=None if self._oversize or not self._has_data else b"\n".join(self._data),
            event=self._event,
            id=self._id,
            retry=self._retry,
            oversize=self._oversize,
            size=self._size + len(self._raw) + len(terminator),
            terminated=terminated,
        )
        self._reset()
        return event

    def _line(self, line: bytes, terminator: bytes) -> SseEvent | None:
        if self._mid_line:
            self._mid_line = False
            self._size += len(line) + len(terminator)
            return None
        if not line:
            if not self._raw and not self._oversize:
                return None  # blank lines between events
            return self._dispatch(terminator, terminated=True)
        if self._oversize:
            self._size += len(line) + len(terminator)
        else:
            self._raw += line + terminator
            if len(self._raw) > self._max:
                self._oversize = True
                self._size = len(self._raw)
                self._raw = bytearray()
                self._data = []
        if line[0] == 0x3A:  # ":" a comment
            return None
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._has_data = True
            if not self._oversize:
                self._data.append(value)
        elif name == b"event":
            self._event = value
        elif name == b"id":
            if b"\x00" not in value:
                self._id = value
        elif name == b"retry" and value.isdigit() and value.isascii():
            self._retry = value
        return None


def parse_events(data: bytes, *, max_bytes: int | None = None) -> list[SseEvent]:
    """Every event of a whole body (an unterminated last one included, ``terminated=False``)."""
    parser = SseParser(max_bytes if max_bytes is not None else len(data) + 1)
    return parser.feed(data) + parser.close()


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
