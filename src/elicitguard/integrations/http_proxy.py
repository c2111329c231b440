"""``elicitguard proxy http``: a Streamable HTTP reverse proxy that enforces the policy.

It is the ASGI middleware (:mod:`elicitguard.integrations.asgi`) wrapped around a small
forwarding app, served by uvicorn on a loopback address by default (with uvloop and
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
import contextlib
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from elicitguard.engine.engine import Engine
from elicitguard.identity.http_auth import BearerAuth, RequireAuth
from elicitguard.identity.sealing import RequestStateGuard
from elicitguard.integrations.actions import Relay, dumps, error_response, recover_id
from elicitguard.integrations.asgi import (
    UPSTREAM_END,
    ASGIApp,
    ElicitGuardMiddleware,
    Message,
    Receive,
    Scope,
    Send,
)
from elicitguard.integrations.recorder import Recorder
from elicitguard.integrations.upstream import UpstreamError, UpstreamPool, UpstreamResponse
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
_RESPONSE_DROP = HOP_BY_HOP - {b"content-length"}
#: Asked of the upstream on every path: what arrives can be judged as sent.
IDENTITY = (b"accept-encoding", b"identity")

#: Called with the phase (``headers``, ``body``, ``idle``) when a request times out.
TimeoutHook = Callable[[str], None]


class UpstreamApp:
    """An ASGI app that forwards every HTTP request to ``upstream``'s origin."""

    def __init__(
        self,
        upstream: str,
        *,
        connect_timeout: float = 10.0,
        request_timeout: float | None = None,
        on_timeout: TimeoutHook | None = None,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            msg = f"--upstream must be an http(s) URL, not {upstream!r}"
            raise ValueError(msg)
        if request_timeout is not None and request_timeout <= 0:
            msg = "the request timeout must be a positive number of seconds"
            raise ValueError(msg)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path or "/"
        self.request_timeout = request_timeout
        self.on_timeout = on_timeout
        self.pool = UpstreamPool(
            parts.scheme, parts.hostname, parts.port, connect_timeout=connect_timeout
        )
        #: Whether the last request found the upstream unreachable: an operator is told on
        #: stderr when it goes down and when it is back, once each, not once per request.
        self.down = False

    def _reachable(self, reachable: bool, kind: str | None = None) -> None:
        if reachable == (not self.down):
            return
        self.down = not reachable
        if reachable:
            print(
                f"elicitguard proxy http: the upstream {self.origin} answers again", file=sys.stderr
            )
        else:
            print(
                f"elicitguard proxy http: cannot reach the upstream {self.origin} ({kind}); "
                "clients get 502 (reason upstream_unreachable) until it answers",
                file=sys.stderr,
            )

    async def aclose(self) -> None:
        await self.pool.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        target = scope.get("raw_path") or scope["path"].encode("latin-1")
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        headers = [(k, v) for k, v in scope.get("headers", ()) if k.lower() not in HOP_BY_HOP]
        headers.append(IDENTITY)
        body = await _read_all(receive)
        if body is None:
            return
        method = scope["method"]
        call = _Call(self, scope, send, body)
        request = asyncio.ensure_future(self.pool.request(method, target, headers, body))
        watcher = asyncio.ensure_future(_wait_disconnect(receive))
        call.watch(request, watcher)
        response: UpstreamResponse | None = None
        try:
            try:
                response = await request
            except asyncio.CancelledError:
                if not request.cancelled() or not (call.gone or call.timed_out):
                    # We are cancelled (uvicorn's shutdown grace ran out): answer, then go.
                    if not call.gone:
                        with contextlib.suppress(Exception):
                            await _gateway_error(send, body, 503, "proxy_shutdown")
                    raise
                if not call.gone:
                    await call.timeout_reply()
                return
            except UpstreamError as exc:
                self._reachable(False, exc.kind)
                if not call.gone:
                    await _gateway_error(send, body, 502, "upstream_unreachable", error=exc.kind)
                return
            self._reachable(True)
            await call.relay(response, sse_idle=method == "POST")
        finally:
            call.stop()
            if response is not None:
                response.close()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


class _Call:
    """One forwarded request: its deadline, the client watcher, and the relay of the answer.

    A timer (never a task) enforces the timeout; the watcher task turns a client's
    disconnect into closing the upstream connection. Both end the exchange the same way:
    the upstream connection is aborted and the waiting code wakes up.
    """

    __slots__ = (
        "app",
        "body",
        "busy",
        "gone",
        "last_sent",
        "request",
        "response",
        "scope",
        "send",
        "timed_out",
        "timer",
        "watcher",
    )

    def __init__(self, app: UpstreamApp, scope: Scope, send: Send, body: bytes) -> None:
        self.app = app
        self.scope = scope
        self.send = send
        self.body = body
        self.gone = False
        self.timed_out = False
        self.busy = False
        self.last_sent = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.request: asyncio.Future[UpstreamResponse] | None = None
        self.response: UpstreamResponse | None = None
        self.watcher: asyncio.Future[None] | None = None

    def watch(
        self, request: asyncio.Future[UpstreamResponse], watcher: asyncio.Future[None]
    ) -> None:
        self.request = request
        self.watcher = watcher
        watcher.add_done_callback(self._client_left)
        timeout = self.app.request_timeout
        if timeout is not None:
            self.timer = asyncio.get_running_loop().call_later(timeout, self._deadline)

    def _client_left(self, watcher: asyncio.Future[None]) -> None:
        if watcher.cancelled() or watcher.exception() is not None:
            return
        self.gone = True
        self._abort("ClientGone")

    def _deadline(self) -> None:
        self.timer = None
        self.timed_out = True
        self._abort("Timeout")

    def _abort(self, kind: str) -> None:
        if self.response is not None:
            self.response.abort(kind)
        elif self.request is not None and not self.request.done():
            self.request.cancel()

    def _idle(self) -> None:
        """The SSE idle check: re-arms itself while bytes flow or the client is being fed."""
        self.timer = None
        timeout = self.app.request_timeout
        response = self.response
        if timeout is None or response is None:
            return
        now = time.monotonic()
        last = max(response.last_activity, self.last_sent)
        if self.busy or now - last < timeout:
            wait = timeout if self.busy else timeout - (now - last)
            self.timer = asyncio.get_running_loop().call_later(max(wait, 0.01), self._idle)
            return
        self.timed_out = True
        response.abort("Timeout")

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        watcher = self.watcher
        if watcher is not None and not watcher.done():
            watcher.remove_done_callback(self._client_left)
            watcher.cancel()

    async def timeout_reply(self) -> None:
        """The upstream sent no headers in time: 504 and a JSON-RPC error for the id."""
        self._report("headers")
        timeout = self.app.request_timeout
        await _gateway_error(self.send, self.body, 504, "upstream_timeout", timeout=timeout)

    def _report(self, phase: str) -> None:
        """Audit the timeout; tell the guard why the answer it sees is cut short."""
        self.scope[UPSTREAM_END] = {
            "reason": "upstream_timeout",
            "timeout_s": self.app.request_timeout,
        }
        if self.app.on_timeout is not None:
            self.app.on_timeout(phase)

    async def relay(self, response: UpstreamResponse, *, sse_idle: bool) -> None:
        """Send the response on; a timeout or a break mid-body ends it early."""
        self.response = response
        headers = [(k, v) for k, v in response.headers if k.lower() not in _RESPONSE_DROP]
        sse = any(
            k.lower() == b"content-type" and v.lower().startswith(b"text/event-stream")
            for k, v in response.headers
        )
        if sse and self.app.request_timeout is not None:
            # Streams are judged by silence, not length; GET streams only had to start.
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            self.timed_out = False  # the headers came in time (perhaps just)
            if sse_idle:
                self.last_sent = time.monotonic()
                self._idle()
        elif self.timed_out:
            # The deadline passed as the headers arrived: what is buffered already still
            # counts (a complete body passes); the rest of the body is not waited for.
            response.abort("Timeout")
        send = self.send
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        try:
            async for chunk in response.chunks():
                self.busy = True
                try:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                finally:
                    self.busy = False
                    self.last_sent = time.monotonic()
        except UpstreamError:
            if self.gone:
                return  # the client left; the upstream connection is closed already
            if self.timed_out:
                self._report("idle" if sse else "body")
        except asyncio.CancelledError:
            # Shutdown mid-stream: end the body so the guard answers the request, then go.
            self.scope[UPSTREAM_END] = {"reason": "proxy_shutdown"}
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            raise
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.gone:
            return
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _read_all(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return


_GATEWAY_MESSAGES = {
    "upstream_unreachable": "elicitguard: the upstream MCP server cannot be reached",
    "upstream_timeout": "elicitguard: the upstream MCP server did not answer in time",
    "proxy_shutdown": "elicitguard: the proxy is shutting down",
}


async def _gateway_error(
    send: Send,
    body: bytes,
    status: int,
    reason: str,
    *,
    error: str | None = None,
    timeout: float | None = None,
) -> None:
    """The proxy answers for the upstream: a JSON-RPC error (-32603) for the request's id.

    502 when the upstream cannot be reached or does not speak HTTP, 504 when it did not
    answer in time, 503 when the proxy stops. The data names the reason (and the failure's
    kind), never anything from traffic.
    """
    jsonrpc_id, _ = recover_id(body)
    detail: dict[str, object] = {"reason": reason}
    if error is not None:
        detail["error"] = error
    if timeout is not None:
        detail["timeout_s"] = timeout
    message = _GATEWAY_MESSAGES[reason]
    payload = dumps(error_response(jsonrpc_id, -32603, message, {"elicitguard": detail}))
    await send(
        {
            "type": "http.response.start",
            "status": status,
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
