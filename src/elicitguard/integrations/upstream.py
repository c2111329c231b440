"""A lean HTTP/1.1 client for the HTTP proxy's upstream: keep-alive pool, streaming, abort.

Why not httpx: profiling the proxy at 32 concurrent clients showed two thirds of its CPU in
httpx and httpcore (per-request pool scans, ``get_extra_info`` calls, header models, cookie
handling), for a job that needs none of it: one fixed origin, bodies already in memory, no
redirects, no cookies, no auth. This client writes the request head and body in one
``write``, parses the response with llhttp (``httptools``) and hands body bytes on as they
arrive, so the proxy pays a few microseconds per request where httpx paid a millisecond.

What it does:

* one pool per origin; idle connections are reused last-in first-out and dropped after
  :data:`IDLE_TTL` seconds (servers commonly close idle connections after five);
* a request that fails on a *reused* connection before any response byte arrived is sent
  once more on a new connection: the server closed the idle connection as the request left,
  so it never read it (what browsers do too);
* backpressure both ways: writes wait for the transport to drain; reading pauses while more
  than :data:`HIGH_WATER` bytes of body wait for the consumer (a slow client);
* :meth:`UpstreamResponse.abort` (a client that left, a timeout) closes the connection at
  once from any task, and the reader wakes up.

It does not do HTTP/2, proxies, redirects, decompression or upgrades: the proxy asks for
``Accept-Encoding: identity`` and hands whatever arrives, encoded or not, to the guard
(which decodes it, capped, in :mod:`elicitguard.integrations.encodings`).
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
from collections.abc import AsyncIterator
from typing import cast

import httptools

__all__ = ["IDLE_TTL", "UpstreamError", "UpstreamPool", "UpstreamResponse"]

#: Seconds an idle connection is kept for reuse.
IDLE_TTL = 4.0
#: Idle connections kept per pool; more are closed when released.
MAX_IDLE = 256
#: Body bytes buffered before reading from the upstream pauses (a slow client).
HIGH_WATER = 256 * 1024
_NO_BODY_METHODS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS", "TRACE"})


class UpstreamError(Exception):
    """The upstream could not be used. ``kind`` names why, for the gateway error's data:
    ``ConnectError``, ``ConnectTimeout``, ``RemoteProtocolError`` (not HTTP, or closed
    before answering), ``ReadError`` (closed mid-body), ``WriteError``."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection and its response parser; serves one request at a time."""

    def __init__(self, pool: UpstreamPool) -> None:
        self.pool = pool
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.idle_since = 0.0
        self._writable: asyncio.Future[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.head: asyncio.Future[None] = self.loop.create_future()
        self.body: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.complete = False
        self.error: str | None = None
        self.received = False
        self.interim = False
        self.until_eof = False
        self.keep_alive = False
        self.head_only = False
        self.paused = False
        self.waiter: asyncio.Future[None] | None = None
        #: When data last arrived (the proxy's idle timeout reads it).
        self.last_activity = time.monotonic()

    # --- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not subclasses

    def data_received(self, data: bytes) -> None:
        self.received = True
        self.last_activity = time.monotonic()
        try:
            self.parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            self.fail("RemoteProtocolError")

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool._forget(self)
        if self.head.done() and self.until_eof and self.error is None:
            self.complete = True  # a body delimited by the end of the connection
        elif not self.complete and self.error is None:
            self.error = "ReadError" if self.head.done() else "RemoteProtocolError"
        if not self.head.done():
            self.head.set_exception(UpstreamError(self.error or "RemoteProtocolError"))
            self.head.exception()  # retrieved: the sender may have gone already
        self._wake()
        writable = self._writable
        if writable is not None and not writable.done():
            writable.set_result(None)

    def pause_writing(self) -> None:
        if self._writable is None or self._writable.done():
            self._writable = self.loop.create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    # --- httptools callbacks ----------------------------------------------------------------

    def on_message_begin(self) -> None:
        self.headers = []

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200:
            if status == 101:  # an upgrade nobody asked for (Upgrade is never forwarded)
                self.fail("RemoteProtocolError")
            else:
                self.interim = True  # 1xx: the final response follows
            return
        self.status = status
        # Asked here: llhttp forgets it once the message is complete.
        self.keep_alive = self.parser.should_keep_alive()
        self.until_eof = not any(
            k.lower() in (b"content-length", b"transfer-encoding") for k, _ in self.headers
        ) and status not in (204, 304)
        if not self.head.done():
            self.head.set_result(None)
        if self.head_only:
            self.complete = True
            self._wake()

    def on_body(self, body: bytes) -> None:
        if self.head_only:
            return
        self.body.append(body)
        self.buffered += len(body)
        if self.buffered > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self.interim:
            self.interim = False
            return
        self.complete = True
        self._wake()

    # --- used by the pool and the response --------------------------------------------------

    def fail(self, kind: str) -> None:
        """End the exchange now: the connection is closed and every waiter wakes up."""
        if self.error is None and not self.complete:
            self.error = kind
        if not self.head.done():
            self.head.set_exception(UpstreamError(kind))
            self.head.exception()  # retrieved: nobody may be waiting any more
        self._wake()
        if self.transport is not None and not self.closed:
            self.transport.abort()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def drain(self) -> None:
        writable = self._writable
        if writable is not None and not writable.done():
            await writable

    def take(self) -> bytes:
        """Every body byte buffered so far, in one piece."""
        body = self.body
        data = body.popleft() if len(body) == 1 else b"".join(body)
        body.clear()
        self.buffered = 0
        if self.paused and self.transport is not None and not self.closed:
            self.paused = False
            self.transport.resume_reading()
        return data


class UpstreamResponse:
    """A response whose head has arrived; the body is read with :meth:`chunks`."""

    __slots__ = ("_conn", "_done", "headers", "status")

    def __init__(self, conn: _Connection) -> None:
        self._conn = conn
        self._done = False
        self.status = conn.status
        self.headers = conn.headers

    @property
    def last_activity(self) -> float:
        """``time.monotonic()`` when the upstream last sent bytes on this connection."""
        return self._conn.last_activity

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives; raises :class:`UpstreamError` if it is cut short."""
        conn = self._conn
        while True:
            if conn.body:
                yield conn.take()
                continue
            if conn.complete:
                return
            if conn.error is not None:
                raise UpstreamError(conn.error)
            conn.waiter = conn.loop.create_future()
            await conn.waiter
            conn.waiter = None

    def abort(self, kind: str = "Aborted") -> None:
        """Stop the exchange from anywhere: the connection is closed, the reader wakes."""
        self._conn.fail(kind)

    def close(self) -> None:
        """Done with the response: a fully read one frees its connection for the next."""
        if self._done:
            return
        self._done = True
        conn = self._conn
        if conn.complete and not conn.head_only and conn.error is None and not conn.body:
            conn.pool._release(conn)
        else:
            conn.fail("Aborted")


class UpstreamPool:
    """Keep-alive connections to one origin (``http`` or ``https``, host, port)."""

    def __init__(
        self,
        scheme: str,
        host: str,
        port: int | None,
        *,
        connect_timeout: float = 10.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.host = host
        self.port = port or (443 if scheme == "https" else 80)
        default_port = (scheme == "https" and self.port == 443) or (
            scheme == "http" and self.port == 80
        )
        shown = f"[{host}]" if ":" in host else host
        self.host_header = (shown if default_port else f"{shown}:{self.port}").encode("idna")
        self.connect_timeout = connect_timeout
        self.ssl: ssl.SSLContext | None = None
        if scheme == "https":
            self.ssl = ssl_context if ssl_context is not None else _default_context()
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()

    async def request(
        self, method: str, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> UpstreamResponse:
        """Send one request; return once the response's status and headers are in.

        ``headers`` must hold neither ``Host`` nor framing headers (they are set here).
        Cancelling the call closes the connection it was using.
        """
        head = bytearray(method.encode("ascii"))
        head += b" " + target + b" HTTP/1.1\r\nhost: " + self.host_header + b"\r\n"
        for key, value in headers:
            head += key + b": " + value + b"\r\n"
        if body or method not in _NO_BODY_METHODS:
            head += b"content-length: " + str(len(body)).encode("ascii") + b"\r\n"
        head += b"\r\n"
        if len(body) <= 65536:
            head += body
            data: tuple[bytes | bytearray, ...] = (head,)
        else:
            data = (head, body)
        for attempt in (0, 1):
            conn, reused = await self._acquire()
            conn.head_only = method == "HEAD"
            try:
                transport = conn.transport
                assert transport is not None
                for piece in data:
                    transport.write(piece)
                await conn.drain()
                await conn.head
            except UpstreamError:
                if reused and attempt == 0 and not conn.received:
                    continue  # the server closed the idle connection as the request left
                raise
            except BaseException:
                conn.fail("Aborted")
                raise
            return UpstreamResponse(conn)
        raise UpstreamError("RemoteProtocolError")  # pragma: no cover - the loop returns

    async def _acquire(self) -> tuple[_Connection, bool]:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if conn.closed:
                continue
            if now - conn.idle_since > IDLE_TTL:
                conn.fail("Expired")
                continue
            conn._reset()
            return conn, True
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, conn = await loop.create_connection(
                    lambda: _Connection(self),
                    self.host,
                    self.port,
                    ssl=self.ssl,
                    server_hostname=self.host if self.ssl is not None else None,
                )
        except TimeoutError:
            raise UpstreamError("ConnectTimeout") from None
        except (OSError, ssl.SSLError):
            raise UpstreamError("ConnectError") from None
        self._open.add(conn)
        return conn, False

    def _release(self, conn: _Connection) -> None:
        if conn.closed or not conn.keep_alive or len(self._idle) >= MAX_IDLE:
            conn.fail("Closed")
            return
        conn.idle_since = time.monotonic()
        self._idle.append(conn)

    def _forget(self, conn: _Connection) -> None:
        self._open.discard(conn)

    async def aclose(self) -> None:
        """Close every connection, idle or busy."""
        for conn in list(self._open):
            conn.fail("Closed")
        self._idle.clear()
        await asyncio.sleep(0)  # let the transports run their connection_lost


def _default_context() -> ssl.SSLContext:
    """Verify upstream certificates with certifi's roots when present (as httpx did)."""
    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())
