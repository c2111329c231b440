"""``elicitguard proxy http``: a Streamable HTTP reverse proxy that enforces the policy.

It is the ASGI middleware (:mod:`elicitguard.integrations.asgi`) wrapped around a small
forwarding app, served by uvicorn on a loopback address by default. The forwarding app
streams both ways with httpx: request bodies go up as they come, response bodies (SSE
streams included) come down chunk by chunk, and a client that disconnects closes the
upstream stream. Paths other than the MCP endpoint (OAuth metadata, for instance) are
forwarded untouched.

Hop-by-hop headers are not forwarded, ``Host`` is the upstream's, and ``Accept-Encoding``
is dropped so that bodies arrive uncompressed and can be judged. Everything else passes,
``Authorization``, ``Mcp-Session-Id`` and unknown ``Mcp-Param-*`` headers included (TR-02).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from elicitguard.engine.engine import Engine
from elicitguard.identity.http_auth import BearerAuth, RequireAuth
from elicitguard.identity.sealing import RequestStateGuard
from elicitguard.integrations.actions import Relay, dumps, error_response
from elicitguard.integrations.asgi import (
    ASGIApp,
    ElicitGuardMiddleware,
    Message,
    Receive,
    Scope,
    Send,
)
from elicitguard.integrations.recorder import Recorder
from elicitguard.protocol.envelope import Side, Transport

__all__ = ["UpstreamApp", "build_proxy_app", "serve_http"]

#: RFC 9110 section 7.6.1, plus what a proxy must set itself.
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
        b"content-length",
        b"accept-encoding",
    }
)
_RESPONSE_DROP = HOP_BY_HOP - {b"content-length"} | {b"content-encoding"}


class UpstreamApp:
    """An ASGI app that forwards every HTTP request to ``upstream``'s origin."""

    def __init__(self, upstream: str, *, connect_timeout: float = 10.0) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            msg = f"--upstream must be an http(s) URL, not {upstream!r}"
            raise ValueError(msg)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path or "/"
        timeout = httpx.Timeout(connect_timeout, read=None, write=60.0, pool=connect_timeout)
        self.client = httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        url = self.origin + scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() not in HOP_BY_HOP]
        body = await _read_all(receive)
        if body is None:
            return
        request = self.client.build_request(scope["method"], url, headers=headers, content=body)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            await _bad_gateway(send, body, type(exc).__name__)
            return
        try:
            await self._relay(response, receive, send)
        finally:
            await response.aclose()

    async def _relay(self, response: httpx.Response, receive: Receive, send: Send) -> None:
        headers = [(k, v) for k, v in response.headers.raw if k.lower() not in _RESPONSE_DROP]
        await send(
            {"type": "http.response.start", "status": response.status_code, "headers": headers}
        )
        streaming = asyncio.ensure_future(self._stream(response, send))
        watcher = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            await asyncio.wait({streaming, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (streaming, watcher):
                if not task.done():
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if watcher.done() and not streaming.done():
            return  # the client left; the upstream stream is closed by our caller
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _stream(self, response: httpx.Response, send: Send) -> None:
        with contextlib.suppress(httpx.HTTPError):
            async for chunk in response.aiter_raw():
                if chunk:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _read_all(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _bad_gateway(send: Send, body: bytes, reason: str) -> None:
    """The upstream cannot be reached: a JSON-RPC error for the request's id, HTTP 502."""
    from elicitguard.integrations.actions import recover_id

    jsonrpc_id, _ = recover_id(body)
    payload = dumps(
        error_response(
            jsonrpc_id,
            -32603,
            "elicitguard: the upstream MCP server cannot be reached",
            {"elicitguard": {"reason": "upstream_unreachable", "error": reason}},
        )
    )
    await send(
        {
            "type": "http.response.start",
            "status": 502,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode("ascii")),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload, "more_body": False})


def build_proxy_app(
    engine: Engine,
    upstream: str,
    *,
    server: str | None = None,
    recorder: Recorder | None = None,
    connect_timeout: float = 10.0,
    sealing: RequestStateGuard | None = None,
    auth: BearerAuth | None = None,
) -> tuple[ASGIApp, UpstreamApp]:
    """The proxy as an ASGI app (and its forwarding app, to close on shutdown).

    ``sealing`` seals ``requestState`` (``--seal-request-state``); ``auth`` (built from the
    policy's ``identity`` section) answers 401 challenges, serves the protected resource
    metadata and hands the verified principal to the guard.
    """
    forward = UpstreamApp(upstream, connect_timeout=connect_timeout)
    name = server or urlsplit(upstream).netloc
    relay = Relay(engine, side=Side.PROXY, transport=Transport.HTTP, server=name, sealing=sealing)
    guard = ElicitGuardMiddleware(forward, relay, path=forward.path, recorder=recorder)
    if auth is None:
        return guard, forward
    return RequireAuth(guard, auth), forward


def serve_http(
    engine: Engine,
    *,
    upstream: str,
    host: str = "127.0.0.1",
    port: int = 8787,
    server: str | None = None,
    record: Path | None = None,
    record_raw: bool = False,
    port_file: Path | None = None,
    connect_timeout: float = 10.0,
    sealing: RequestStateGuard | None = None,
    auth: BearerAuth | None = None,
) -> int:
    """Serve the proxy until SIGINT or SIGTERM; print the endpoint URL once listening."""
    import uvicorn

    name = server or urlsplit(upstream).netloc
    recorder = (
        Recorder(record, raw=record_raw, transport=Transport.HTTP, server=name)
        if record is not None
        else None
    )
    app, forward = build_proxy_app(
        engine,
        upstream,
        server=name,
        recorder=recorder,
        connect_timeout=connect_timeout,
        sealing=sealing,
        auth=auth,
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        print(f"elicitguard: cannot listen on {host}:{port}: {exc.strerror}", file=sys.stderr)
        return 2
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=2,
        access_log=False,
    )
    uv = uvicorn.Server(config)

    async def run() -> None:
        task = asyncio.ensure_future(uv.serve(sockets=[sock]))
        while not uv.started and not task.done():
            await asyncio.sleep(0.01)
        if uv.started:
            shown = f"[{host}]" if family == socket.AF_INET6 else host
            url = f"http://{shown}:{bound}{forward.path}"
            if port_file is not None:
                port_file.write_text(f"{bound}\n")
            print(url, flush=True)
        try:
            await task
        finally:
            await forward.aclose()
            if recorder is not None:
                recorder.close()

    asyncio.run(run())
    return 0
