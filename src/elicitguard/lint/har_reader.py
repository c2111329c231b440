"""Reading HAR 1.2 captures of MCP's Streamable HTTP transport.

What a browser, a proxy (mitmproxy, Charles, Fiddler) or a HAR recorder exports:

* a **request body** (``request.postData.text``) is one client-to-server message;
* a **response body** is server to client: ``application/json`` holds one message, and
  ``text/event-stream`` holds one message per SSE event (``data:`` lines joined with
  newlines; events of another type than ``message`` and events without data, such as the
  priming events servers send for resumability, are not messages);
* ``Mcp-Session-Id`` (request header, or the response header of ``initialize``) keys the
  session: each distinct id is one session, labelled ``session-1``, ``session-2``, ... in the
  order first seen, because the id itself is a credential-like value that never appears in
  a report. Entries without one (2026-07-28 has no sessions) share one state per endpoint,
  labelled ``endpoint-1``, ...;
* ``MCP-Protocol-Version`` (request header) gives the era of the entry's messages;
* the server's name is ``--server-name`` when given, else the host of the request URL.

Findings locate the **entry** (the 0-based index into ``log.entries``) and, for SSE
bodies, the **event** (0-based, counting the events that carry a message).

Entries that are not MCP (a browser HAR also holds pages, scripts and images) are skipped
without a word. An entry is MCP when its request carries an MCP header, its response
carries ``Mcp-Session-Id``, its body is a JSON-RPC message, or its URL is an endpoint that
an earlier MCP entry used. An MCP entry whose request body or expected response body was
not captured (exports omit bodies above a size, of aborted requests, or by option) is
reported in ``errors[]``: never passed over silently, since the missing part could hold
exactly the elicitation a rule is looking for.

Order. A HAR lists entries by start time, but on the push era a server's
``elicitation/create`` arrives on the SSE stream of an earlier ``tools/call`` entry while the
client's answer is a later entry; the rest of that stream happened after the answer. So a
stream is read up to a server-to-client request, then **suspended until the client's
response with that id has been read** from a later entry, then resumed; streams still
suspended when the entries run out are finished in the order they were suspended. This
puts the messages back in the order the peers saw them, which the session state needs.

Memory. A HAR is one JSON document; it is read with ``ijson`` one entry at a time, so the
memory used is that of the largest entry plus the unread events of suspended streams, not
that of the file.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any
from urllib.parse import urlsplit

import ijson  # type: ignore[import-untyped]

from elicitguard.errors import FrameError
from elicitguard.lint.capture import CaptureEntry, Location, Skipped
from elicitguard.lint.envelopes import LineError
from elicitguard.protocol.envelope import Direction, Envelope, Side, Transport
from elicitguard.protocol.parsing import parse_frame
from elicitguard.protocol.sse import parse_events

__all__ = ["read_har", "sse_events"]

MCP_REQUEST_HEADERS = ("mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name")
_NO_BODY_STATUSES = frozenset({202, 204, 304})


def sse_events(text: str | bytes) -> list[str]:
    """The data of each message event of an SSE body, read by the one SSE parser.

    :mod:`elicitguard.protocol.sse` follows the WHATWG event-stream rules (a leading BOM,
    CR / LF / CRLF, comments, multi-line ``data``), as the HTTP proxy does. Events of the
    ``message`` type count, and events of another type whose data looks like JSON-RPC (a
    lenient client may read those too); events without data do not. A final event without
    its blank line is still dispatched: a capture may end the body where the recorder
    stopped, and the data is what the client received.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    events: list[str] = []
    for event in parse_events(raw):
        if not event.data:
            continue
        data = event.data.decode("utf-8", "replace")
        if event.event in (None, b"", b"message") or _looks_like_jsonrpc(data):
            events.append(data)
    return events


def _headers(part: Any) -> dict[str, str]:
    headers = part.get("headers") if isinstance(part, dict) else None
    found: dict[str, str] = {}
    if isinstance(headers, list):
        for header in headers:
            if isinstance(header, dict):
                name = header.get("name")
                value = header.get("value")
                if isinstance(name, str) and isinstance(value, str):
                    found[name.lower()] = value
    return found


