"""Pure ASGI middleware that enforces the policy on Streamable HTTP traffic.

Wrap any MCP Streamable HTTP app (``mcp.streamable_http_app()``, a FastMCP app) or, as
``elicitguard proxy http`` does, an app that forwards to a remote server::

    app = ElicitGuardMiddleware(mcp.streamable_http_app(), policy="policy.yaml")
    app = ElicitGuardMiddleware(mcp.streamable_http_app(), Relay(engine, side=Side.SERVER))

(the first builds its own engine and relay; the second shares ones the caller holds).

It needs no web framework: it wraps ``receive`` and ``send``.

* ``POST`` to the MCP path: the body (one JSON-RPC message, at most
  ``limits.max_message_bytes``) is judged before the app sees it. A blocked request is
  answered here; a blocked notification gets ``202``; a changed body is passed on with its
  ``Content-Length`` and the ``Mcp-Method``, ``Mcp-Name`` and ``MCP-Protocol-Version`` headers
  made consistent with it. Every other header, ``Mcp-Param-*`` included, passes untouched.
* Responses: a JSON body is judged whole (it is one message); an SSE body is streamed and
  each event is judged as it completes, never the whole stream; unchanged events go on byte
  for byte, and event ids survive a dropped event.
* A server's pushed ``elicitation/create`` that the policy blocks never reaches the client;
  the guard answers the server with a new ``POST`` holding the JSON-RPC error, as the client
  would have (the push era's reply POST, with the session's headers).
* When the app's response ends before it answered the client's request (the upstream died),
  the client gets a JSON-RPC error for that request instead of silence.
* ``GET`` streams are judged like POST streams; ``DELETE`` forgets the session's state.
* Bodies and encodings, both directions (:mod:`~elicitguard.integrations.bodies`,
  :mod:`~elicitguard.integrations.encodings`): the app is asked for ``Accept-Encoding:
  identity``; a body that still arrives encoded (gzip, deflate, br, zstd, stacked) is decoded
  within ``limits.max_message_bytes`` (a stream event by event), judged, and passed on
  decoded (identity, which every client accepts), or refused with an error that names the
  encoding. A body that parses as JSON-RPC under another label than JSON or SSE
  (``text/plain``, none) is judged or refused as ``limits.unlabelled_jsonrpc`` says
  (default ``refuse``). An SSE stream's last event without its blank line is judged too.

The middleware is :mod:`elicitguard.integrations.asgi`; the response side is
:mod:`~elicitguard.integrations.asgi_responses`, the MCP headers
:mod:`~elicitguard.integrations.asgi_headers` and the ASGI types and exchange
:mod:`~elicitguard.integrations.asgi_types`. This module stays one piece (about 600 lines)
on purpose: it is the one class that follows a request from ``receive`` to ``send`` (read,
judge, refuse or forward, answer a push), and its methods read in that order; splitting it
would scatter one exchange's story over several files.

Session state lives under the ``Mcp-Session-Id`` in the push era. A 2026-07-28 exchange has
no session: it gets a state of its own for its pending id, sharing one map of input-required
rounds (keyed by the round's ``requestState``) per credential, so that a retry on a new
connection still finds the entries the guard removed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
from typing import Any

from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy, load_policy
from elicitguard.errors import FrameError
from elicitguard.identity.principal import principal_from_scope
from elicitguard.integrations.actions import (
    PARSE_ERROR,
    Drop,
    Forward,
    Outcome,
    Relay,
    Replace,
    Reply,
    dumps,
    error_response,
    recover_id,
)
from elicitguard.integrations.asgi_headers import (
    HEADER_MISMATCH,
    consistent_headers,
    content_type_of,
    header_mismatch,
    header_values,
    identity_accepted,
    scope_headers,
    set_length,
    without_headers,
)
from elicitguard.integrations.asgi_responses import ResponseFilter
from elicitguard.integrations.asgi_types import (
    NO_ID,
    UPSTREAM_END,
    ASGIApp,
    Exchange,
    Message,
    Receive,
    Scope,
    Send,
)
from elicitguard.integrations.bodies import label_of, sniff
from elicitguard.integrations.encodings import (
    BodyTooLarge,
    EncodingError,
    content_codings,
    decode_body,
)
from elicitguard.integrations.recorder import Recorder
from elicitguard.protocol.envelope import Direction, Side, Transport
from elicitguard.protocol.parsing import has_duplicate_keys
from elicitguard.protocol.session import BoundedMap, ChainState, SessionState

__all__ = [
    "UPSTREAM_END",
    "ASGIApp",
    "ElicitGuardMiddleware",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "consistent_headers",
    "header_mismatch",
]


INTERNAL_ERROR = -32603
_END_MESSAGES = {
    "upstream_timeout": "elicitguard: the MCP server did not answer in time",
    "proxy_shutdown": "elicitguard: the proxy is shutting down",
}
UNSUPPORTED_MEDIA = 415
C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT


class ElicitGuardMiddleware:
    """Enforces a policy on one MCP endpoint of an ASGI app (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        relay: Relay | None = None,
        *,
        policy: Policy | str | os.PathLike[str] | None = None,
        side: Side = Side.SERVER,
        path: str | None = "/mcp",
        recorder: Recorder | None = None,
    ) -> None:
        """Guard ``app`` with ``relay``, or with a relay of its own built from ``policy`` (a
        compiled policy, a policy file, ``builtin:NAME``; the default policy when ``None``)
        for ``side``: ``ElicitGuardMiddleware(app, policy="policy.yaml")``, and so
        ``app.add_middleware(ElicitGuardMiddleware, policy=...)`` in Starlette."""
        if relay is None:
            compiled = policy if isinstance(policy, Policy) else load_policy(policy)
            relay = Relay(Engine(compiled), side=side, transport=Transport.HTTP)
        elif policy is not None:
            raise TypeError("ElicitGuardMiddleware takes a relay or a policy, not both")
        self.app = app
        self.relay = relay
        self.path = path.rstrip("/") or "/" if path is not None else None
        self.recorder = recorder
        self.max_bytes = relay.policy.limits.max_message_bytes
        self.unlabelled = relay.policy.limits.unlabelled_jsonrpc
        self._chains: BoundedMap[str, BoundedMap[str, ChainState]] = BoundedMap(4096)
        self._notices: BoundedMap[str, set[str]] = BoundedMap(4096)

    # --- dispatch -----------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._is_mcp(scope):
            await self.app(scope, receive, send)
            return
        method = scope.get("method")
        if method == "POST":
            await self._post(identity_accepted(scope), receive, send)
        elif method == "GET":
            exchange = self._exchange(identity_accepted(scope))
            try:
                await self.app(scope, receive, ResponseFilter(self, exchange, send).send)
            finally:
                self._finish(exchange)
        elif method == "DELETE":
            await self._delete(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def _is_mcp(self, scope: Scope) -> bool:
        if self.path is None:
            return True
        path = str(scope.get("path", "")).rstrip("/") or "/"
        return path == self.path

    # --- sessions -----------------------------------------------------------------------

    def _exchange(self, scope: Scope) -> Exchange:
        headers = scope_headers(scope)
        session_id = headers.get("mcp-session-id")
        principal = principal_from_scope(scope)
        if session_id:
            return Exchange(
                scope, headers, "http:" + session_id, ephemeral=False, principal=principal
            )
        key = "x:" + os.urandom(12).hex()
        state = self.relay.engine.store.get(key)
        state.chains = self._shared_chains(headers)
        state.notices = self._shared_notices(headers)
        return Exchange(scope, headers, key, ephemeral=True, principal=principal)

    def _shared_chains(self, headers: dict[str, str]) -> BoundedMap[str, ChainState]:
        """Rounds are shared per credential, never across credentials."""
        credential = headers.get("authorization", "")
        key = hashlib.sha256(credential.encode("utf-8", "surrogatepass")).hexdigest()
        chains = self._chains.get(key)
        if chains is None:
            chains = BoundedMap(1024)
            self._chains.put(key, chains)
        return chains

    def _shared_notices(self, headers: dict[str, str]) -> set[str]:
        """Session-level notices (EG501) for requests without a session, per credential."""
        credential = headers.get("authorization", "")
        key = hashlib.sha256(credential.encode("utf-8", "surrogatepass")).hexdigest()
        notices = self._notices.get(key)
        if notices is None:
            notices = set()
            self._notices.put(key, notices)
        return notices

    def _adopt(self, exchange: Exchange) -> None:
        """The initialize response named a session: move the exchange's state under it."""
        if not exchange.ephemeral or exchange.new_session is None:
            return
        store = self.relay.engine.store
        old = store.get(exchange.session)
        new_key = "http:" + exchange.new_session
        new = store.get(new_key)
        for spec in dataclasses.fields(SessionState):
            setattr(new, spec.name, getattr(old, spec.name))
        new.chains = BoundedMap(1024)
        store.drop(exchange.session)
        exchange.session = new_key
        exchange.ephemeral = False

    def _finish(self, exchange: Exchange) -> None:
        if exchange.ephemeral:
            self.relay.engine.store.drop(exchange.session)

    # --- POST ---------------------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        exchange = self._exchange(scope)
        try:
            body = await self._read_body(receive)
            if body is None:
                return  # the client went away
            data, size = body
            if size > self.max_bytes:
                error = FrameError(
                    "too_large",
                    f"frame of {size} bytes is over the limit of {self.max_bytes} bytes",
                )
                outcome = self.relay.bad_frame(data, error, C2S, session=exchange.session)
                await self._answer_bad(outcome, send)
                return
            opened = await self._open_request(data, exchange, send)
            if opened is None:
                return
            data = opened
            scope = exchange.scope
            parsed = self.relay.parse(data, C2S, session=exchange.session)
            if not isinstance(parsed, dict):
                await self._answer_bad(parsed, send)
                return
            if has_duplicate_keys(data):
                # Two readings of one body: the upstream's parser may keep another copy.
                error = FrameError("duplicate_keys", "an object in the body repeats a key")
                outcome = self.relay.bad_frame(data, error, C2S, session=exchange.session)
                await self._answer_bad(outcome, send)
                return
            mismatch = header_mismatch(exchange.judged_headers, parsed)
            if mismatch is not None:
                error = FrameError("header_mismatch", mismatch)
                outcome = self.relay.bad_frame(data, error, C2S, session=exchange.session)
                await self._answer_mismatch(outcome, parsed.get("id"), mismatch, send)
                return
            self._record(parsed, C2S, exchange)
            outcome = self.relay.inspect(
                parsed,
                C2S,
                raw=data,
                session=exchange.session,
                headers=exchange.judged_headers,
                protocol_version=exchange.protocol_version,
                principal=exchange.principal,
            )
            if isinstance(outcome, Reply):
                await _respond(send, 200, outcome.to_bytes())
                return
            if isinstance(outcome, Drop):
                await _respond(send, 202, b"", content_type=None)
                return
            if "method" in parsed and "id" in parsed:
                exchange.request_id = parsed["id"]
            if isinstance(outcome, Replace):
                data = outcome.to_bytes()
                scope = dict(scope)
                scope["headers"] = set_length(
                    consistent_headers(list(scope.get("headers", [])), outcome.message), len(data)
                )
                exchange.scope = scope
            await self.app(scope, _replay(data, receive), ResponseFilter(self, exchange, send).send)
        finally:
            self._finish(exchange)

    async def _open_request(self, data: bytes, exchange: Exchange, send: Send) -> bytes | None:
        """The body as the server would read it (decoded), or ``None`` once refused here.

        An encoded body is decoded within the limit and passed on decoded; a body that reads
        as JSON-RPC under another label is judged or refused (``limits.unlabelled_jsonrpc``).
        """
        headers = list(exchange.scope.get("headers", []))
        codings = content_codings(header_values(headers, b"content-encoding"))
        if codings:
            try:
                data = decode_body(data, codings, limit=self.max_bytes)
            except EncodingError as exc:
                await self._refuse_request(
                    data,
                    exchange,
                    send,
                    "encoding",
                    f"the request body cannot be decoded: {exc}",
                    {"reason": "bad_encoding", "encoding": exc.encoding},
                )
                return None
            except BodyTooLarge as exc:
                await self._refuse_request(
                    data,
                    exchange,
                    send,
                    "too_large",
                    f"the {exc.encoding}-encoded request body decodes to over "
                    f"{self.max_bytes} bytes",
                    {"reason": "too_large", "encoding": exc.encoding},
                    status=413,
                )
                return None
            scope = dict(exchange.scope)
            scope["headers"] = set_length(without_headers(headers, b"content-encoding"), len(data))
            exchange.scope = scope
        content_type = content_type_of(headers)
        if label_of(content_type) != "json":
            found = sniff(data)
            labels = b", ".join(header_values(headers, b"content-type")).decode("latin-1")
            shown = labels or "no content type"
            if found == "sse" or (found == "json" and self.unlabelled == "refuse"):
                await self._refuse_request(
                    data,
                    exchange,
                    send,
                    "content_type",
                    f"a JSON-RPC request body labelled {shown!r}; send application/json",
                    {"reason": "unlabelled_jsonrpc"},
                )
                return None
        return data

    async def _refuse_request(
        self,
        data: bytes,
        exchange: Exchange,
        send: Send,
        kind: str,
        message: str,
        detail: dict[str, Any],
        *,
        status: int = UNSUPPORTED_MEDIA,
    ) -> None:
        """HTTP 415 (413 for a bomb) with a JSON-RPC error that says why (audited as a bad
        frame: EG904, EG903 when too large)."""
        error = FrameError(kind, message)
        outcome = self.relay.bad_frame(b"", error, C2S, session=exchange.session)
        decision = outcome.decision
        jsonrpc_id, _ = recover_id(data)
        detail = {
            **detail,
            "codes": list(decision.codes) if decision is not None else [],
            "decision_id": decision.decision_id if decision is not None else "",
        }
        body = dumps(
            error_response(
                jsonrpc_id, PARSE_ERROR, f"elicitguard: {message}", {"elicitguard": detail}
            )
        )
        await _respond(send, status, body)

    def refusal(
        self, exchange: Exchange, kind: str, message: str, detail: dict[str, Any]
    ) -> bytes | None:
        """A server body the guard will not pass: audited (EG904); the error the client gets
        for its pending request, or ``None`` when none is pending."""
        error = FrameError(kind, message)
        outcome = self.relay.bad_frame(b"", error, S2C, session=exchange.session)
        if exchange.request_id is NO_ID or exchange.answered:
            return None
        exchange.answered = True
        decision = outcome.decision
        data = {
            **detail,
            "codes": list(decision.codes) if decision is not None else [],
            "decision_id": decision.decision_id if decision is not None else "",
        }
        return dumps(
            error_response(
                exchange.request_id,
                INTERNAL_ERROR,
                f"elicitguard: {message}",
                {"elicitguard": data},
            )
        )

    async def _read_body(self, receive: Receive) -> tuple[bytes, int] | None:
        """The request body, at most the limit kept (plus the total size)."""
        chunks: list[bytes] = []
        kept = 0
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if kept <= self.max_bytes:
                chunks.append(chunk)
                kept += len(chunk)
            if not message.get("more_body", False):
                break
        data = b"".join(chunks)
        return (data if size <= self.max_bytes else data[:8192]), size

    async def _answer_mismatch(
        self, outcome: Outcome, jsonrpc_id: Any, reason: str, send: Send
    ) -> None:
        """A header that disagrees with its body: -32020 HeaderMismatch, HTTP 400 (TR-01)."""
        decision = outcome.decision
        data = {
            "elicitguard": {
                "codes": list(decision.codes) if decision is not None else [],
                "decision_id": decision.decision_id if decision is not None else "",
            }
        }
        safe_id = jsonrpc_id if isinstance(jsonrpc_id, (str, int)) else None
        body = dumps(error_response(safe_id, HEADER_MISMATCH, reason, data))
        await _respond(send, 400, body)

    async def _answer_bad(self, outcome: Outcome, send: Send) -> None:
        """A client frame that could not be parsed: a JSON-RPC error, HTTP 400."""
        if isinstance(outcome, Reply):
            body = outcome.to_bytes()
        else:
            decision = outcome.decision
            codes = list(decision.codes) if decision is not None else []
            decision_id = decision.decision_id if decision is not None else ""
            body = dumps(
                error_response(
                    None,
                    PARSE_ERROR,
                    "elicitguard could not use this message",
                    {"elicitguard": {"codes": codes, "decision_id": decision_id}},
                )
            )
        await _respond(send, 400, body)

    # --- DELETE -------------------------------------------------------------------------

    async def _delete(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = scope_headers(scope).get("mcp-session-id")
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        await self.app(scope, receive, watch)
        if session_id and status and 200 <= status[0] < 300:
            self.relay.engine.store.drop("http:" + session_id)

    # --- messages from the server -------------------------------------------------------

    async def server_message(self, data: bytes, exchange: Exchange) -> bytes | None:
        """Judge one message from the server; return what the client gets (``None``: nothing)."""
        parsed = self.relay.parse(data, S2C, session=exchange.session)
        if not isinstance(parsed, dict):
            return await self._server_bad(parsed, exchange)
        self._record(parsed, S2C, exchange)
        is_answer = "method" not in parsed and exchange.request_id is not NO_ID
        if is_answer and _same_id(parsed.get("id", NO_ID), exchange.request_id):
            exchange.answered = True
        outcome = self.relay.inspect(
            parsed,
            S2C,
            raw=data,
            session=exchange.session,
            headers=exchange.headers,
            protocol_version=exchange.protocol_version,
            principal=exchange.principal,
        )
        if exchange.answered and exchange.new_session is not None:
            self._adopt(exchange)
        if isinstance(outcome, Forward):
            return data
        if isinstance(outcome, Replace):
            return outcome.to_bytes()
        if isinstance(outcome, Reply):
            await self._reply_to_server(outcome.to_bytes(), exchange)
            return None
        return self.dropped(outcome, exchange)

    async def _server_bad(self, outcome: Outcome, exchange: Exchange) -> bytes | None:
        if isinstance(outcome, Reply):
            await self._reply_to_server(outcome.to_bytes(), exchange)
            return None
        if isinstance(outcome, Drop):
            return self.dropped(outcome, exchange)
        return None

    def dropped(self, outcome: Outcome, exchange: Exchange) -> bytes | None:
        """A dropped server message that answered the client's request becomes an error."""
        jsonrpc_id = outcome.jsonrpc_id if isinstance(outcome, Drop) else None
        if jsonrpc_id is None or not _same_id(jsonrpc_id, exchange.request_id):
            return None
        exchange.answered = True
        decision = outcome.decision
        return dumps(
            error_response(
                jsonrpc_id,
                INTERNAL_ERROR,
                "elicitguard dropped the server's answer",
                {
                    "elicitguard": {
                        "codes": list(decision.codes) if decision is not None else [],
                        "decision_id": decision.decision_id if decision is not None else "",
                    }
                },
            )
        )

    def unanswered(self, exchange: Exchange) -> bytes | None:
        """The error the client gets when the response ended without answering its request."""
        if exchange.request_id is NO_ID or exchange.answered:
            return None
        exchange.answered = True
        end = exchange.scope.get(UPSTREAM_END)
        if isinstance(end, dict) and end.get("reason") in _END_MESSAGES:
            message, data = _END_MESSAGES[end["reason"]], dict(end)
        else:
            message = "elicitguard: the MCP server closed the stream before answering"
            data = {"reason": "upstream_closed"}
        return dumps(
            error_response(exchange.request_id, INTERNAL_ERROR, message, {"elicitguard": data})
        )

    async def _reply_to_server(self, body: bytes, exchange: Exchange) -> None:
        """The push era's reply POST: answer the server's request as the client would have."""
        drop = {b"content-length", b"content-type", b"accept", b"mcp-method", b"mcp-name"}
        headers = [(k, v) for k, v in exchange.scope.get("headers", []) if k.lower() not in drop]
        if exchange.new_session is not None and not any(
            k.lower() == b"mcp-session-id" for k, _ in headers
        ):
            headers.append((b"mcp-session-id", exchange.new_session.encode("latin-1")))
        headers += [
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-length", str(len(body)).encode("ascii")),
        ]
        scope = dict(exchange.scope)
        scope.update(method="POST", headers=headers)

        answered = asyncio.Event()

        async def discard(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered.set()

        async def until_answered() -> Message:
            # Nobody can leave this request early: it "disconnects" once answered, as a
            # finished request does under uvicorn (a forwarding app watches for leavers).
            await answered.wait()
            return {"type": "http.disconnect"}

        await self.app(scope, _replay(body, until_answered), discard)

    def _record(self, message: dict[str, Any], direction: Direction, exchange: Exchange) -> None:
        if self.recorder is not None:
            session_id = exchange.headers.get("mcp-session-id") or exchange.new_session
            self.recorder.record(
                message,
                direction,
                session=session_id,
                headers=exchange.headers if direction is C2S else None,
                protocol_version=exchange.protocol_version,
            )


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _replay(body: bytes, receive: Receive | None) -> Receive:
    """A ``receive`` that yields ``body`` once, then defers to the real one (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        if receive is None:
            return {"type": "http.disconnect"}
        return await receive()

    return replay


async def _respond(
    send: Send, status: int, body: bytes, *, content_type: bytes | None = b"application/json"
) -> None:
    headers = [(b"content-length", str(len(body)).encode("ascii"))]
    if content_type is not None:
        headers.append((b"content-type", content_type))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
