"""The stdio proxy's relay thread on real pipes: order, backpressure, no deadlock.

A server that writes a lot before it reads must still be drained while the relay holds
back the client (the two-threads design got that for free; one thread must earn it).
"""

from __future__ import annotations

import os
import threading

from elicitguard.integrations.lines import Line
from elicitguard.integrations.pipes import make_nonblocking
from elicitguard.integrations.relay_loop import HIGH_WATER, RelayLoop
from elicitguard.protocol.envelope import Direction


class _Forward:
    """A handler that sends every line on unchanged, as the fast route does."""

    def __init__(self) -> None:
        self.loop: RelayLoop | None = None
        self.ended: list[str] = []

    def lines(
        self, lines: list[bytes | Line], direction: Direction, chunk: bytes | None, whole: bool
    ) -> bool:
        assert self.loop is not None
        data = b"".join((line if isinstance(line, bytes) else line.data) + b"\n" for line in lines)
        if direction is Direction.CLIENT_TO_SERVER:
            self.loop.to_server(data)
        else:
            self.loop.to_client(data)
        return False

    def client_ended(self) -> None:
        self.ended.append("client")

    def server_ended(self, closed: bool) -> None:
        self.ended.append("server")

    def client_lost(self) -> None:
        self.ended.append("lost")

    def tick(self, now: float) -> None:
        return None


def _write_all(fd: int, data: bytes, *, close: bool = True) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    if close:
        os.close(fd)


def _read_all(fd: int, into: bytearray) -> None:
    while chunk := os.read(fd, 1 << 16):
        into += chunk
    os.close(fd)


def test_a_server_that_writes_before_it_reads_is_drained_while_the_client_waits() -> None:
    """Both peers send far more than the pipes and the high-water mark hold, at once;
    every byte arrives, in order, and the relay ends when the server's output does."""
    client_rx, client_feed = os.pipe()  # what the client sends
    client_out, client_tx = os.pipe()  # what the client receives
    server_in, server_tx = os.pipe()  # the server's stdin
    server_rx, server_feed = os.pipe()  # the server's stdout
    size = 2 * HIGH_WATER + 12345
    to_server = b"".join(b'{"n":%d,"pad":"%s"}\n' % (n, b"c" * 90) for n in range(size // 100))
    to_client = b"".join(b'{"m":%d,"pad":"%s"}\n' % (n, b"s" * 90) for n in range(size // 100))
    got_client, got_server = bytearray(), bytearray()

    def server() -> None:  # writes all of its output before reading any of its input
        _write_all(server_feed, to_client, close=False)
        _read_all(server_in, got_server)
        os.close(server_feed)

    for fd in (client_rx, client_tx, server_rx, server_tx):  # as the proxy sets them
        make_nonblocking(fd, shared=False)

    handler = _Forward()
    loop = RelayLoop(
        handler,
        client_rx=client_rx,
        client_tx=client_tx,
        server_rx=server_rx,
        server_tx=server_tx,
        max_bytes=1 << 20,
    )
    handler.loop = loop
    threads = [
        threading.Thread(target=_write_all, args=(client_feed, to_server)),
        threading.Thread(target=_read_all, args=(client_out, got_client)),
        threading.Thread(target=server),
    ]
    for thread in threads:
        thread.start()
    relay = threading.Thread(target=loop.run)
    relay.start()
    relay.join(60)
    assert not relay.is_alive(), "the relay is stuck"
    loop.close()
    os.close(client_tx)
    for thread in threads:
        thread.join(60)
    assert bytes(got_client) == to_client
    assert bytes(got_server) == to_server
    assert handler.ended == ["client", "server"]
    for fd in (client_rx, server_rx):
        os.close(fd)
