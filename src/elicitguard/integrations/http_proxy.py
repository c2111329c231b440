"""``elicitguard proxy http``: a Streamable HTTP reverse proxy that enforces the policy.

It is the ASGI middleware (:mod:`elicitguard.integrations.asgi`) wrapped around a small
forwarding app (:mod:`elicitguard.integrations.http_forward`), served by uvicorn on a loopback address by default (with uvloop and
httptools when installed: the ``http`` extra brings them). The forwarding app sends each
request with a lean keep-alive client (:mod:`elicitguard.integrations.upstream`) and streams
the response back chunk by chunk (SSE streams included); a client that disconnects closes
the upstream connection. Paths other than the MCP endpoint (OAuth metadata, for instance)
are forwarded untouched.

Hop-by-hop headers are not forwarded, ``Host`` is the upstream's, and ``Accept-Encoding``
is always ``identity`` so that bodies arrive uncompressed and can be judged; a body that is
encoded all the same (gzip, deflate, br, zstd) keeps its ``Content-Encoding`` here and the
guard decodes it within the size limits, judges it, and passes it on decoded, or refuses
it naming the encoding (:mod:`elicitguard.integrations.encodings`). Everything else passes,
``Authorization``, ``Mcp-Session-Id`` and unknown ``Mcp-Param-*`` headers included (TR-02).

``request_timeout`` (``--request-timeout``) bounds how long the upstream may leave a request
waiting; when it runs out the upstream connection is closed and the event audited:

* no status line and headers within it: the client gets HTTP 504 with a JSON-RPC error
  (-32603, ``reason: upstream_timeout``) for its request's id;
* a JSON (or any non-SSE) body not complete within it, counted from the request: the
  guard answers the request with the same error (a truncated body on other paths);
* an SSE response to a POST that stays silent (no byte, not even a comment) for that long:
  the stream ends with the error event for the request. A stream that keeps sending is
  never cut, however long the tool runs, and time spent waiting for a slow client to read
  does not count as silence;
* a GET stream (the server's push channel) only has to start within it: waiting for
  events is its job.

Without it the proxy waits as long as the upstream takes (the client's own timeout rules).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from elicitguard.engine.engine import Engine
from elicitguard.identity.http_auth import BearerAuth, RequireAuth
from elicitguard.identity.sealing import RequestStateGuard
from elicitguard.integrations.actions import Relay
from elicitguard.integrations.asgi import (
    ASGIApp,
    ElicitGuardMiddleware,
)
from elicitguard.integrations.http_forward import UpstreamApp
from elicitguard.integrations.recorder import Recorder
from elicitguard.protocol.envelope import Side, Transport

__all__ = ["UpstreamApp", "build_proxy_app", "serve_http"]


def build_proxy_app(
    engine: Engine,
    upstream: str,
    *,
    server: str | None = None,
    recorder: Recorder | None = None,
    connect_timeout: float = 10.0,
    request_timeout: float | None = None,
    sealing: RequestStateGuard | None = None,
    auth: BearerAuth | None = None,
) -> tuple[ASGIApp, UpstreamApp]:
    """The proxy as an ASGI app (and its forwarding app, to close on shutdown).

    ``request_timeout`` bounds how long the upstream may leave a request waiting (see the
    module docstring); each expiry is audited as ``elicitguard.upstream_timeout``.
    ``sealing`` seals ``requestState`` (``--seal-request-state``); ``auth`` (built from the
    policy's ``identity`` section) answers 401 challenges, serves the protected resource
    metadata and hands the verified principal to the guard.
    """

    def audit_timeout(phase: str) -> None:
        engine.audit.event("elicitguard.upstream_timeout", timeout_s=request_timeout, phase=phase)

    forward = UpstreamApp(
        upstream,
        connect_timeout=connect_timeout,
        request_timeout=request_timeout,
        on_timeout=audit_timeout,
    )
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
    request_timeout: float | None = None,
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
        request_timeout=request_timeout,
        sealing=sealing,
        auth=auth,
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto is TCP;
    # without it uvicorn's separate header and body writes wait ~40 ms for the client's
    # delayed ACK (Nagle) on every response after a connection's first.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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
        proxy_headers=False,  # a guard in front of one server trusts no X-Forwarded-*
    )
    uv = _server_class()(config)

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

    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(run())
    except KeyboardInterrupt:
        return 130  # SIGINT (uvicorn re-raises it once it has shut down)
    return 0


def _server_class() -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, letting requests cancelled at the end of the grace send their 503.

        uvicorn cancels what is still running when ``timeout_graceful_shutdown`` ends and
        then re-raises the signal at once, which killed the process before a cancelled
        request could answer its client.
        """

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            await super().shutdown(sockets)
            tasks = list(self.server_state.tasks)
            if tasks:
                await asyncio.wait(tasks, timeout=1.0)

    return Server


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop when installed (the ``http`` extra brings it): cheaper I/O per request."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
