"""Newline-delimited frames out of a byte stream, never holding more than a limit.

The stdio proxy reads pipes in large chunks and wants the frames each chunk completes with
as little work as possible per frame: :meth:`LineSplitter.feed` returns ordinary lines as
plain ``bytes`` (no per-line object), and only a line over the limit as a :class:`Line`
(its head, to recover an id, and its full size). :attr:`LineSplitter.whole` tells the
caller that the chunk was exactly its lines, so forwarding all of them unchanged may send
the chunk itself. :class:`LineReader` is the same for an asyncio stream, one line at a time.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Protocol

__all__ = ["HEAD_BYTES", "Line", "LineReader", "LineSplitter"]

#: How much of an oversized line is kept (enough to recover its JSON-RPC id).
HEAD_BYTES = 8192
_CHUNK = 1 << 18


class ByteReader(Protocol):
    """What :class:`LineReader` reads from: ``asyncio.StreamReader`` fits."""

    async def read(self, n: int = -1) -> bytes: ...


@dataclass(frozen=True, slots=True)
class Line:
    """One line read: its bytes (only the head when ``oversize``) and its full size."""

    data: bytes
    oversize: bool
    size: int


class LineSplitter:
    """Splits fed bytes into non-blank lines without holding more than ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._buf = bytearray()
        self._skipping = False
        self._head = b""
        self._skipped = 0
        #: True when the last :meth:`feed` returned exactly its chunk: every line in order,
        #: each with its newline, nothing blank, oversized or carried over.
        self.whole = False

    def feed(self, chunk: bytes) -> list[bytes | Line]:
        """The lines ``chunk`` completes (a partial tail waits for more)."""
        if not self._buf and not self._skipping and chunk.endswith(b"\n"):
            # The usual case: whole lines in one read, split without a copy into the buffer.
            parts = chunk.split(b"\n")
            parts.pop()
            out: list[bytes | Line] = []
            whole = True
            for data in parts:
                if len(data) > self._max:
                    out.append(Line(data[:HEAD_BYTES], True, len(data)))
                    whole = False
                elif data.strip():
                    out.append(data)
                else:
                    whole = False
            self.whole = whole
            return out
        self.whole = False
        self._buf += chunk
        lines: list[bytes | Line] = []
        while (line := self._take()) is not None:
            if isinstance(line, Line) or line.strip():
                lines.append(line)
        return lines

    def finish(self) -> bytes | Line | None:
        """What is left at the end of the stream (a last line without newline), if anything."""
        self.whole = False
        if self._skipping:
            self._skipping = False
            return Line(self._head, True, self._skipped)
        data = bytes(self._buf)
        self._buf.clear()
        return data if data.strip() else None

    def _take(self) -> bytes | Line | None:
        newline = self._buf.find(b"\n")
        if newline < 0:
            if self._skipping:
                self._skipped += len(self._buf)
                self._buf.clear()
            elif len(self._buf) > self._max:
                self._skipping = True
                self._head = bytes(self._buf[:HEAD_BYTES])
                self._skipped = len(self._buf)
                self._buf.clear()
            return None
        data = bytes(self._buf[:newline])
        del self._buf[: newline + 1]
        if self._skipping:
            self._skipping = False
            return Line(self._head, True, self._skipped + len(data))
        if len(data) > self._max:
            return Line(data[:HEAD_BYTES], True, len(data))
        return data


class LineReader:
    """Lines from an asyncio byte stream, one at a time, as :class:`Line` objects."""

    def __init__(self, stream: ByteReader, max_bytes: int) -> None:
        self._stream = stream
        self._splitter = LineSplitter(max_bytes)
        self._ready: deque[bytes | Line] = deque()

    async def next(self) -> Line | None:
        """The next non-blank line; ``None`` at the end of the stream."""
        while not self._ready:
            chunk = await self._stream.read(_CHUNK)
            if not chunk:
                last = self._splitter.finish()
                return None if last is None else _as_line(last)
            self._ready.extend(self._splitter.feed(chunk))
        return _as_line(self._ready.popleft())


def _as_line(line: bytes | Line) -> Line:
    return line if isinstance(line, Line) else Line(line, False, len(line))