def _endpoint(url: str) -> tuple[str, str | None]:
    """The endpoint (scheme, host, path; never the query) and the host for the server name."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return url.split("?", 1)[0], None
    name = None
    if host:
        name = f"{host}:{port}" if port else host
    return f"{parts.scheme}://{name or ''}{parts.path}", name


def _looks_like_jsonrpc(text: str) -> bool:
    head = text.lstrip()[:1]
    return head in ("{", "[") and '"jsonrpc"' in text


def _body_bytes(content: dict[str, Any]) -> bytes | str | None:
    """The body as bytes, ``None`` when not captured, or a problem description."""
    text = content.get("text")
    if not isinstance(text, str):
        return None
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return "the response body is marked base64 but does not decode"
    return text.encode("utf-8", "surrogatepass")


def _missing_body(status: int, size: Any, expects_body: bool, absent: bool) -> str | None:
    """Why an empty or absent response body is a problem, or ``None`` when it is not.

    A body the exporter left out (``content.size`` says there was one, or a 2xx answer to a
    request holds nothing) is reported; ``202``/``204`` and error statuses without a body
    (a ``401`` asking for authorization, a ``405`` refusing the GET stream) are normal.
    """
    if absent and isinstance(size, int) and size > 0:
        return f"the response body (HTTP {status}, {size} bytes) was not captured"
    if not expects_body or status in _NO_BODY_STATUSES:
        return None
    if status == 0:
        return "the request failed or was aborted: no response was captured"
    if 200 <= status < 300:
        return f"the response body (HTTP {status}) was not captured"
    return None


@dataclass(slots=True)
class _Stream:
    """An SSE response being read; ``waiting`` is the answer it is suspended for."""

    entry: int
    session: str
    envelope: dict[str, Any]
    events: list[tuple[int, bytes]]
    position: int = 0
    waiting: Any = None


def _id_key(value: Any) -> Any:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return (type(value).__name__, value)
    return None


@dataclass(slots=True)
class _HarReader:
    """Turns entries into capture entries, restoring the order across SSE streams."""

    max_bytes: int
    max_depth: int
    server: str | None
    sessions: dict[str, str] = field(default_factory=dict)
    endpoints: dict[str, str] = field(default_factory=dict)
    mcp_endpoints: set[str] = field(default_factory=set)
    suspended: list[_Stream] = field(default_factory=list)

    # --- one entry ----------------------------------------------------------------------

    def entry(self, index: int, entry: Any) -> Iterator[CaptureEntry]:
        where = Location(entry=index)
        if not isinstance(entry, dict) or not isinstance(entry.get("request"), dict):
            return
        request: dict[str, Any] = entry["request"]
        response = entry.get("response") if isinstance(entry.get("response"), dict) else None
        req_headers = _headers(request)
        resp_headers = _headers(response)
        url = request.get("url")
        endpoint, host = _endpoint(url if isinstance(url, str) else "")
        post = request.get("postData")
        body = post.get("text") if isinstance(post, dict) else None
        is_mcp = (
            any(h in req_headers for h in MCP_REQUEST_HEADERS)
            or "mcp-session-id" in resp_headers
            or endpoint in self.mcp_endpoints
            or (isinstance(body, str) and _looks_like_jsonrpc(body))
        )
        if not is_mcp:
            return
        self.mcp_endpoints.add(endpoint)
        session_id = req_headers.get("mcp-session-id") or resp_headers.get("mcp-session-id")
        if session_id:
            label = self.sessions.setdefault(session_id, f"session-{len(self.sessions) + 1}")
        else:
            label = self.endpoints.setdefault(endpoint, f"endpoint-{len(self.endpoints) + 1}")
        base = {
            "session": label,
            "server": self.server or host,
            "protocol_version": req_headers.get("mcp-protocol-version"),
            "ts": entry.get("startedDateTime")
            if isinstance(entry.get("startedDateTime"), str)
            else None,
        }
        http_method = str(request.get("method") or "").upper()
        expects_body = http_method == "GET"
        if http_method == "POST":
            if not isinstance(body, str):
                yield where, Skipped("the request body was not captured; entry skipped")
                return
            message = self._parse(body.encode("utf-8", "surrogatepass"), where)
            if isinstance(message, LineError):
                yield where, message
            else:
                expects_body = "method" in message and "id" in message
                yield where, self._envelope(message, Direction.CLIENT_TO_SERVER, base, req_headers)
                if "method" not in message and "id" in message:
                    yield from self._resume(label, _id_key(message.get("id")))
        yield from self._response(index, response, resp_headers, base, expects_body)

    def _response(
        self,
        index: int,
        response: dict[str, Any] | None,
        headers: dict[str, str],
        base: dict[str, Any],
        expects_body: bool,
    ) -> Iterator[CaptureEntry]:
        where = Location(entry=index)
        status = response.get("status") if response is not None else None
        content = response.get("content") if response is not None else None
        if response is None or not isinstance(content, dict) or not isinstance(status, int):
            if expects_body:
                yield where, Skipped("no response was captured for this request")
            return
        data = _body_bytes(content)
        if isinstance(data, str):
            yield where, Skipped(data)
            return
        if data is None or not data.strip():
            problem = _missing_body(status, content.get("size"), expects_body, data is None)
            if problem is not None:
                yield where, Skipped(problem)
            return
        mime = (headers.get("content-type") or str(content.get("mimeType") or "")).lower()
        if "text/event-stream" in mime:
            events = [
                (n, text.encode("utf-8", "surrogatepass"))
                for n, text in enumerate(sse_events(data))
            ]
            stream = _Stream(index, base["session"], base, events)
            yield from self._run(stream)
            return
        if "json" in mime or _looks_like_jsonrpc(data.decode("utf-8", "replace")):
            message = self._parse(data, where)
            if isinstance(message, LineError):
                yield where, message
            else:
                yield where, self._envelope(message, Direction.SERVER_TO_CLIENT, base, headers)
            return
        if expects_body:
            yield where, Skipped(f"the response (HTTP {status}) is neither JSON nor an SSE stream")

    # --- streams ------------------------------------------------------------------------

    def _run(self, stream: _Stream, *, suspend: bool = True) -> Iterator[CaptureEntry]:
        """Read ``stream`` until it ends or sends a request whose answer is still to come."""
        while stream.position < len(stream.events):
            number, data = stream.events[stream.position]
            stream.position += 1
            where = Location(entry=stream.entry, event=number)
            message = self._parse(data, where)
            if isinstance(message, LineError):
                yield where, message
                continue
            yield (
                where,
                self._envelope(message, Direction.SERVER_TO_CLIENT, stream.envelope, {}),
            )
            key = _id_key(message.get("id"))
            if (
                suspend
                and "method" in message
                and key is not None
                and stream.position < len(stream.events)
            ):
                stream.waiting = key
                self.suspended.append(stream)
                return

    def _resume(self, session: str, key: Any) -> Iterator[CaptureEntry]:
        """Resume the streams suspended for the client's answer ``key`` in ``session``."""
        if key is None:
            return
        ready = [s for s in self.suspended if s.session == session and s.waiting == key]
        for stream in ready:
            self.suspended.remove(stream)
            stream.waiting = None
            yield from self._run(stream)

    def finish(self) -> Iterator[CaptureEntry]:
        """Finish the streams whose awaited answer never came, in suspension order."""
        suspended, self.suspended = self.suspended, []
        for stream in suspended:
            stream.waiting = None
            yield from self._run(stream, suspend=False)  # no later entry can answer

    # --- helpers ------------------------------------------------------------------------

    def _parse(self, data: bytes, where: Location) -> dict[str, Any] | LineError:
        try:
            value: dict[str, Any] = parse_frame(
                data, max_bytes=self.max_bytes, max_depth=self.max_depth
            )
        except FrameError as exc:
            return LineError(where.line, exc)
        return value

    def _envelope(
        self,
        message: dict[str, Any],
        direction: Direction,
        base: dict[str, Any],
        headers: dict[str, str],
    ) -> Envelope:
        return Envelope(
            message=message,
            direction=direction,
            side=Side.CAPTURE,
            transport=Transport.HTTP,
            session=base["session"],
            headers=headers,
            server=base["server"],
            ts=base["ts"],
            protocol_version=base["protocol_version"],
        )


def read_har(
    stream: IO[bytes],
    *,
    max_bytes: int,
    max_depth: int,
    server: str | None = None,
) -> Iterator[CaptureEntry]:
    """Yield the messages of a HAR capture in the order the peers saw them."""
    reader = _HarReader(max_bytes, max_depth, server)
    count = 0
    try:
        for index, entry in enumerate(ijson.items(stream, "log.entries.item", use_float=True)):
            count += 1
            yield from reader.entry(index, entry)
    except ijson.JSONError:
        yield from reader.finish()
        yield (
            Location(entry=count),
            Skipped("the HAR document is not valid JSON here; reading stopped"),
        )
        return
    except UnicodeDecodeError as exc:
        # yajl lets some invalid UTF-8 through (overlong forms such as C0 80) and the
        # Python side then fails to decode the string: the same stop, with its reason.
        yield from reader.finish()
        yield (
            Location(entry=count),
            Skipped(
                f"the HAR document holds bytes that are not UTF-8 ({exc.reason}); reading stopped"
            ),
        )
        return
    yield from reader.finish()
    if count == 0:
        yield Location(), Skipped("no log.entries found: not a HAR 1.2 capture, or an empty one")
