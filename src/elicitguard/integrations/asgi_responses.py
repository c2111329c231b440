"""What the guard does to a response on its way to the client: decode, judge, pass on.

Why: a response is a JSON body (one message, judged whole) or an SSE stream (judged event
by event as each completes, never the whole stream), possibly encoded and possibly
mislabelled. :class:`ResponseFilter` wraps ASGI's ``send`` for one exchange and asks the
middleware to judge each message; unchanged events go on byte for byte, and event ids
survive a dropped event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from elicitguard.errors import FrameError
from elicitguard.integrations.actions import Outcome, Relay
from elicitguard.integrations.asgi_headers import (
    content_type_of,
    header_values,
    set_length,
    without_headers,
)
from elicitguard.integrations.asgi_types import UPSTREAM_END, Exchange, Message, Send
from elicitguard.integrations.bodies import label_of, sniff
from elicitguard.integrations.encodings import (
    EncodingError,
    StreamDecoder,
    content_codings,
)
from elicitguard.integrations.sse import SseEvent, SseParser, format_event, parse_events
from elicitguard.protocol.envelope import Direction

__all__ = ["Guard", "ResponseFilter"]


class Guard(Protocol):
    """What the filter asks of the middleware that judges (``ElicitGuardMiddleware``)."""

    @property
    def max_bytes(self) -> int: ...

    @property
    def unlabelled(self) -> str: ...

    @property
    def relay(self) -> Relay: ...

    def refusal(
        self, exchange: Exchange, kind: str, message: str, detail: dict[str, Any]
    ) -> bytes | None: ...

    def dropped(self, outcome: Outcome, exchange: Exchange) -> bytes | None: ...

    def unanswered(self, exchange: Exchange) -> bytes | None: ...

    async def server_message(self, data: bytes, exchange: Exchange) -> bytes | None: ...


S2C = Direction.SERVER_TO_CLIENT

#: Decoded SSE bytes gathered before they are sent on (a bomb of tiny harmless events).
_FLUSH = 256 * 1024


@dataclass(slots=True)
class ResponseFilter:
    """Wraps ``send``: decodes what is encoded, judges JSON bodies whole, SSE event by event,
    and bodies under another label by what they hold."""

    guard: Guard
    exchange: Exchange
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
        content_type = content_type_of(headers)
        codings = content_codings(header_values(headers, b"content-encoding"))
        if codings:
            try:
                self.decoder = StreamDecoder(codings)
            except EncodingError as exc:
                self.broken = exc
            headers = without_headers(headers, b"content-encoding")  # passed on decoded
        message = dict(message)
        message["headers"] = headers
        self.content_type = b", ".join(header_values(headers, b"content-type")).decode("latin-1")
        label = label_of(content_type)
        if label == "sse":
            self.mode = "sse"
            self.parser = SseParser(self.guard.max_bytes + 1024)
            message["headers"] = without_headers(headers, b"content-length")
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
            out = guard.dropped(outcome, exchange) or guard.unanswered(exchange)
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
            headers = [
                *without_headers(headers, b"content-type"),
                (b"content-type", b"application/json"),
            ]
        start["headers"] = set_length(headers, len(body))
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
            replaced = self.guard.dropped(outcome, self.exchange)
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
