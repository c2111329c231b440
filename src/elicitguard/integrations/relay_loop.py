"""The stdio proxy's relay: one thread, one ``poll`` over both peers' pipes.

Why one thread: a proxied round trip crosses the proxy twice, and every thread that must
wake for it (one per direction before) adds a scheduler hand-off; a single thread waiting
on all four descriptors costs what a minimal relay costs. Each readable pipe is read in a
large chunk, split into lines (:class:`~elicitguard.integrations.lines.LineSplitter`) and
handed to the :class:`Handler` (the proxy judges them and sends through :meth:`to_server`
and :meth:`to_client`). Writes never block (:class:`~elicitguard.integrations.pipes.Outbox`);
while more than :data:`HIGH_WATER` bytes wait for a peer, nothing more is read from the side
whose frames feed it (backpressure: memory stays bounded by a slow reader).

The loop ends when the server's output has ended (or was abandoned: :meth:`abandon_server`)
and what waits for the client is written, or at once on :meth:`stop`. The end of the
client's input closes the server's stdin once everything queued for it is written.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from elicitguard.integrations.lines import Line, LineSplitter
from elicitguard.integrations.pipes import CHUNK, READ, WRITE, Outbox, Poller
from elicitguard.protocol.envelope import Direction

__all__ = ["HIGH_WATER", "Handler", "RelayLoop"]

#: Bytes waiting for one peer above which the relay stops reading (resumes below it).
HIGH_WATER = 1 << 22
_C2S = Direction.CLIENT_TO_SERVER
_S2C = Direction.SERVER_TO_CLIENT


def _read_chunk(fd: int) -> bytes | None:
    """What a pipe holds, up to :data:`CHUNK` (``b""`` at its end or on an error), or None
    when it has nothing yet (a spurious wake-up)."""
    try:
        return os.read(fd, CHUNK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


class Handler(Protocol):
    """What the relay tells the proxy; every call comes from the relay's thread."""

    def lines(
        self, lines: list[bytes | Line], direction: Direction, chunk: bytes | None, whole: bool
    ) -> bool:
        """Judge the lines of one read and send what they make; True: stop this side."""
        ...

    def client_ended(self) -> None:
        """The client's input ended (or a frame of it closed the session)."""
        ...

    def server_ended(self, closed: bool) -> None:
        """The server's output ended; ``closed``: a frame of it closed the session."""
        ...

    def client_lost(self) -> None:
        """Writing to the client failed: its reader is gone."""
        ...

    def tick(self, now: float) -> None:
        """Called about every ``tick`` seconds (when the relay was given one)."""
        ...


