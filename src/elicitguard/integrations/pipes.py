"""Pipe descriptors for the stdio proxy's one relay thread: waiting on them, writing to them.

Why one thread and raw descriptors: each wake-up of a thread on a small VM costs tens of
microseconds, and an event loop's per-frame machinery (futures, task steps, ``drain``) more
than the proxy's own checks; a relay that waits for both pipes in one ``poll`` and writes
with plain ``os.write`` costs about what a minimal relay does. That needs writes that never
block the thread (a peer that does not read must not stall the other direction): an
:class:`Outbox` writes what the pipe takes at once and keeps the rest until the descriptor
is writable again. A :class:`Poller` is ``select.poll`` (it also accepts regular files,
which ``epoll`` refuses) where it is reliable, the :mod:`selectors` default elsewhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import selectors
import stat
import sys
from collections.abc import Callable
from typing import Protocol

__all__ = ["CHUNK", "ByteWriter", "Outbox", "Poller", "make_nonblocking", "restore_flags"]

#: Bytes asked of one ``read``: a pipe returns what it holds (64 KiB by default), a file more.
CHUNK = 1 << 18


class ByteWriter(Protocol):
    """An asyncio-style writer: ``asyncio.StreamWriter`` fits."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


#: ``Poller`` masks.
READ = 1
WRITE = 2


def make_nonblocking(fd: int, *, shared: bool) -> int | None:
    """Set ``O_NONBLOCK`` on ``fd``; the flags to restore afterwards, or None if unchanged.

    A descriptor the proxy does not own (``shared``: its own stdin and stdout) is switched
    only when it is a pipe or a socket: a terminal or a file is shared with the shell that
    started us, which must not find its terminal non-blocking, and blocks only briefly.
    """
    try:
        if shared and not stat.S_ISFIFO(mode := os.fstat(fd).st_mode) and not stat.S_ISSOCK(mode):
            return None
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        if flags & os.O_NONBLOCK:
            return None
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    except OSError:
        return None
    return flags


def restore_flags(fd: int, flags: int | None) -> None:
    """Undo :func:`make_nonblocking` (a descriptor already closed is left alone)."""
    if flags is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)


class Outbox:
    """Bytes on their way to one descriptor: written at once when the pipe takes them.

    ``send`` never blocks on a non-blocking descriptor; what does not fit waits in
    ``pending`` until :meth:`flush` (the relay calls it when the descriptor is writable).
    ``closed`` once the reader is gone (``EPIPE``) or :meth:`close` ran; an outbox asked to
    close while bytes wait closes once they are written (``closing``).
    """

    __slots__ = ("before_close", "closed", "closing", "fd", "owned", "pending")

    def __init__(
        self, fd: int, *, owned: bool, before_close: Callable[[int], None] | None = None
    ) -> None:
        self.fd = fd
        self.owned = owned
        #: Called with ``fd`` before an owned descriptor is closed (to stop watching it).
        self.before_close = before_close
        self.pending = bytearray()
        self.closed = False
        self.closing = False

    def send(self, data: bytes) -> bool:
        """Write or queue ``data``; False when the reader is gone (nothing is kept then)."""
        if self.closed:
            return False
        if self.pending:
            self.pending += data
            return True
        try:
            written = os.write(self.fd, data)
        except BlockingIOError:
            written = 0
        except OSError:  # EPIPE, a closed descriptor: the reader is gone
            self._close()
            return False
        if written < len(data):
            self.pending += memoryview(data)[written:]
        return True

    def flush(self) -> bool:
        """Write what the descriptor takes now; False when the reader is gone."""
        pending = self.pending
        while pending and not self.closed:
            try:
                written = os.write(self.fd, pending)
            except BlockingIOError:
                break
            except OSError:
                self._close()
                return False
            del pending[:written]
        if not pending and self.closing:
            self._close()
        return not self.closed

    def close(self) -> None:
        """Close once what waits is written (now, when nothing does)."""
        self.closing = True
        if not self.pending:
            self._close()

    def discard(self) -> None:
        """Close now; what still waits is dropped."""
        self._close()

    def _close(self) -> None:
        self.pending.clear()
        if not self.closed:
            self.closed = True
            if self.owned:
                if self.before_close is not None:
                    self.before_close(self.fd)
                with contextlib.suppress(OSError):
                    os.close(self.fd)


class Poller:
    """Waits for readable and writable descriptors: ``set`` the interest, then ``wait``."""

    def __init__(self) -> None:
        self._masks: dict[int, int] = {}
        if hasattr(select, "poll") and sys.platform.startswith("linux"):
            self._poll: select.poll | None = select.poll()
            self._selector: selectors.BaseSelector | None = None
        else:  # macOS's poll cannot watch a terminal; kqueue can
            self._poll = None
            self._selector = selectors.DefaultSelector()

    def set(self, fd: int, mask: int) -> None:
        """Watch ``fd`` for ``mask`` (READ, WRITE or both; 0 stops watching)."""
        old = self._masks.get(fd, 0)
        if mask == old:
            return
        if self._poll is not None:
            if mask:
                events = (select.POLLIN if mask & READ else 0) | (
                    select.POLLOUT if mask & WRITE else 0
                )
                self._poll.register(fd, events)
            else:
                self._poll.unregister(fd)
        else:
            assert self._selector is not None
            events = (selectors.EVENT_READ if mask & READ else 0) | (
                selectors.EVENT_WRITE if mask & WRITE else 0
            )
            if not old:
                self._selector.register(fd, events)
            elif mask:
                self._selector.modify(fd, events)
            else:
                self._selector.unregister(fd)
        if mask:
            self._masks[fd] = mask
        else:
            del self._masks[fd]

    def wait(self, timeout: float | None) -> list[tuple[int, int]]:
        """``(fd, mask)`` of what is ready; an error or hang-up counts as both."""
        if self._poll is not None:
            out: list[tuple[int, int]] = []
            try:
                ready = self._poll.poll(None if timeout is None else timeout * 1000)
            except InterruptedError:
                return out
            for fd, events in ready:
                mask = READ if events & select.POLLIN else 0
                if events & select.POLLOUT:
                    mask |= WRITE
                if events & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    mask = READ | WRITE
                out.append((fd, mask))
            return out
        assert self._selector is not None
        return [
            (
                key.fd,
                (READ if events & selectors.EVENT_READ else 0)
                | (WRITE if events & selectors.EVENT_WRITE else 0),
            )
            for key, events in self._selector.select(timeout)
        ]

    def close(self) -> None:
        if self._selector is not None:
            self._selector.close()
