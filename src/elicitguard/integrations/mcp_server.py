"""elicitguard inside a server built on the official ``mcp`` SDK (``elicitguard[mcp]``).

Where a server can stand depends on the era (PROTOCOL.md c.5), so :class:`ServerGuard`
offers one hook per place and one engine behind all of them:

* :meth:`ServerGuard.middleware`: an ``MCPServer(middleware=[...])`` / ``Server.middleware``
  entry for 2026-07-28. It sees each request on its way in (the retry's ``inputResponses``,
  with the plaintext ``requestState`` the SDK unsealed) and each result on its way out (an
  ``InputRequiredResult``): blocked ``inputRequests`` entries are removed and answered with
  ``decline`` on the retry, answers are checked before the handler reads them, and a
  ``-32042`` error raised by a handshake-era tool is filtered like any other. It never sees a
  pushed ``elicitation/create``.
* :meth:`ServerGuard.streams`: wraps the ``(read, write)`` pair given to
  ``Server.run(read, write, ...)`` (``stdio_server()``, in-memory streams). It sees every
  frame of both eras, pushed requests included: a blocked ``elicitation/create`` never leaves,
  and the server's own request fails with the policy's error (``-31001`` and
  ``data.elicitguard``), delivered on the read side as if the client had answered.
* :meth:`ServerGuard.http_app`: ``mcp.streamable_http_app()`` behind elicitguard's ASGI
  middleware (:mod:`elicitguard.integrations.asgi`).

Use one hook per message path: the middleware for 2026-07-28 over HTTP, the streams for
stdio (they cover both eras), the ASGI app for Streamable HTTP in both eras.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import anyio
import anyio.abc
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel

from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy
from elicitguard.identity.sealing import RequestStateGuard
from elicitguard.integrations._sdk import (
    DelegatingWriter,
    error_data,
    make_engine,
    message_dict,
    session_message,
)
from elicitguard.integrations.actions import (
    Drop,
    Forward,
    Outcome,
    Relay,
    Replace,
    Reply,
    blocked_error,
)
from elicitguard.protocol.envelope import Direction, Side, Transport
from elicitguard.protocol.versions import is_modern, normalise_version

if TYPE_CHECKING:
    from elicitguard.integrations.asgi import ASGIApp

__all__ = ["Exchange", "GuardMiddleware", "ServerGuard", "input_required_dict"]

_MODERN_SESSION = "mcp-server:modern"


class ServerGuard:
    """Enforces a policy on the elicitation an ``mcp`` server sends and receives.

    ``server`` is the operator's name for this server (what exceptions' ``where: {server:}``
    match). Pass an ``engine`` or a ``policy`` (a file, ``builtin:NAME`` or a loaded policy).
    """

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        policy: str | os.PathLike[str] | Policy | None = None,
        server: str | None = None,
        sealing: RequestStateGuard | None = None,
    ) -> None:
        self.engine = make_engine(engine, policy)
        self.policy = self.engine.policy
        self.server = server
        #: Opt-in requestState sealing for the stream and ASGI integrations (the low-level
        #: ``Server`` has none of its own): ``ServerGuard(..., sealing=build_sealing(engine))``.
        #: ``MCPServer`` seals by itself, so its middleware never uses this.
        self.sealing = sealing

    def relay(self, transport: Transport | None = None, *, middleware: bool = False) -> Relay:
        """A relay on this guard's engine, on the server side.

        ``middleware``: for ``MCPServer`` middleware, which sees ``requestState`` after the
        SDK unsealed it: no sealing, and EG503 (judged on wire bytes only) is skipped.
        """
        if middleware:
            return Relay(
                self.engine,
                side=Side.SERVER,
                transport=transport,
                server=self.server,
                location={"request_state": "plaintext"},
            )
        return Relay(
            self.engine,
            side=Side.SERVER,
            transport=transport,
            server=self.server,
            sealing=self.sealing,
        )

    def middleware(self) -> GuardMiddleware:
        """The ``ServerMiddleware`` for ``MCPServer(middleware=[...])`` (2026-07-28)."""
        return GuardMiddleware(self)

    @asynccontextmanager
    async def streams(
        self,
        read: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
        *,
        transport: Transport | None = Transport.STDIO,
        session: str | None = None,
    ) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
        """The stream pair for ``Server.run``, guarded; one connection (session) per call.

        ::

            async with stdio_server() as (read, write):
                async with guard.streams(read, write) as (read, write):
                    await server.run(read, write, server.create_initialization_options())
        """
        key = session or f"mcp-server:{uuid.uuid4().hex}"
        relay = self.relay(transport)
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](64)
        async with anyio.create_task_group() as tg:
            writer = _GuardedWriter(write, relay, key, send, tg)
            tg.start_soon(_pump, read, send, write, relay, key)
            try:
                yield receive, writer
            finally:
                tg.cancel_scope.cancel()
                await receive.aclose()
        self.engine.store.drop(key)

    async def run_stdio(self, server: Any) -> None:
        """Serve ``server`` (an ``MCPServer`` or a low-level ``Server``) on stdio, guarded.

        The guarded twin of ``MCPServer.run_stdio_async()``: both eras, pushed requests
        included, pass through :meth:`streams`.
        """
        from mcp.server.stdio import stdio_server

        lowlevel = getattr(server, "_lowlevel_server", server)  # MCPServer keeps it private
        async with stdio_server() as (read, write), self.streams(read, write) as (r, w):
            await lowlevel.run(r, w, lowlevel.create_initialization_options())

    def http_app(self, app: ASGIApp, *, path: str | None = "/mcp") -> ASGIApp:
        """``app`` (e.g. ``mcp.streamable_http_app()``) behind elicitguard's ASGI middleware.

        Covers both eras on Streamable HTTP: pushed requests on SSE streams and the reply
        POST, ``InputRequiredResult`` bodies and retries (``requestState`` as sealed on the
        wire), with ``Mcp-*`` headers kept consistent with any body it changes.
        """
        from elicitguard.identity.http_auth import RequireAuth
        from elicitguard.identity.setup import build_auth
        from elicitguard.integrations.asgi import ElicitGuardMiddleware

        guarded = ElicitGuardMiddleware(app, self.relay(Transport.HTTP), path=path)
        # With `identity.audience` in the policy: 401 challenges, the RFC 9728 metadata, and
        # the verified principal on every envelope (identity issue).
        auth = build_auth(self.engine, server=self.server)
        return guarded if auth is None else RequireAuth(guarded, auth)


# --- Server.run streams ---------------------------------------------------------------------


async def _pump(
    read: ReadStream[SessionMessage | Exception],
    send: anyio.abc.ObjectSendStream[SessionMessage | Exception],
    write: WriteStream[SessionMessage],
    relay: Relay,
    key: str,
) -> None:
    """Client-to-server frames: evaluate, then hand on to the server (or answer the client)."""
    try:
        async for item in read:
            if not isinstance(item, SessionMessage):
                await send.send(item)
                continue
            outcome = relay.inspect(message_dict(item), Direction.CLIENT_TO_SERVER, session=key)
            if isinstance(outcome, Forward):
                await send.send(item)
            elif isinstance(outcome, Replace):
                await send.send(session_message(outcome.message, item.metadata))
            elif isinstance(outcome, Reply):
                await write.send(session_message(outcome.message))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        await send.aclose()


class _GuardedWriter(DelegatingWriter):
    """Server-to-client frames: evaluate; a refused request is answered on the read side."""

    def __init__(
        self,
        inner: WriteStream[SessionMessage],
        relay: Relay,
        key: str,
        inject: anyio.abc.ObjectSendStream[SessionMessage | Exception],
        tg: anyio.abc.TaskGroup,
    ) -> None:
        self._inner = inner
        self._relay = relay
        self._key = key
        self._inject = inject
        self._tg = tg

    async def send(self, item: SessionMessage, /) -> None:
        outcome = self._relay.inspect(
            message_dict(item), Direction.SERVER_TO_CLIENT, session=self._key
        )
        if isinstance(outcome, Forward):
            await self._inner.send(item)
        elif isinstance(outcome, Replace):
            await self._inner.send(session_message(outcome.message, item.metadata))
        elif isinstance(outcome, Reply):
            # Delivered from a task of its own: the server's reader may be the one writing.
            self._tg.start_soon(self._answer, session_message(outcome.message))

    async def _answer(self, item: SessionMessage) -> None:
        # When the connection is gone the pending request dies with it.
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._inject.send(item)


# --- middleware that sees params and results ------------------------------------------------


class Exchange:
    """One request on its way in and its result on its way out, for middleware.

    Middleware sees params and results, not frames, so each message is rebuilt with an id
    of the exchange's own (ids of different clients would collide in the shared
    2026-07-28 state). Every exchange ends with :meth:`result` or :meth:`error`, which also
    settles the bookkeeping the request left in the session state.
    """

    _ids = itertools.count(1)

    def __init__(self, guard: ServerGuard, relay: Relay, session: str, version: str | None) -> None:
        self.guard = guard
        self.relay = relay
        self.session = session
        self.version = version
        self.id = f"eg-{next(self._ids)}"

    def _inspect(self, message: dict[str, Any], direction: Direction) -> Outcome:
        return self.relay.inspect(
            message, direction, session=self.session, protocol_version=self.version
        )

    def request(self, method: str, params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """The params the handler should get (``params`` itself when unchanged).

        Raises ``MCPError`` when the request is refused.
        """
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        outcome = self._inspect(message, Direction.CLIENT_TO_SERVER)
        if isinstance(outcome, Forward):
            return params
        if isinstance(outcome, Replace):
            new = outcome.message.get("params")
            return new if isinstance(new, Mapping) else None
        self.settle()
        raise _refusal(outcome, self.guard)

    def result(self, result: dict[str, Any] | None) -> dict[str, Any] | None:
        """The result to send instead of ``result`` (an ``InputRequiredResult`` as a dict).

        ``None`` means unchanged. Pass ``None`` for results that carry no elicitation: only
        the bookkeeping runs. Raises ``MCPError`` when nothing may be sent.
        """
        if result is None:
            self.settle()
            return None
        outcome = self._inspect(
            {"jsonrpc": "2.0", "id": self.id, "result": result}, Direction.SERVER_TO_CLIENT
        )
        if isinstance(outcome, Forward):
            return None
        if isinstance(outcome, Replace):
            if "error" in outcome.message:
                raise MCPError.from_error_data(error_data(outcome.message))
            new = outcome.message.get("result")
            if isinstance(new, dict):
                return new
        raise _refusal(outcome, self.guard)

    def error(self, exc: MCPError) -> MCPError:
        """The error to raise instead of ``exc`` (a ``-32042`` may lose blocked entries)."""
        error = exc.error.model_dump(by_alias=True, mode="json", exclude_none=True)
        outcome = self._inspect(
            {"jsonrpc": "2.0", "id": self.id, "error": error}, Direction.SERVER_TO_CLIENT
        )
        if isinstance(outcome, Replace) and "error" in outcome.message:
            return MCPError.from_error_data(error_data(outcome.message))
        return exc

    def settle(self) -> None:
        """Forget the request (no result will be evaluated)."""
        self._inspect({"jsonrpc": "2.0", "id": self.id, "result": {}}, Direction.SERVER_TO_CLIENT)


class GuardMiddleware:
    """``ServerMiddleware`` for ``MCPServer(middleware=[...])``: requests in, results out.

    Handshake-era connections get a session each; 2026-07-28 rounds share one, where a
    retry finds its round through ``requestState`` (plaintext here: the SDK unsealed it)
    or through method, name and arguments.
    """

    def __init__(self, guard: ServerGuard) -> None:
        self.guard = guard
        self.relay = guard.relay(middleware=True)
        self._sessions: WeakKeyDictionary[Any, str] = WeakKeyDictionary()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        version = normalise_version(ctx.protocol_version)
        exchange = Exchange(self.guard, self.relay, self._session(ctx, version), version)
        params = exchange.request(ctx.method, ctx.params)
        if params is not ctx.params:
            ctx = replace(ctx, params=params)
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            raise exchange.error(exc) from None
        except BaseException:
            exchange.settle()
            raise
        replacement = exchange.result(input_required_dict(result))
        return result if replacement is None else replacement

    def _session(self, ctx: ServerRequestContext[Any, Any], version: str | None) -> str:
        if is_modern(version):
            return _MODERN_SESSION
        key = self._sessions.get(ctx.session)
        if key is None:
            key = f"mcp-server:{uuid.uuid4().hex}"
            self._sessions[ctx.session] = key
        return key


def input_required_dict(result: Any) -> dict[str, Any] | None:
    """``result`` as a dict when it is an ``InputRequiredResult`` (or shaped like one)."""
    if isinstance(result, dict):
        return result if result.get("resultType") == "input_required" else None
    if isinstance(result, BaseModel) and getattr(result, "result_type", None) == "input_required":
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped
    return None


def _refusal(outcome: Outcome, guard: ServerGuard) -> MCPError:
    """The error a refused request or result becomes."""
    if isinstance(outcome, (Reply, Replace)) and "error" in outcome.message:
        return MCPError.from_error_data(error_data(outcome.message))
    decision = outcome.decision
    if decision is None or isinstance(outcome, Drop):
        reason = outcome.reason if isinstance(outcome, Drop) else "blocked"
        return MCPError(guard.policy.push_error_code, f"Blocked by elicitguard policy ({reason})")
    return MCPError.from_error_data(error_data(blocked_error(None, decision, guard.policy)))
