"""The raw-bytes lane: ordinary capture lines judged from their bytes, without a full parse.

Why: nine lines in ten of a day's capture are ordinary traffic (tool calls and their
results, lists, progress), and the engine decides each of them from a few top-level keys.
Parsing the whole envelope line into Python objects, building the keyword arguments of
:meth:`~elicitguard.engine.engine.Engine.evaluate` and scanning the bytes again for a
hidden repeated key cost several times what the decision needs. The lane asks the same
question the engine's own fast route asks (the classification,
:func:`~elicitguard.protocol.reading.classify`), on the same session state, and leaves
every line it cannot call ordinary to the linter's usual route with that state untouched:

* **a server's line** (the large one: a tool result, a list, a resource) is decoded by
  msgspec in one pass into the envelope fields and the frame's top-level keys
  (:data:`~elicitguard.protocol.frame_route.ServerFrame`); ``params`` and the rest of the
  result are checked as JSON and skipped. The whole line first passes the byte checks of
  the engine's bytes route (:func:`~elicitguard.protocol.frame_route.frame_bytes_pass`:
  size, digit limit, ASCII, bracket count, and no elicitation marker anywhere, which also
  refuses every ``\\u`` escape an envelope key or label could hide behind). An unknown
  envelope key, ``headers`` or ``protocol_version``, a field of the wrong type, another
  direction or transport: the line takes the usual route, which reports it.
* **a client's line** is parsed as today (it is small, and a request is remembered with
  its ``params``); the lane only replaces the call into the engine by the classification
  it would make, after the repeated-key look at the line's bytes that follows it there.

It never decides a line is doubtful on its own: the classification does, on exactly the
message the full route would classify (the parsed one, or for a server's frame the same
stand-in the engine's bytes route builds), so no detection result can change. The engine's
private fast-route pieces (its needs, counters) are read here because this round may not
touch ``engine.py``; an ``Engine`` method for a caller that holds the session key would
replace them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from elicitguard.engine.engine import Engine
from elicitguard.protocol.envelope import Direction, Side, Transport
from elicitguard.protocol.frame_route import ServerFrame, frame_bytes_pass, server_stand_in
from elicitguard.protocol.reading import classify

__all__ = ["OrdinaryLane", "server_hint"]

_CAPTURE = Side.CAPTURE
_TRANSPORTS = frozenset(t.value for t in Transport)
_UNSET: Any = msgspec.UNSET
#: The integers orjson reads exactly (signed and unsigned 64 bits).
_INT_MIN, _UINT_MAX = -(1 << 63), (1 << 64) - 1
#: Where a writer puts ``direction`` (first, or after a short session label): only a hint
#: of which decoder to try, never a reason to decide anything.
_HINT_SPAN = 96


class _ServerLine(msgspec.Struct, forbid_unknown_fields=True):
    """A plain envelope line (no headers, no protocol version) around a server's frame."""

    direction: str
    message: ServerFrame
    session: str | None = None
    ts: str | None = None
    transport: str | None = None
    server: str | None = None


_decode_server_line = msgspec.json.Decoder(_ServerLine).decode


def server_hint(line: bytes) -> bool:
    """True when ``line`` looks like a server's envelope line (worth the one-pass decode)."""
    return line.find(b'"server_to_client"', 0, _HINT_SPAN) >= 0


def _same_as_parsed(value: Any) -> bool:
    """True when the usual route reads ``value`` (a frame's ``id`` or ``method``) as msgspec
    did: a string, an integer in 64 bits, ``null`` or absent.

    Why: the usual route parses the whole envelope line with orjson, which reads an
    integer past 64 bits as a float, and only the line's own top-level ``id`` is parsed
    again exactly (:func:`~elicitguard.protocol.parsing.parse_frame`); the frame's id
    inside stays a float there, while msgspec reads the exact integer. Such an id, or
    anything else but these, takes the usual route.
    """
    if value is _UNSET or value is None or value.__class__ is str:
        return True
    return value.__class__ is int and _INT_MIN <= value <= _UINT_MAX


class OrdinaryLane:
    """The classification step of :meth:`Engine.evaluate`, for lines the linter holds."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        limits = engine.policy.limits
        self._max_bytes = limits.max_message_bytes
        #: The line is the envelope object around the frame: one level more.
        self._max_depth = limits.max_depth + 1
        self._needs = engine._needs  # what the ordinary-traffic rules want to see
        self._services = engine.services
        self._counters = engine._counters

    @property
    def usable(self) -> bool:
        """The engine's fast route applies only without ``requestState`` sealing."""
        return self.engine.request_state is None

    def server_line(self, line: bytes) -> tuple[str | None, dict[str, Any]] | None:
        """``(session, stand-in message)`` of a plain server's line the lane may classify,
        or ``None`` for the usual route (nothing is touched)."""
        if not frame_bytes_pass(line, max_bytes=self._max_bytes, max_depth=self._max_depth):
            return None
        try:
            top = _decode_server_line(line)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
        if top.direction != "server_to_client":
            return None
        if top.transport is not None and top.transport not in _TRANSPORTS:
            return None
        frame = top.message
        if not _same_as_parsed(frame.id) or not _same_as_parsed(frame.method):
            return None
        message = server_stand_in(frame)
        if message is None:
            return None
        return top.session, message

    def ordinary(self, session: str, message: dict[str, Any], direction: Direction) -> bool:
        """``True`` when the engine would call ``message`` ordinary in ``session`` (its
        bookkeeping is then done and counted); ``False`` leaves the session untouched."""
        engine = self.engine
        if classify(
            message,
            direction,
            _CAPTURE,
            engine.store.get(session),
            engine.default_era,
            self._needs,
            self._services,
        ):
            self._counters["fast_path"] += 1
            return True
        return False
