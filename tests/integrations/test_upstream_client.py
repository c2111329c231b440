"""The HTTP proxy's upstream client against real sockets on 127.0.0.1 (scripted raw servers).

Each server answers with exact bytes, so the framing cases a proxy meets (keep-alive, a
closed idle connection, 1xx interim answers, bodies ended by EOF or chunked, HEAD, bytes
that are not HTTP) are tested as they arrive on the wire.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable

import pytest
from tests.integration_support import require_module

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]


@pytest.fixture(autouse=True)
def _needs_httptools() -> None:
    require_module("httptools")


async def serve(handler: Handler) -> tuple[asyncio.Server, int, list[bytes]]:
    """A server calling ``handler(reader, writer, n)`` per request; records request heads
    (and, as ``b"CONNECTION"`` entries, each connection it accepted)."""
    heads: list[bytes] = []

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(b"CONNECTION")
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(head)
                n = sum(1 for h in heads if h != b"CONNECTION")
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        await reader.readexactly(int(line.split(b":")[1]))
                if not await handler(reader, writer, n):
                    break
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], heads


async def fetch(port: int, method: str = "POST", body: bytes = b"{}") -> tuple[int, bytes]:
    from elicitguard.integrations.upstream import UpstreamPool

    pool = UpstreamPool("http", "127.0.0.1", port)
    try:
        response = await pool.request(method, b"/mcp", [(b"x-a", b"1")], body)
        data = b"".join([c async for c in response.chunks()])
        response.close()
        return response.status, data
    finally:
        await pool.aclose()


def ok(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


def test_keep_alive_reuses_one_connection_and_sends_clean_headers() -> None:
    """Two requests, one connection; Host is the upstream's; no Accept-Encoding is added."""
    from elicitguard.integrations.upstream import UpstreamPool

    async def main() -> None:
        async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
            w.write(ok(b"%d" % n))
            return True

        server, port, heads = await serve(handler)
        pool = UpstreamPool("http", "127.0.0.1", port)
        for expected in (b"1", b"2"):
            response = await pool.request("POST", b"/mcp?q=1", [(b"x-a", b"1")], b"{}")
            assert b"".join([c async for c in response.chunks()]) == expected
            response.close()
        await pool.aclose()
        server.close()
        assert heads.count(b"CONNECTION") == 1
        heads.remove(b"CONNECTION")
        assert heads[0].startswith(b"POST /mcp?q=1 HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n" % port)
        assert b"accept-encoding" not in heads[0].lower()
        assert b"content-length: 2\r\n" in heads[0]

    asyncio.run(main())


def test_an_idle_connection_closed_by_the_server_is_replaced() -> None:
    """The server drops a kept-alive connection as the next request arrives (unread, so
    unanswered): the request is sent once more on a new connection and succeeds."""
    from elicitguard.integrations.upstream import UpstreamPool

    async def main() -> None:
        async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
            if n == 2:
                return False  # closes without answering
            w.write(ok(b"%d" % n))
            return True

        server, port, heads = await serve(handler)
        pool = UpstreamPool("http", "127.0.0.1", port)
        for expected in (b"1", b"3"):
            response = await pool.request("POST", b"/mcp", [], b"{}")
            assert b"".join([c async for c in response.chunks()]) == expected
            response.close()
        await pool.aclose()
        server.close()
        assert heads.count(b"CONNECTION") == 2

    asyncio.run(main())


def test_interim_eof_delimited_chunked_and_head_answers() -> None:
    """1xx answers are skipped; a body ended by EOF is whole; chunked bodies are decoded;
    a HEAD answer with a Content-Length completes without a body."""

    async def interim(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
        w.write(b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + ok(b"final"))
        return True

    async def until_eof(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
        w.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nall of it")
        return False

    async def chunked(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
        w.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n")
        await w.drain()
        await asyncio.sleep(0.05)
        w.write(b"2\r\nde\r\n0\r\n\r\n")
        return True

    async def head(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
        w.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n")
        return True

    async def main() -> None:
        for handler, method, expected in (
            (interim, "POST", (200, b"final")),
            (until_eof, "POST", (200, b"all of it")),
            (chunked, "POST", (200, b"abcde")),
            (head, "HEAD", (200, b"")),
        ):
            server, port, _ = await serve(handler)
            got = await asyncio.wait_for(
                fetch(port, method, b"" if method == "HEAD" else b"{}"), 10
            )
            assert got == expected, handler.__name__
            server.close()

    asyncio.run(main())


def test_failures_have_names_never_content() -> None:
    """Not HTTP: RemoteProtocolError. Nobody listening: ConnectError. Cut mid-body:
    ReadError. The error carries the kind only."""
    from elicitguard.integrations.upstream import UpstreamError

    async def garbage(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
        w.write(b"SECRET-token not http\r\n\r\n")
        return False

    async def cut(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
        w.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort")
        return False

    async def main() -> None:
        server, port, _ = await serve(garbage)
        with pytest.raises(UpstreamError) as caught:
            await fetch(port)
        assert caught.value.kind == "RemoteProtocolError"
        assert "SECRET" not in str(caught.value)
        server.close()
        server, port, _ = await serve(cut)
        with pytest.raises(UpstreamError, match="ReadError"):
            await fetch(port)
        server.close()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            free = probe.getsockname()[1]
        with pytest.raises(UpstreamError, match="ConnectError"):
            await fetch(free)

    asyncio.run(main())


def test_https_upstream_is_verified_against_the_given_ca_and_refused_otherwise() -> None:
    """TLS to the upstream: a certificate from a trusted CA works (with SNI and the Host
    header of the origin); the default roots refuse a self-issued one with a named error."""
    require_module("trustme")
    import trustme

    from elicitguard.integrations.upstream import UpstreamError, UpstreamPool

    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_context)
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)

    async def main() -> None:
        async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> bool:
            w.write(ok(b"secure"))
            return True

        heads: list[bytes] = []

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(head)
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        await reader.readexactly(int(line.split(b":")[1]))
                await handler(reader, writer, 1)
                await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(connection, "127.0.0.1", 0, ssl=server_context)
        port = server.sockets[0].getsockname()[1]
        trusted = UpstreamPool("https", "127.0.0.1", port, ssl_context=client_context)
        try:
            response = await trusted.request("POST", b"/mcp", [], b"{}")
            body = b"".join([c async for c in response.chunks()])
            response.close()
            assert (response.status, body) == (200, b"secure")
            assert b"host: 127.0.0.1:%d" % port in heads[0].lower()
        finally:
            await trusted.aclose()
        untrusted = UpstreamPool("https", "127.0.0.1", port)  # certifi / system roots
        try:
            with pytest.raises(UpstreamError) as refused:
                await untrusted.request("POST", b"/mcp", [], b"{}")
            assert refused.value.kind == "ConnectError"
        finally:
            await untrusted.aclose()
            server.close()
            await server.wait_closed()

    asyncio.run(main())