class RelayLoop:
    """Moves lines between a client's pipes and a server's, in one thread (:meth:`run`)."""

    def __init__(
        self,
        handler: Handler,
        *,
        client_rx: int,
        client_tx: int,
        server_rx: int,
        server_tx: int,
        max_bytes: int,
        tick: float | None = None,
    ) -> None:
        self._handler = handler
        self._client_rx = client_rx
        self._server_rx = server_rx
        self._poller = Poller()
        self._client = Outbox(client_tx, owned=False)
        #: The server's stdin is the relay's to close (the end of the client's input).
        self._server = Outbox(server_tx, owned=True, before_close=self._unwatch)
        self._max_bytes = max_bytes
        self._tick = tick
        self._reading_client = True
        self._reading_server = True
        self._client_lost = False
        self._stopping = False
        self._posted: deque[Callable[[], None]] = deque()
        self._wake_r, self._wake_w = os.pipe()
        self._lock = threading.Lock()  # only for post() and stop(), from other threads

    # --- from the handler (the relay's thread) --------------------------------------------

    def to_server(self, data: bytes) -> None:
        """Queue ``data`` for the server's stdin (dropped when the server stopped reading)."""
        self._server.send(data)

    def to_client(self, data: bytes) -> bool:
        """Queue ``data`` for the client; False when the client's reader is gone."""
        if self._client.send(data):
            return True
        self._lost_client()
        return False

    def _lost_client(self) -> None:
        if not self._client_lost:  # told once
            self._client_lost = True
            self._handler.client_lost()

    def abandon_server(self) -> None:
        """Stop waiting for the server's output (a grandchild may hold it open)."""
        if self._reading_server:
            self._reading_server = False
            self._handler.server_ended(False)

    # --- from any thread ------------------------------------------------------------------

    def post(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` in the relay's thread, soon."""
        with self._lock:
            self._posted.append(callback)
            self._wake()

    def stop(self) -> None:
        """End :meth:`run` without judging anything more."""
        with self._lock:
            self._stopping = True
            self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def close(self) -> None:
        """Close the server's stdin and the loop's own descriptors (after :meth:`run`)."""
        self._server.discard()
        self._poller.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    @property
    def server_stdin_closed(self) -> bool:
        return self._server.closed

    # --- the loop -------------------------------------------------------------------------

    def run(self) -> None:
        """Relay until the server's output ends and the client has all of it, or ``stop``."""
        client_splitter = LineSplitter(self._max_bytes)
        server_splitter = LineSplitter(self._max_bytes)
        client_rx, server_rx, wake = self._client_rx, self._server_rx, self._wake_r
        client_fd, server_fd = self._client.fd, self._server.fd
        client, server = self._client, self._server
        poller, handler, read_chunk = self._poller, self._handler, _read_chunk
        poller.set(wake, READ)
        tick = self._tick
        next_tick = time.monotonic() + tick if tick else 0.0
        while not self._stopping:
            if not self._reading_server and (client.closed or not client.pending):
                return
            self._watch()
            timeout = None
            if tick:
                timeout = max(0.0, next_tick - time.monotonic())
            for fd, mask in poller.wait(timeout):
                if self._stopping:
                    return
                if fd == wake:
                    self._drain_wake()
                    continue
                if mask & WRITE:
                    if fd == client_fd and client.pending and not client.flush():
                        self._lost_client()
                    if fd == server_fd and server.pending:
                        server.flush()
                if not mask & READ:
                    continue
                if fd == server_rx and self._reading_server:
                    chunk = read_chunk(fd)
                    if chunk is None:
                        continue
                    if chunk:
                        lines = server_splitter.feed(chunk)
                        if lines and handler.lines(lines, _S2C, chunk, server_splitter.whole):
                            self._reading_server = False
                            handler.server_ended(True)
                        continue
                    tail = server_splitter.finish()
                    closed = tail is not None and handler.lines([tail], _S2C, None, False)
                    if self._reading_server:
                        self._reading_server = False
                        handler.server_ended(closed)
                elif fd == client_rx and self._reading_client:
                    chunk = read_chunk(fd)
                    if chunk is None:
                        continue
                    if chunk:
                        lines = client_splitter.feed(chunk)
                        if lines and handler.lines(lines, _C2S, chunk, client_splitter.whole):
                            self._end_client()
                        continue
                    tail = client_splitter.finish()
                    if tail is not None:
                        handler.lines([tail], _C2S, None, False)
                    self._end_client()
            if tick and time.monotonic() >= next_tick:
                handler.tick(time.monotonic())
                next_tick = time.monotonic() + tick

    def _end_client(self) -> None:
        if self._reading_client:
            self._reading_client = False
            self._server.close()
            self._handler.client_ended()

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):
            os.read(self._wake_r, 4096)
        with self._lock:
            posted = list(self._posted)
            self._posted.clear()
        for callback in posted:
            callback()

    def _watch(self) -> None:
        """Tell the poller what to wait for: pending writes, and reads unless what they feed
        is behind.

        The client's frames feed the server (and replies to the client); the server's feed
        the client. A server that does not read its stdin is still read from (it may be
        blocked writing to us), unless its own replies pile up far past the mark.
        """
        client, server = self._client, self._server
        client_behind = len(client.pending) > HIGH_WATER
        masks: dict[int, int] = {}
        if self._reading_client and not client_behind and len(server.pending) <= HIGH_WATER:
            masks[self._client_rx] = READ
        if self._reading_server and not client_behind and len(server.pending) <= 4 * HIGH_WATER:
            masks[self._server_rx] = masks.get(self._server_rx, 0) | READ
        if client.pending and not client.closed:
            masks[client.fd] = masks.get(client.fd, 0) | WRITE
        if server.pending and not server.closed:
            masks[server.fd] = masks.get(server.fd, 0) | WRITE
        watch = self._poller.set
        watch(self._client_rx, masks.get(self._client_rx, 0))
        watch(self._server_rx, masks.get(self._server_rx, 0))
        watch(client.fd, masks.get(client.fd, 0))
        if not server.closed:
            watch(server.fd, masks.get(server.fd, 0))

    def _unwatch(self, fd: int) -> None:
        self._poller.set(fd, 0)
