"""Turning one frame of bytes into a JSON-RPC object, safely.

orjson parses first because it is fast; when it refuses (lone surrogates) the standard
library tries before a frame is called unparseable, and also when a JSON-RPC id came back as
a float (orjson reads integers past 64 bits as floats, and ids must stay exact). Size is checked
before parsing and depth after, so a hostile frame costs bounded time and memory. The fast
path is decided later on the parsed object, never on raw bytes: ``"\\u0065licitation/create"``
is still elicitation. Duplicate keys are only looked for in frames that carry elicitation
(:func:`has_duplicate_keys`), since that costs a second parse.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import re2

from elicitguard.errors import FrameError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "has_duplicate_keys",
    "may_hide_elicitation",
    "parse_frame",
]

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64


def parse_frame(
    data: bytes | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    allow_batch: bool = False,
) -> Any:
    """Parse one frame and return the JSON value; raise :class:`FrameError` when unusable.

    The value is a ``dict`` for every valid JSON-RPC message. Batches (lists) are refused
    unless ``allow_batch`` is set, in which case the caller deals with the list.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > max_bytes:
        msg = f"frame of {len(raw)} bytes is over the limit of {max_bytes} bytes"
        raise FrameError("too_large", msg)
    if b"\x00" in raw:
        raise FrameError("binary", "frame holds NUL bytes: binary data, not JSON")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = _parse_slow(raw)
    else:
        if isinstance(value, dict) and isinstance(value.get("id"), float):
            # orjson turns integers past 64 bits into floats; ids must stay exact.
            value = _parse_slow(raw)
    _check_depth(raw, value, max_depth)
    if isinstance(value, list):
        if allow_batch:
            return value
        raise FrameError("batch", "JSON-RPC batches are not part of MCP; send one message a frame")
    if not isinstance(value, dict):
        msg = f"frame is a JSON {type(value).__name__}, not a JSON-RPC object"
        raise FrameError("not_object", msg)
    return value


def _parse_slow(raw: bytes) -> Any:
    """The standard library's parser, for what orjson refuses but JSON allows."""
    try:
        text = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise FrameError("binary", "frame is not UTF-8 text") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise FrameError("too_deep", "frame is nested too deeply to parse") from None
    except ValueError as exc:
        # The position is useful; the excerpt is not, and could hold a secret.
        pos = getattr(exc, "pos", None)
        where = f" at byte {pos}" if isinstance(pos, int) else ""
        raise FrameError("not_json", f"frame is not valid JSON{where}") from None


def _check_depth(raw: bytes, value: Any, max_depth: int) -> None:
    """Refuse values nested deeper than ``max_depth``.

    Counting brackets in C first skips the walk for nearly every frame: a value cannot be
    deeper than the number of containers it has.
    """
    if raw.count(b"{") + raw.count(b"[") <= max_depth:
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            msg = f"frame is nested deeper than the limit of {max_depth}"
            raise FrameError("too_deep", msg)
        if isinstance(node, dict):
            stack.extend(
                (child, depth + 1) for child in node.values() if isinstance(child, (dict, list))
            )
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node if isinstance(child, (dict, list)))


class _DuplicateKeyError(ValueError):
    pass


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, val in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = val
    return result


def has_duplicate_keys(raw: bytes | str) -> bool:
    """True when some object in the frame repeats a key.

    Two parsers may keep different copies of a repeated key (first or last), so a frame that
    carries elicitation and repeats a key is refused rather than judged on one reading.
    """
    text = raw.decode("utf-8", "surrogatepass") if isinstance(raw, bytes) else raw
    try:
        json.loads(text, object_pairs_hook=_refuse_duplicates)
    except _DuplicateKeyError:
        return True
    except (ValueError, RecursionError):
        return False
    return False


#: What a frame must mention for a parser that keeps a repeated key's *first* copy to find
#: elicitation where the last copy (what orjson, ``JSON.parse`` and Python read) is ordinary:
#: the method, the result and params keys of both eras, task results, the -32042 code (also
#: written ``-3.2042e4``), or an escape that could spell any of them.
_ELICITATION_MARKERS = re2.compile(
    rb"elicitation|inputRe|requestState|resultType|input_required|tasks/|-3\.?2|\\[u/]"
)


def may_hide_elicitation(raw: bytes) -> bool:
    """True when ``raw`` repeats a key and mentions something elicitation-shaped.

    The engine reads a frame as the last copy of a repeated key reads; a client whose
    parser keeps the first copy could see an elicitation the engine judged ordinary. One
    linear RE2 pass decides whether the (costlier) duplicate-key parse is needed at all.
    """
    return _ELICITATION_MARKERS.search(raw) is not None and has_duplicate_keys(raw)
