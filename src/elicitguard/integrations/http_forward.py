"""The forwarding app behind ``elicitguard proxy http``: each request to the upstream, and back.

Why: the guard (:mod:`elicitguard.integrations.asgi`) judges messages; something must carry
them to the MCP server and stream its answers back chunk by chunk, drop hop-by-hop
headers, ask for ``identity`` bodies, close the upstream connection when the client goes,
and bound how long the upstream may leave a request waiting (``request_timeout``, see
:mod:`elicitguard.integrations.http_proxy`). :class:`UpstreamApp` is that ASGI app.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from elicitguard.integrations.actions import dumps, error_response, recover_id
from elicitguard.integrations.asgi import (
    UPSTREAM_END,
    Message,
    Receive,
    Scope,
    Send,
)
from elicitguard.integrations.upstream import UpstreamError, UpstreamPool, UpstreamResponse

__all__ = ["HOP_BY_HOP", "IDENTITY", "TimeoutHook", "UpstreamApp"]

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
