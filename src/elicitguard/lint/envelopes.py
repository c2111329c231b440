"""Reading envelope JSONL captures: one envelope per line, streamed with flat memory.

The format (stable; other tools write it)::

    {"direction": "client_to_server"|"server_to_client", "message": {...JSON-RPC...},
     "session": str?, "ts": str?, "transport": "stdio"|"http"?, "headers": {str: str}?,
     "protocol_version": str?, "server": str?}

A line is never held whole when it is over the size limit: the reader reads at most the
limit plus one byte and skips the rest of the line in chunks. Bad lines become
:class:`LineError` values with a line number, and reading goes on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, NamedTuple

from elicitguard.errors import FrameError
from elicitguard.protocol.envelope import Direction, Envelope, Side, Transport
from elicitguard.protocol.parsing import parse_frame

__all__ = [
    "CapturedLine",
    "LineError",
    "plain_envelope",
    "read_envelopes",
    "read_lines",
    "to_envelope",
    "too_large",
]

_CHUNK = 1 << 20
_NAME = re.compile(r"[A-Za-z_][A-Za-z_-]{0,23}")
_ENVELOPE_KEYS = frozenset(
    {"direction", "message", "session", "ts", "transport", "headers", "protocol_version", "server"}
)


@dataclass(frozen=True, slots=True)
class LineError:
    """A line (or HAR body: ``line`` is ``None``) that could not be used, and why."""

    line: int | None
    error: FrameError


class CapturedLine(NamedTuple):
    """One line of a capture: its number and bytes (``None`` when over the limit).

    A named tuple: one is made per line of a capture, and a tuple is the cheapest object
    Python builds (a frozen dataclass pays an ``object.__setattr__`` per field).
    """

    line: int
    data: bytes | None
    size: int


#: How much the reader takes per ``read``: lines are cut out of blocks, not read one by one.
_BLOCK = 1 << 20


def read_lines(stream: IO[bytes], max_bytes: int) -> Iterator[CapturedLine]:
    """Yield the non-blank lines of ``stream``; a line over ``max_bytes`` has ``data=None``.

    Reads blocks and splits them (one ``bytes.split`` per block instead of one ``readline``
    per line). Never holds more than one block and ``max_bytes`` of one line: a line that
    grows past the limit is counted and skipped as it streams by. A line is over the limit
    when its bytes before the newline are more than ``max_bytes + 1`` (``max_bytes`` for a
    last line without newline), the bound a ``readline(max_bytes + 2)`` reader draws.
    """
    make = tuple.__new__  # CapturedLine(...) without the named tuple's Python-level __new__
    limit = max_bytes + 1
    number = 0
    carry = b""  # the start of a line the last block did not finish
    skipped = -1  # >= 0: bytes of an oversized line seen so far (we are skipping it)
    read = stream.read
    while True:
        block = read(_BLOCK)
        if not block:
            break
        parts = block.split(b"\n")
        tail = parts.pop()  # after the last newline: the start of the next line, or b""
        if parts:
            if skipped >= 0:
                number += 1
                yield make(CapturedLine, (number, None, skipped + len(parts[0]) + 1))
                skipped = -1
                parts[0] = b""  # counted: the blank below is skipped without a number
                number -= 1
            elif carry:
                parts[0] = carry + parts[0]
            carry = b""
            for part in parts:
                number += 1
                if len(part) > limit:
                    yield make(CapturedLine, (number, None, len(part) + 1))
                    continue
                line = part.rstrip(b"\r") if part.endswith(b"\r") else part
                if line and not line.isspace():
                    yield make(CapturedLine, (number, line, len(part) + 1))
        if skipped >= 0:
            skipped += len(tail)
        elif len(carry) + len(tail) > limit:
            skipped = len(carry) + len(tail)
            carry = b""
        else:
            carry += tail
    if skipped >= 0:
        yield make(CapturedLine, (number + 1, None, skipped))
    elif carry:
        number += 1
        if len(carry) > max_bytes:
            yield make(CapturedLine, (number, None, len(carry)))
        else:
            line = carry.rstrip(b"\r")
            if line and not line.isspace():
                yield make(CapturedLine, (number, line, len(carry)))


def read_envelopes(
    stream: IO[bytes], *, max_bytes: int, max_depth: int
) -> Iterator[tuple[int, Envelope | LineError]]:
    """Yield ``(line, envelope)`` or ``(line, LineError)`` for each non-blank line."""
    for captured in read_lines(stream, max_bytes):
        if captured.data is None:
            yield captured.line, too_large(captured, max_bytes)
            continue
        try:
            yield (
                captured.line,
                to_envelope(captured.data, max_bytes=max_bytes, max_depth=max_depth),
            )
        except FrameError as exc:
            yield captured.line, LineError(captured.line, exc)


def too_large(captured: CapturedLine, max_bytes: int) -> LineError:
    """The error of a line the reader skipped for being over the size limit."""
    error = FrameError(
        "too_large", f"line of {captured.size} bytes is over the limit of {max_bytes} bytes"
    )
    return LineError(captured.line, error)


def to_envelope(line: bytes, *, max_bytes: int, max_depth: int) -> Envelope:
    """Parse one envelope line; raise :class:`FrameError` when it is not one."""
    value = parse_frame(line, max_bytes=max_bytes, max_depth=max_depth + 1)
    return envelope_from_dict(value, raw=line)


_DIRECTIONS = {d.value: d for d in Direction}
_TRANSPORTS = {t.value: t for t in Transport}
_TEXT_KEYS = ("session", "ts", "protocol_version", "server")


def envelope_from_dict(value: dict[str, Any], *, raw: bytes | None = None) -> Envelope:
    """Validate an envelope object; unknown keys are refused with the accepted ones named."""
    if not _ENVELOPE_KEYS.issuperset(value):
        unknown = set(value) - _ENVELOPE_KEYS
        # Key names are echoed only when they look like names: a key can hold anything.
        names = ", ".join(
            sorted(k if _NAME.fullmatch(k) else "(a key that looks like data)" for k in unknown)
        )
        msg = f"unknown envelope key(s) {names}; accepted: {', '.join(sorted(_ENVELOPE_KEYS))}"
        raise FrameError("bad_envelope", msg)
    named = value.get("direction")
    direction = _DIRECTIONS.get(named) if isinstance(named, str) else None  # a list, a dict
    if direction is None:
        msg = "envelope `direction` must be client_to_server or server_to_client"
        raise FrameError("bad_envelope", msg)
    message = value.get("message")
    if not isinstance(message, dict):
        if isinstance(message, list):
            raise FrameError("batch", "JSON-RPC batches are not part of MCP; one message per line")
        raise FrameError("bad_envelope", "envelope `message` must be a JSON-RPC object")
    transport = value.get("transport")
    if transport is not None:
        transport = _TRANSPORTS.get(transport)
        if transport is None:
            raise FrameError("bad_envelope", "envelope `transport` must be stdio or http")
    headers = value.get("headers")
    if headers:
        if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            raise FrameError("bad_envelope", "envelope `headers` must map strings to strings")
        headers = {k.lower(): v for k, v in headers.items()}
    elif headers is not None and not isinstance(headers, dict):
        raise FrameError("bad_envelope", "envelope `headers` must map strings to strings")
    for key in _TEXT_KEYS:
        text = value.get(key)
        if text is not None and not isinstance(text, str):
            raise FrameError("bad_envelope", f"envelope `{key}` must be a string")
    envelope = Envelope(
        message,
        direction,
        Side.CAPTURE,
        transport,
        value.get("session"),
        server=value.get("server"),
        ts=value.get("ts"),
        protocol_version=value.get("protocol_version"),
        raw=raw,
    )
    if headers:
        envelope.headers = headers
    return envelope


_PLAIN_KEYS = frozenset({"direction", "message", "session", "ts", "transport", "server"})


def plain_envelope(value: Any) -> tuple[dict[str, Any], Direction, str | None] | None:
    """``(message, direction, session)`` of a valid envelope without headers or version.

    The linter's fast lane: such a line can be judged without an :class:`Envelope` when its
    message is ordinary. ``None`` for anything else (headers, a protocol version, or any
    problem), which :func:`envelope_from_dict` then judges and reports.
    """
    if type(value) is not dict or not _PLAIN_KEYS.issuperset(value):
        return None
    named = value.get("direction")
    direction = _DIRECTIONS.get(named) if isinstance(named, str) else None  # a list, a dict
    message = value.get("message")
    if direction is None or type(message) is not dict:
        return None
    transport = value.get("transport")
    if transport is not None and transport not in _TRANSPORTS:
        return None
    session = value.get("session")
    for text in (session, value.get("ts"), value.get("server")):
        if text is not None and not isinstance(text, str):
            return None
    return message, direction, session
