"""Pure ASGI middleware that enforces the policy on Streamable HTTP traffic.

Wrap any MCP Streamable HTTP app (``mcp.streamable_http_app()``, a FastMCP app) or, as
``elicitguard proxy http`` does, an app that forwards to a remote server::

    app = ElicitGuardMiddleware(mcp.streamable_http_app(), Relay(engine, side=Side.SERVER))

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

Session state lives under the ``Mcp-Session-Id`` in the push era. A 2026-07-28 exchange has
no session: it gets a state of its own for its pending id, sharing one map of input-required
rounds (keyed by the round's ``requestState``) per credential, so that a retry on a new
connection still finds the entries the guard removed.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import os
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

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
from elicitguard.integrations.bodies import label_of, sniff
from elicitguard.integrations.encodings import (
    BodyTooLarge,
    EncodingError,
    StreamDecoder,
    content_codings,
    decode_body,
)
from elicitguard.integrations.recorder import Recorder
from elicitguard.integrations.sse import SseEvent, SseParser, format_event, parse_events
from elicitguard.protocol.envelope import Direction
from elicitguard.protocol.parsing import has_duplicate_keys
from elicitguard.protocol.session import BoundedMap, ChainState, SessionState
from elicitguard.protocol.versions import META_PROTOCOL_VERSION

__all__ = [
    "UPSTREAM_END",
    "ASGIApp",
    "ElicitGuardMiddleware",
    "Receive",
    "Scope",
    "Send",
    "consistent_headers",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

INTERNAL_ERROR = -32603
#: Scope key the forwarding app sets when it cut the upstream's answer short on purpose (a
#: timeout, a shutdown): ``{"reason": ..., **details}``, carried by the error the client gets.
UPSTREAM_END = "elicitguard.upstream_end"
_END_MESSAGES = {
    "upstream_timeout": "elicitguard: the MCP server did not answer in time",
    "proxy_shutdown": "elicitguard: the proxy is shutting down",
}
UNSUPPORTED_MEDIA = 415
_NO_ID = object()
_NAMED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT


def consistent_headers(
    headers: list[tuple[bytes, bytes]], message: dict[str, Any]
) -> list[tuple[bytes, bytes]]:
    """Headers that agree with ``message``: Content-Length, and the Mcp-* headers present.

    The 2026-07-28 transport makes a server refuse a request whose ``Mcp-Method``,
    ``Mcp-Name`` or ``MCP-Protocol-Version`` differs from its body (-32020), so a guard that
    rewrites a body must rewrite these too. Headers the client did not send are not added.
    """
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    method = message.get("method")
    meta = params.get("_meta")
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    name = params.get("name", params.get("uri")) if method in _NAMED_METHODS else None
    out: list[tuple[bytes, bytes]] = []
    for key, value in headers:
        lower = key.lower()
        if lower == b"content-length":
            continue
        if lower == b"mcp-method" and isinstance(method, str):
            value = _header_value(method)
        elif lower == b"mcp-name" and isinstance(name, str):
            value = _header_value(name)
        elif lower == b"mcp-protocol-version" and isinstance(version, str):
            value = _header_value(version)
        out.append((key, value))
    return out


HEADER_MISMATCH = -32020


def header_mismatch(headers: Mapping[str, str], message: dict[str, Any]) -> str | None:
    """Why the request's ``Mcp-Method``, ``Mcp-Name`` or ``MCP-Protocol-Version`` header
    disagrees with its body, or ``None`` when they agree (or the header is absent).

    A guard judges the body; a gateway or server may route on the headers. When the two
    disagree, refusing is the only safe reading (TR-01 asks servers for -32020 too).
    Only header names appear in the reason, never their values.
    """
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    method = message.get("method")
    checks: list[tuple[str, Any]] = [("mcp-method", method)]
    if method in _NAMED_METHODS:
        checks.append(("mcp-name", params.get("name", params.get("uri"))))
    meta = params.get("_meta")
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        checks.append(("mcp-protocol-version", meta.get(META_PROTOCOL_VERSION)))
    for header, body_value in checks:
        sent = headers.get(header)
        if sent is None or not isinstance(body_value, str):
            continue
        if _decode_header_value(sent) != body_value:
            return f"the {header} header disagrees with the body"
    return None


def _decode_header_value(value: str) -> str:
    """Undo the transport's ``=?base64?...?=`` form for non-ASCII header values."""
    text = value.strip()
    if text.startswith("=?base64?") and text.endswith("?="):
        try:
            return base64.b64decode(text[9:-2], validate=True).decode("utf-8", "surrogatepass")
        except (ValueError, UnicodeDecodeError):
            return text
    return text


