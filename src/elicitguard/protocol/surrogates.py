"""Lone surrogates: what a peer can send in JSON that Python strings hold but UTF-8 cannot.

JSON allows ``"\\ud800"`` on its own, and Python's parser keeps it as a lone surrogate code
point, which every UTF-8 encoder (RE2's included) refuses. A client shows it as U+FFFD (the
replacement character), so checks judge that: :func:`without_lone_surrogates` returns a copy
of a message with each lone surrogate replaced, and the engine judges the copy. Frames whose
bytes cannot hold one (no ``\\uD8``-``\\uDF`` escape, no surrogate bytes let through by
``surrogatepass``) skip the walk.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["may_hold_lone_surrogate", "without_lone_surrogates"]

#: Written with ``re`` escapes, not the code points: a literal lone surrogate in source cannot
#: be encoded to UTF-8, which compiled builds (mypyc) need.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: An escaped surrogate (``\\uD83D``) or one written as bytes (ED A0..BF): stdlib ``re`` on
#: bytes, a single fixed-width alternation (linear).
_RAW_SURROGATE = re.compile(rb"\\[uU][dD][89a-fA-F]|\xed[\xa0-\xbf]")
_MAX_NODES = 200_000


def may_hold_lone_surrogate(raw: bytes) -> bool:
    """False when the frame's bytes cannot decode to a string with a surrogate in it."""
    return _RAW_SURROGATE.search(raw) is not None


def _clean(text: str) -> str:
    if _SURROGATE.search(text) is None:
        return text
    # Well-formed pairs cannot survive JSON decoding as surrogates: any left is lone.
    return _SURROGATE.sub("\ufffd", text)


def without_lone_surrogates(value: Any) -> Any:
    """``value`` itself when it holds no lone surrogate, else a copy with each one replaced.

    Keys and string values at any depth; other values are shared, not copied.
    """
    if isinstance(value, (dict, list)):
        try:
            # orjson refuses any string (key or value, at any depth) that holds a surrogate;
            # when it serialises the value, there is nothing to clean (one pass in C).
            orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            pass  # a surrogate, or something orjson declines (deep, big ints): walk it
        else:
            return value
    try:
        changed, result = _walk(value, [0])
    except RecursionError:  # deeper than any frame parse_frame lets through
        return value
    return result if changed else value


def _walk(value: Any, budget: list[int]) -> tuple[bool, Any]:
    budget[0] += 1
    if budget[0] > _MAX_NODES:
        return False, value
    if isinstance(value, str):
        cleaned = _clean(value)
        return cleaned is not value, cleaned
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, child in value.items():
            new_key = _clean(key) if isinstance(key, str) else key
            child_changed, new_child = _walk(child, budget)
            changed = changed or child_changed or new_key is not key
            out[new_key] = new_child
        return changed, (out if changed else value)
    if isinstance(value, list):
        results = [_walk(child, budget) for child in value]
        if any(c for c, _ in results):
            return True, [v for _, v in results]
        return False, value
    return False, value
