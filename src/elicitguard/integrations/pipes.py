"""Blocking pipe I/O for the stdio proxy's pump threads.

Why threads and blocking calls: on small VMs the event loop's per-frame cost (selector
wake-up, futures, task steps, ``drain``) was about 200 µs per proxied round trip, more than
the proxy's own checks; a thread blocked in ``poll``/``read`` costs about 20 µs. Reads
``poll`` the pipe together with a wake-up pipe so a pump can always be told to stop. A
:class:`FdSink` writes whole frames with one ``write`` each (one writer at a time);
a :class:`StreamSink` feeds an asyncio writer from a thread through its loop, with
backpressure, for clients given as asyncio streams (embedding, tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import threading
from collections.abc import Callable
from typing import Protocol

__all__ = ["CHUNK", "ByteWriter", "FdSink", "Sink", "StreamSink", "read_chunks"]

#: Bytes asked of one ``read``: a pipe returns what it holds (64 KiB by default), a file more.
CHUNK = 1 << 18


class ByteWriter(Protocol):
    """An asyncio-style writer: ``asyncio.StreamWriter`` fits."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


class Sink(Protocol):
    """A destination for whole frames: ``send`` from a pump thread, ``asend`` from the loop.

    Both return False when the reader is gone.
    """

    closed: bool

    def send(self, data: bytes) -> bool: ...

    async def asend(self, data: bytes) -> bool: ...

    def close(self) -> None: ...


def read_chunks(
    fd: int, wake: int, stopping: Callable[[], bool], on_chunk: Callable[[bytes], bool]
) -> bool:
    """Read ``fd`` until its end, handing each chunk to ``on_chunk`` (True: stop reading).

    Returns True at the end of the stream, False when ``on_chunk`` or ``wake`` (readable:
    the proxy is stopping) ended it. A descriptor ``poll`` cannot watch (a tty on macOS) is
    read without it, and so is everything where there is no ``poll`` (then a stopping proxy
    leaves the blocked reader to the end of the process).
    """
    pollable = hasattr(select, "poll")  # not on Windows: plain blocking reads there
    if pollable:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
        poller.register(wake, select.POLLIN)
        poll = poller.poll
    read = os.read
    while True:
        if pollable:
            events = poll()
            if len(events) != 1 or events[0][0] != fd:
                if stopping() or any(f == wake for f, _ in events):
                    return False
                if any(f == fd and e & select.POLLNVAL for f, e in events):
                    pollable = False
            elif events[0][1] & select.POLLNVAL:
                pollable = False
        try:
            chunk = read(fd, CHUNK)
        except BlockingIOError:  # somebody made the descriptor non-blocking
            continue
        except OSError:
            return True
        if not chunk:
            return True
        if on_chunk(chunk):
            return False


class FdSink:
    """Blocking writes of whole frames to a file descriptor, one writer at a time."""

    def __init__(self, fd: int, *, owned: bool) -> None:
        self.fd = fd
        self.closed = False
        self._owned = owned
        self._lock = threading.Lock()
        self._close_asked = False

    def send(self, data: bytes) -> bool:
        with self._lock:
            if self.closed:
                return False
            try:
                written = os.write(self.fd, data)
                if written != len(data):
                    self._rest(memoryview(data)[written:])
            except OSError:  # EPIPE, a closed descriptor: the reader is gone
                self._close()
                return False
            finally:
                if self._close_asked:
                    self._close()
            return True

    def _rest(self, view: memoryview) -> None:
        while view:
            try:
                view = view[os.write(self.fd, view) :]
            except BlockingIOError:  # somebody made the descriptor non-blocking
                select.select([], [self.fd], [], 1.0)

    async def asend(self, data: bytes) -> bool:
        return await asyncio.to_thread(self.send, data)

    def close(self) -> None:
        """Close now, or right after the write in progress (never blocks the caller)."""
        if self._lock.acquire(blocking=False):
            try:
                self._close()
            finally:
                self._lock.release()
        else:
            self._close_asked = True

    def _close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._owned:
                with contextlib.suppress(OSError):
                    os.close(self.fd)


class StreamSink:
    """An asyncio writer fed from pump threads through its event loop (with backpressure)."""

    def __init__(self, writer: ByteWriter, loop: asyncio.AbstractEventLoop) -> None:
        self.closed = False
        self._writer = writer
        self._loop = loop

    def send(self, data: bytes) -> bool:
        if self.closed:
            return False
        try:
            future = asyncio.run_coroutine_threadsafe(self.asend(data), self._loop)
        except RuntimeError:  # the loop is closed
            self.closed = True
            return False
        while True:
            try:
                return future.result(timeout=0.5)
            except TimeoutError:
                if self.closed or self._loop.is_closed():
                    future.cancel()
                    return False

    async def asend(self, data: bytes) -> bool:
        if self.closed:
            return False
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (ConnectionError, RuntimeError, OSError):
            self.closed = True
            return False
        return True

    def close(self) -> None:
        self.closed = True