def _header_value(text: str) -> bytes:
    """A header value; non-ASCII (or unsafe) text uses the transport's ``=?base64?...?=``."""
    if text.isascii() and text.isprintable() and text.strip() == text:
        return text.encode("ascii")
    return b"=?base64?" + base64.b64encode(text.encode("utf-8", "surrogatepass")) + b"?="


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _identity_accepted(scope: Scope) -> Scope:
    """The scope with ``Accept-Encoding: identity``: bodies the guard can judge as sent."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"]
    headers.append((b"accept-encoding", b"identity"))
    scope = dict(scope)
    scope["headers"] = headers
    return scope


def _without(headers: list[tuple[bytes, bytes]], *names: bytes) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in headers if k.lower() not in names]


def _header_values(headers: list[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    return [v for k, v in headers if k.lower() == name]


def _content_type(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The one label of a body; ``None`` when there is none or two that disagree (peers
    differ on which one counts, so neither is trusted)."""
    values = {v.strip().lower() for v in _header_values(headers, b"content-type")}
    return values.pop() if len(values) == 1 else None


def _set_length(headers: list[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    out = [(k, v) for k, v in headers if k.lower() != b"content-length"]
    out.append((b"content-length", str(length).encode("ascii")))
    return out


@dataclass(slots=True)
class _Exchange:
    """One HTTP request and its response, as the guard follows it."""

    scope: Scope
    headers: dict[str, str]
    session: str
    ephemeral: bool
    request_id: Any = _NO_ID
    answered: bool = False
    new_session: str | None = None
    #: The verified principal ``RequireAuth`` put in the scope (never a client's claim).
    principal: Any = None

    @property
    def protocol_version(self) -> str | None:
        return self.headers.get("mcp-protocol-version")

    @property
    def judged_headers(self) -> dict[str, str]:
        """The headers rules see: the request's, plus its target as ``:path`` (EG604).

        Only for evaluation; recordings keep the plain headers, so a token in a query string
        is never written to a capture.
        """
        path = self.scope.get("raw_path") or str(self.scope.get("path", "")).encode()
        target = path.decode("latin-1") if isinstance(path, bytes) else str(path)
        query = self.scope.get("query_string") or b""
        if query:
            target += "?" + query.decode("latin-1")
        return {**self.headers, ":path": target}


class ElicitGuardMiddleware:
    """Enforces a policy on one MCP endpoint of an ASGI app (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        relay: Relay,
        *,
        path: str | None = "/mcp",
        recorder: Recorder | None = None,
    ) -> None:
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
            await self._post(_identity_accepted(scope), receive, send)
        elif method == "GET":
            exchange = self._exchange(_identity_accepted(scope))
            try:
                await self.app(scope, receive, _ResponseFilter(self, exchange, send).send)
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

    def _exchange(self, scope: Scope) -> _Exchange:
        headers = _headers(scope)
        session_id = headers.get("mcp-session-id")
        principal = principal_from_scope(scope)
        if session_id:
            return _Exchange(
                scope, headers, "http:" + session_id, ephemeral=False, principal=principal
            )
        key = "x:" + os.urandom(12).hex()
        state = self.relay.engine.store.get(key)
        state.chains = self._shared_chains(headers)
        state.notices = self._shared_notices(headers)
        return _Exchange(scope, headers, key, ephemeral=True, principal=principal)

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

    def _adopt(self, exchange: _Exchange) -> None:
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

    def _finish(self, exchange: _Exchange) -> None:
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
                scope["headers"] = _set_length(
                    consistent_headers(list(scope.get("headers", [])), outcome.message), len(data)
                )
                exchange.scope = scope
            await self.app(
                scope, _replay(data, receive), _ResponseFilter(self, exchange, send).send
            )
        finally:
            self._finish(exchange)

    async def _open_request(self, data: bytes, exchange: _Exchange, send: Send) -> bytes | None:
        """The body as the server would read it (decoded), or ``None`` once refused here.

        An encoded body is decoded within the limit and passed on decoded; a body that reads
        as JSON-RPC under another label is judged or refused (``limits.unlabelled_jsonrpc``).
        """
        headers = list(exchange.scope.get("headers", []))
        codings = content_codings(_header_values(headers, b"content-encoding"))
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
            scope["headers"] = _set_length(_without(headers, b"content-encoding"), len(data))
            exchange.scope = scope
        content_type = _content_type(headers)
        if label_of(content_type) != "json":
            found = sniff(data)
            labels = b", ".join(_header_values(headers, b"content-type")).decode("latin-1")
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
        exchange: _Exchange,
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
        self, exchange: _Exchange, kind: str, message: str, detail: dict[str, Any]
    ) -> bytes | None:
        """A server body the guard will not pass: audited (EG904); the error the client gets
        for its pending request, or ``None`` when none is pending."""
        error = FrameError(kind, message)
        outcome = self.relay.bad_frame(b"", error, S2C, session=exchange.session)
        if exchange.request_id is _NO_ID or exchange.answered:
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
        session_id = _headers(scope).get("mcp-session-id")
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        await self.app(scope, receive, watch)
        if session_id and status and 200 <= status[0] < 300:
            self.relay.engine.store.drop("http:" + session_id)

    # --- messages from the server -------------------------------------------------------

    async def server_message(self, data: bytes, exchange: _Exchange) -> bytes | None:
        """Judge one message from the server; return what the client gets (``None``: nothing)."""
        parsed = self.relay.parse(data, S2C, session=exchange.session)
        if not isinstance(parsed, dict):
            return await self._server_bad(parsed, exchange)
        self._record(parsed, S2C, exchange)
        is_answer = "method" not in parsed and exchange.request_id is not _NO_ID
        if is_answer and _same_id(parsed.get("id", _NO_ID), exchange.request_id):
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
        return self._dropped(outcome, exchange)

    async def _server_bad(self, outcome: Outcome, exchange: _Exchange) -> bytes | None:
        if isinstance(outcome, Reply):
            await self._reply_to_server(outcome.to_bytes(), exchange)
            return None
        if isinstance(outcome, Drop):
            return self._dropped(outcome, exchange)
        return None

    def _dropped(self, outcome: Outcome, exchange: _Exchange) -> bytes | None:
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

    def unanswered(self, exchange: _Exchange) -> bytes | None:
        """The error the client gets when the response ended without answering its request."""
        if exchange.request_id is _NO_ID or exchange.answered:
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

    async def _reply_to_server(self, body: bytes, exchange: _Exchange) -> None:
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

    def _record(self, message: dict[str, Any], direction: Direction, exchange: _Exchange) -> None:
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


#: Decoded SSE bytes gathered before they are sent on (a bomb of tiny harmless events).
_FLUSH = 256 * 1024


@dataclass(slots=True)
class _ResponseFilter:
    """Wraps ``send``: decodes what is encoded, judges JSON bodies whole, SSE event by event,
    and bodies under another label by what they hold."""

    guard: ElicitGuardMiddleware
    exchange: _Exchange
    downstream: Send
    mode: str = "pass"
    start: Message | None = None
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0
    parser: SseParser | None = None
    decoder: StreamDecoder | None = None
    broken: EncodingError | None = None
    content_type: str = ""
    finished: bool = False
    #: The last event id the client holds for this stream (``None``: none yet, or reset).
    last_event_id: bytes | None = None

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            await self._start(message)
        elif kind == "http.response.body":
            if self.finished:
                return
            if self.mode in ("json", "other"):
                await self._whole_body(message)
            elif self.mode == "sse":
                await self._sse_body(message)
            else:  # pragma: no cover - every label has a mode
                await self.downstream(message)
        else:
            await self.downstream(message)

    async def _start(self, message: Message) -> None:
        headers = list(message.get("headers", []))
        for key, value in headers:
            if key.lower() == b"mcp-session-id" and self.exchange.ephemeral:
                self.exchange.new_session = value.decode("latin-1")
        content_type = _content_type(headers)
        codings = content_codings(_header_values(headers, b"content-encoding"))
        if codings:
            try:
                self.decoder = StreamDecoder(codings)
            except EncodingError as exc:
                self.broken = exc
            headers = _without(headers, b"content-encoding")  # passed on decoded
        message = dict(message)
        message["headers"] = headers
        self.content_type = b", ".join(_header_values(headers, b"content-type")).decode("latin-1")
        label = label_of(content_type)
        if label == "sse":
            self.mode = "sse"
            self.parser = SseParser(self.guard.max_bytes + 1024)
            message["headers"] = _without(headers, b"content-length")
            await self.downstream(message)
            return
        self.mode = label  # json, or other: judged by what it holds once complete
        self.start = message

    def _keep(self, piece: bytes) -> None:
        if self.size <= self.guard.max_bytes:
            self.chunks.append(piece)
        self.size += len(piece)

    async def _whole_body(self, message: Message) -> None:
        chunk = message.get("body", b"")
        more = bool(message.get("more_body", False))
        limit = self.guard.max_bytes
        if self.decoder is None or self.broken is not None:
            self._keep(chunk)
        elif self.size <= limit:
            try:
                for piece in self.decoder.feed(chunk):
                    self._keep(piece)
                    if self.size > limit:
                        break  # a bomb: stop decoding, refuse below
                if not more and self.size <= limit:
                    self.decoder.finish()
            except EncodingError as exc:
                self.broken = exc
        if more:
            return
        await self._send_whole()

    def _encoding_refusal(self, exc: EncodingError) -> bytes | None:
        return self.guard.refusal(
            self.exchange,
            "encoding",
            f"the MCP server's {exc.encoding}-encoded response cannot be used: {exc.reason}",
            {"reason": "bad_encoding", "encoding": exc.encoding},
        )

    async def _send_whole(self) -> None:
        guard, exchange = self.guard, self.exchange
        start = self.start or {"type": "http.response.start", "status": 200, "headers": []}
        data = b"".join(self.chunks)
        refused = False
        out: bytes | None
        if self.broken is not None:
            out, refused = self._encoding_refusal(self.broken), True
        elif self.size > guard.max_bytes and self.decoder is not None:
            out, refused = (
                guard.refusal(
                    exchange,
                    "too_large",
                    f"the MCP server's {self.decoder.name}-encoded response decodes to over "
                    f"{guard.max_bytes} bytes",
                    {"reason": "too_large", "encoding": self.decoder.name},
                ),
                True,
            )
        elif self.size > guard.max_bytes:
            error = FrameError("too_large", f"response of {self.size} bytes is over the limit")
            outcome = guard.relay.bad_frame(data[:8192], error, S2C, session=exchange.session)
            out = guard._dropped(outcome, exchange) or guard.unanswered(exchange)
        elif exchange.scope.get(UPSTREAM_END) is not None:
            out = guard.unanswered(exchange)  # cut short on purpose: say why
        elif not data.strip():
            out = data
        elif self.mode == "json":
            out = await self._judged(data)
        else:
            found = sniff(data)
            shown = self.content_type or "no content type"
            if found is None:
                out = data  # not JSON-RPC under any reading: an error page, say
            elif guard.unlabelled == "refuse":
                out, refused = (
                    guard.refusal(
                        exchange,
                        "content_type",
                        f"the MCP server sent a JSON-RPC body labelled {shown!r}",
                        {"reason": "unlabelled_jsonrpc"},
                    ),
                    True,
                )
            elif found == "json":
                out = await self._judged(data)
            else:
                out = await self._judge_stream(data)
        body = out if out is not None else b""
        start = dict(start)
        headers = list(start.get("headers", []))
        if refused:
            headers = [*_without(headers, b"content-type"), (b"content-type", b"application/json")]
        start["headers"] = _set_length(headers, len(body))
        if out is None:
            start["status"] = 202
        await self.downstream(start)
        await self.downstream({"type": "http.response.body", "body": body, "more_body": False})

    async def _judged(self, data: bytes) -> bytes | None:
        out = await self.guard.server_message(data, self.exchange)
        return out if out is not None else self.guard.unanswered(self.exchange)

    async def _judge_stream(self, data: bytes) -> bytes:
        """An event stream under another label, judged event by event like a labelled one."""
        out = bytearray()
        for event in parse_events(data, max_bytes=self.guard.max_bytes + 1024):
            out += await self._event(event)
        tail = self.guard.unanswered(self.exchange)
        if tail is not None:
            out += format_event(tail, event=b"message")
        return bytes(out)

    async def _sse_body(self, message: Message) -> None:
        parser = self.parser
        if parser is None:  # pragma: no cover - set in _start
            return
        more = bool(message.get("more_body", False))
        chunk = message.get("body", b"")
        out = bytearray()
        try:
            if self.broken is not None:
                raise self.broken
            pieces = self.decoder.feed(chunk) if self.decoder is not None else iter((chunk,))
            for piece in pieces:
                for event in parser.feed(piece):
                    out += await self._event(event)
                if len(out) > _FLUSH:
                    await self._emit(bytes(out), more=True)
                    out.clear()
            if not more and self.decoder is not None:
                self.decoder.finish()
        except EncodingError as exc:
            self.broken = exc
        ending = not more or self.broken is not None
        if ending:
            for event in parser.close():
                out += await self._event(event)
            if self.broken is not None:
                tail = self._encoding_refusal(self.broken)
            elif self._resumable():
                tail = None  # the client resumes with Last-Event-ID; the answer comes there
            else:
                tail = self.guard.unanswered(self.exchange)
            if tail is not None:
                out += format_event(tail, event=b"message")
            self.finished = True
        if out or ending:
            await self._emit(bytes(out), more=not ending)

    def _resumable(self) -> bool:
        """True when the server closed a stream it can resume (SEP-1699): the client held an
        event id when it ended and nothing cut it short (timeout, shutdown), so the client
        reconnects with ``Last-Event-ID`` and the answer, judged there, arrives on that
        stream. An error in its place would end a request the server means to answer."""
        if self.exchange.scope.get(UPSTREAM_END) is not None:
            return False
        return bool(self.last_event_id)

    async def _emit(self, body: bytes, *, more: bool) -> None:
        await self.downstream({"type": "http.response.body", "body": body, "more_body": more})

    async def _event(self, event: SseEvent) -> bytes:
        if event.id is not None:
            self.last_event_id = event.id  # passed on (or kept by _keep_id) either way
        if event.oversize:
            error = FrameError("too_large", f"event of {event.size} bytes is over the limit")
            outcome = self.guard.relay.bad_frame(b"", error, S2C, session=self.exchange.session)
            replaced = self.guard._dropped(outcome, self.exchange)
            return _keep_id(event, replaced)
        if event.data is None and event.raw.lstrip()[:1] in (b"{", b"[") and sniff(event.raw):
            # JSON-RPC in an event stream without a data field: a client that falls back to
            # reading the body as JSON would act on it.
            refused = self.guard.refusal(
                self.exchange,
                "content_type",
                "the MCP server sent a JSON-RPC body labelled 'text/event-stream' "
                "without SSE framing",
                {"reason": "unlabelled_jsonrpc"},
            )
            return format_event(refused, event=b"message") if refused is not None else b""
        if event.data is None or not event.data.strip():
            return _finished(event)  # comments, priming events, bare ids
        out = await self.guard.server_message(event.data, self.exchange)
        if out is event.data:
            return _finished(event)
        return _keep_id(event, out)


def _finished(event: SseEvent) -> bytes:
    """An event passed on as it came; a last one without its blank line gets one, so every
    client (strict or lenient) reads the one event the guard judged."""
    raw = event.raw
    if event.terminated:
        return raw
    if raw.endswith(b"\n"):
        return raw + b"\n"
    if raw.endswith(b"\r"):
        return raw + b"\r"
    return raw + b"\n\n"


def _keep_id(event: SseEvent, data: bytes | None) -> bytes:
    """An event's replacement; a dropped event keeps its id so resumption still works."""
    if data is None:
        return format_event(None, id=event.id) if event.id is not None else b""
    return format_event(data, event=event.event, id=event.id, retry=event.retry)
