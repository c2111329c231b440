"""The fast route for a frame's bytes: classify without building the whole message.

When the engine is handed a frame's bytes (the HTTP proxy's relay, a caller with a line),
most frames are ordinary, and deciding so needs little of them. :func:`classify_frame`
decodes only what the one classification
(:func:`~elicitguard.protocol.reading.classify`) reads, and asks it:

* **a server's frame** (the large ones: tool results, lists, resources) is decoded with
  msgspec into its top-level keys and, for a result, whether it has ``status`` or
  ``task``; ``params`` and the rest of ``result`` are checked as JSON and skipped, never
  built into objects. The classification sees a small stand-in message.
* **a client's frame** is parsed with orjson as the full route would: a request is
  remembered with its ``params`` (which is most of it, and where ``_meta`` would be).

It says ``True`` only where the full route (``parse_frame``, then
:func:`~elicitguard.protocol.reading.read`) would also end with the same ordinary answer,
the same session changes and no finding; everything else is ``False`` and takes the full
route, with the session untouched. So it refuses, before decoding anything:

* a frame over the size limit, one with more brackets than the depth limit allows (the
  full route measures the real depth), one longer than Python's integer-digit limit
  (the standard library, the full route's fallback parser, refuses a longer number that
  msgspec would accept);
* bytes that are not ASCII: they could be invalid UTF-8 (which msgspec does not check
  inside a value it skips) or letters that fold to a protocol word;
* any frame that mentions an elicitation marker
  (:func:`~elicitguard.protocol.parsing.mentions_elicitation`): elicitation methods,
  ``inputRequests``/``inputResponses``, ``requestState``, ``resultType``, task methods,
  the -32042 code, and every ``\\u`` escape (which could spell a key, or be a lone
  surrogate). Without a marker no copy of a repeated key can make the frame elicitation,
  so the repeated-key check has nothing to find (the full route's own gate is the same
  marker scan);
* and whatever msgspec or orjson refuses, a result that is not an object, a float id.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import msgspec
import orjson

from elicitguard.protocol.envelope import Direction, Side
from elicitguard.protocol.parsing import mentions_elicitation
from elicitguard.protocol.reading import OrdinaryNeeds, classify
from elicitguard.protocol.session import SessionState

__all__ = ["ServerFrame", "classify_frame", "frame_bytes_pass", "server_stand_in"]

_UNSET: Any = msgspec.UNSET
_C2S = Direction.CLIENT_TO_SERVER


class _ResultKeys(msgspec.Struct):
    """The keys of a result that make it more than an ordinary answer (the others are
    markers, refused before decoding); the rest of the result is checked and skipped."""

    status: msgspec.Raw = _UNSET
    task: msgspec.Raw = _UNSET


class _ServerFrame(msgspec.Struct):
    """What the classification reads of a server's frame; other keys are checked as JSON
    and skipped, and ``params`` is never built (only markers there would matter)."""

    id: Any = _UNSET
    method: Any = _UNSET
    params: msgspec.Raw = _UNSET
    result: _ResultKeys = _UNSET
    error: msgspec.Raw = _UNSET


_decode_server_frame = msgspec.json.Decoder(_ServerFrame).decode
#: What stands in for a result without status or task (never mutated).
_PLAIN_RESULT: dict[str, Any] = {}


def classify_frame(
    raw: bytes | bytearray | memoryview,
    direction: Direction,
    side: Side,
    state: SessionState,
    default_era: str | None,
    needs: OrdinaryNeeds,
    services: Mapping[str, Any],
    *,
    max_bytes: int,
    max_depth: int,
) -> bool:
    """``True`` when the frame is ordinary and its session bookkeeping is done (see the
    module); ``False`` sends it down the full route with ``state`` as it was."""
    size = len(raw)
    digits = sys.get_int_max_str_digits()
    if size > max_bytes or (digits and size > digits):
        return False  # before copying a memoryview of an oversized frame
    if not isinstance(raw, bytes):
        raw = bytes(raw)
    if not frame_bytes_pass(raw, max_bytes=max_bytes, max_depth=max_depth):
        return False
    message: dict[str, Any] | None
    if direction is _C2S:
        # A client's frame is small, and a request keeps its params: parse it as the full
        # route does (orjson), never twice.
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return False
        if message.__class__ is not dict or isinstance(message.get("id"), float):
            return False  # not an object, or an id the full route parses again: let it
        return classify(message, direction, side, state, default_era, needs, services)
    try:
        top = _decode_server_frame(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return False  # not JSON, not an object, or a result that is not an object
    message = server_stand_in(top)
    if message is None:
        return False
    return classify(message, direction, side, state, default_era, needs, services)


#: A server's frame as :func:`classify_frame` decodes it, for a decoder that reads the frame
#: inside a larger document in the same pass (the linter's envelope line types its
#: ``message`` with it); :func:`server_stand_in` turns it into what the classification sees.
ServerFrame = _ServerFrame


def frame_bytes_pass(raw: bytes, *, max_bytes: int, max_depth: int) -> bool:
    """``True`` when ``raw`` passes the checks :func:`classify_frame` makes on the bytes
    before decoding anything (size, digit limit, ASCII, bracket count, no marker).

    Why a function of its own: a caller holding a document that encloses the frame (an
    envelope line around its ``message``) checks the whole document once, instead of
    decoding the frame out and scanning its bytes again. Every check holds for the bytes
    inside whenever it holds for the enclosure (fewer bytes, fewer brackets, no new
    marker), so the caller passes ``max_depth`` plus one per enclosing container.
    """
    size = len(raw)
    digits = sys.get_int_max_str_digits()
    if size > max_bytes or (digits and size > digits):
        return False
    if not raw.isascii() or raw.count(b"{") + raw.count(b"[") > max_depth:
        return False
    return not mentions_elicitation(raw)


def server_stand_in(top: ServerFrame) -> dict[str, Any] | None:
    """The small message the classification sees for a server's frame decoded as
    :data:`ServerFrame` (``None``: the frame takes the full route), exactly as
    :func:`classify_frame` builds it; its bytes must have passed :func:`frame_bytes_pass`.

    Why: the linter decodes an envelope line and its server frame in one msgspec pass and
    asks the classification itself (it knows the session only once the line is decoded).
    """
    message: dict[str, Any] = {}
    method = top.method
    if method is not _UNSET:
        message["method"] = method
    value = top.id
    if value is not _UNSET:
        if isinstance(value, float):
            return None  # the full route parses it again for an exact id: let it
        message["id"] = value
    if top.params is not _UNSET:
        message["params"] = None  # read only for markers, which this frame has none of
    result = top.result
    if result is not _UNSET:
        if result.status is not _UNSET or result.task is not _UNSET:
            return None
        message["result"] = _PLAIN_RESULT
    if top.error is not _UNSET:
        message["error"] = None  # present is all the classification reads
    return message
