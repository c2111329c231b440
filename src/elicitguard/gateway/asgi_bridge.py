"""One proxied HTTP exchange, seen as a sequence of gateway phases, run through an ASGI app.

A gateway hands its policy service the exchange one phase at a time (request headers,
request body, response headers, response body chunks) and wants one answer per phase.
The HTTP proxy's guard is an ASGI middleware that sits between a client and an app. This
module joins the two: the guard runs on a task; its ``receive`` is fed from the gateway's
request phases; the app it wraps is a stand-in for the upstream (:class:`_Upstream`) whose
response comes from the gateway's response phases; what the guard sends downstream is
collected and compared with what the gateway would have sent. The guard's code is not
copied or re-implemented: the decisions are the HTTP proxy's by construction.

Each feed returns a :class:`PhaseResult`: ``continue`` (unchanged), ``replace`` (a new body
and the headers to set or remove) or ``respond`` (an immediate response the gateway sends
instead of forwarding).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from elicitguard.integrations.asgi import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Exchange", "PhaseResult", "SideRequest", "dispatch_upstream"]

#: Sends a request the guard makes on its own (the push era's reply POST) somewhere, or
#: ``None`` to drop it. Called with the scope and body; returns when the request is done.
SideRequest = Callable[[Scope, bytes], Awaitable[None]]

Headers = list[tuple[bytes, bytes]]


@dataclass(slots=True)
class PhaseResult:
    """What the gateway does with one phase."""

    kind: str  # "continue" | "replace" | "respond"
    body: bytes | None = None
    status: int = 200
    set_headers: Headers = field(default_factory=list)
    remove_headers: list[bytes] = field(default_factory=list)
    response_mode: str | None = None  # for response headers: "json" | "sse" | "pass"


_WANTS_BODY = "wants_body"
_FORWARDED = "forwarded"
_STARTED = "started"
_CHUNK_DONE = "chunk_done"


class Exchange:
    """One HTTP exchange driven through ``app`` phase by phase (see the module docstring).

    Not thread-safe; one per gateway stream, used from one event loop.
    """

    def __init__(
        self,
        app: ASGIApp,
        scope: Scope,
        *,
        end_of_stream: bool,
        side_request: SideRequest | None = None,
    ) -> None:
        self.app = app
        self.scope = scope
        self.side_request = side_request
        self._signals: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._request_body: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        if end_of_stream:
            self._request_body.set_result(b"")
        self._response_start: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._chunks: asyncio.Queue[tuple[bytes, bool]] = asyncio.Queue()
        self._downstream: list[Message] = []
        self._upstream_called = False
        self.forwarded_scope: Scope | None = None
        self.forwarded_body: bytes = b""
        self.request_body: bytes = b""
        self.response_start: Message | None = None
        self.mode = "pass"
        self._body_given = False
        self._task: asyncio.Task[None] | None = None

    # --- running ------------------------------------------------------------------------

    async def start(self) -> PhaseResult:
        """Request headers: start the guard; forward, wait for the body, or answer now."""
        token = _CURRENT.set(self)
        try:
            self._task = asyncio.ensure_future(self.app(self.scope, self._receive, self._send))
        finally:
            _CURRENT.reset(token)
        return await self._after_request_phase()

    async def request_body_phase(self, body: bytes) -> PhaseResult:
        """The whole request body (buffered by the gateway)."""
        self.request_body = body
        if not self._request_body.done():
            self._request_body.set_result(body)
        return await self._after_request_phase()

    async def response_headers_phase(
        self, status: int, headers: Headers, *, end_of_stream: bool
    ) -> PhaseResult:
        """The upstream's status and headers: tells the gateway how to send the body."""
        if not self._upstream_called:
            return PhaseResult("continue")
        message: Message = {"type": "http.response.start", "status": status, "headers": headers}
        self.response_start = message
        self._response_start.set_result(message)
        await self._wait(_STARTED)
        result = PhaseResult("continue", response_mode=self.mode)
        if self.mode in ("json", "sse"):
            result.remove_headers.append(b"content-length")  # the body may change
        if end_of_stream:
            ended = await self.response_body_phase(b"", end_of_stream=True)
            if ended.kind == "respond":
                return ended
            if ended.body:
                # A body where the upstream sent none (a JSON-RPC error for the request).
                return PhaseResult(
                    "respond",
                    body=ended.body,
                    status=ended.status,
                    set_headers=self._started_headers(),
                )
        return result

    async def response_body_phase(self, chunk: bytes, *, end_of_stream: bool) -> PhaseResult:
        """One body chunk (the whole body when buffered): what replaces it."""
        if not self._upstream_called or self.response_start is None:
            return PhaseResult("continue")
        before = len(self._downstream)
        await self._chunks.put((chunk, not end_of_stream))
        await self._wait(_CHUNK_DONE)
        if end_of_stream:
            await self._finish_task()
        out = self._downstream[before:]
        start = next((m for m in out if m["type"] == "http.response.start"), None)
        body = b"".join(m.get("body", b"") for m in out if m["type"] == "http.response.body")
        upstream_status = int(self.response_start.get("status", 200))
        if start is not None and int(start.get("status", 200)) != upstream_status:
            headers = [
                (k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"
            ]
            return PhaseResult(
                "respond", body=body, status=int(start["status"]), set_headers=headers
            )
        if body == chunk:
            return PhaseResult("continue")
        return PhaseResult("replace", body=body)

    async def close(self) -> None:
        """The gateway's stream ended: stop the guard if it is still waiting."""
        task = self._task
        if task is None or task.done():
            return
        if not self._request_body.done():
            self._request_body.cancel()
        if self._upstream_called and self.response_start is not None:
            await self._chunks.put((b"", False))
        task.cancel()
        with contextlib.suppress(BaseException):
            await task

    # --- phases -------------------------------------------------------------------------

    async def _after_request_phase(self) -> PhaseResult:
        signal = await self._next()
        if signal is None:  # the guard answered by itself
            return self._immediate()
        kind, value = signal
        if kind == _WANTS_BODY:
            return PhaseResult("continue", remove_headers=[b"accept-encoding"])
        if kind == _FORWARDED:
            scope, body = value
            return self._forward_result(scope, body)
        msg = f"unexpected signal {kind} in a request phase"
        raise RuntimeError(msg)

    def _forward_result(self, scope: Scope, body: bytes) -> PhaseResult:
        self.forwarded_scope = scope
        self.forwarded_body = body
        remove = [b"accept-encoding"]  # bodies must arrive uncompressed to be judged
        if body == self.request_body:
            return PhaseResult("continue", remove_headers=remove)
        original = {k.lower(): v for k, v in self.scope.get("headers", [])}
        changed = [(k, v) for k, v in scope.get("headers", []) if original.get(k.lower()) != v]
        return PhaseResult("replace", body=body, set_headers=changed, remove_headers=remove)

    def _immediate(self) -> PhaseResult:
        start = next((m for m in self._downstream if m["type"] == "http.response.start"), None)
        body = b"".join(
            m.get("body", b"") for m in self._downstream if m["type"] == "http.response.body"
        )
        status = int(start.get("status", 200)) if start is not None else 500
        headers = [
            (k, v)
            for k, v in (start.get("headers", []) if start is not None else [])
            if k.lower() != b"content-length"
        ]
        return PhaseResult("respond", body=body, status=status, set_headers=headers)

    def _started_headers(self) -> Headers:
        start = next((m for m in self._downstream if m["type"] == "http.response.start"), None)
        if start is None:
            return []
        return [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]

    async def _next(self) -> tuple[str, Any] | None:
        """The guard's next step, or ``None`` once it has finished (it answered itself)."""
        task = self._task
        if task is None:
            msg = "the exchange was not started"
            raise RuntimeError(msg)
        if not self._signals.empty():
            return self._signals.get_nowait()
        getter = asyncio.ensure_future(self._signals.get())
        done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            return getter.result()
        getter.cancel()
        task.result()  # re-raise the guard's failure, if it failed
        if not self._signals.empty():
            return self._signals.get_nowait()
        return None

    async def _wait(self, kind: str) -> None:
        signal = await self._next()
        if signal is None:
            return
        if signal[0] != kind:
            msg = f"expected {kind}, got {signal[0]}"
            raise RuntimeError(msg)

    async def _finish_task(self) -> None:
        task = self._task
        if task is not None:
            await task

    # --- the guard's side ---------------------------------------------------------------

    async def _receive(self) -> Message:
        if not self._request_body.done():
            self._signals.put_nowait((_WANTS_BODY, None))
        try:
            body = await self._request_body
        except asyncio.CancelledError:
            return {"type": "http.disconnect"}
        if self._body_given:
            # After the body: the client is still there until the exchange ends.
            await asyncio.Event().wait()
        self._body_given = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def _send(self, message: Message) -> None:
        self._downstream.append(message)

    async def _upstream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The stand-in for the upstream: what the gateway forwards, and what comes back."""
        if self._upstream_called:
            await self._side(scope, receive, send)
            return
        self._upstream_called = True
        body = await _read(receive)
        self._signals.put_nowait((_FORWARDED, (scope, body)))
        start = await self._response_start
        content_type = b""
        for key, value in start.get("headers", []):
            if key.lower() == b"content-type":
                content_type = value.lower()
        if content_type.startswith(b"application/json"):
            self.mode = "json"
        elif content_type.startswith(b"text/event-stream"):
            self.mode = "sse"
        await send(start)
        self._signals.put_nowait((_STARTED, None))
        while True:
            chunk, more = await self._chunks.get()
            await send({"type": "http.response.body", "body": chunk, "more_body": more})
            self._signals.put_nowait((_CHUNK_DONE, None))
            if not more:
                return

    async def _side(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read(receive)
        if self.side_request is not None:
            await self.side_request(scope, body)
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _read(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


_CURRENT: contextvars.ContextVar[Exchange] = contextvars.ContextVar("elicitguard_exchange")


async def dispatch_upstream(scope: Scope, receive: Receive, send: Send) -> None:
    """The app the guard wraps: the upstream stand-in of the exchange being driven.

    One guard serves every exchange (its round and session maps are shared, as in the HTTP
    proxy); each exchange's task carries which stand-in is its own.
    """
    await _CURRENT.get()._upstream(scope, receive, send)
