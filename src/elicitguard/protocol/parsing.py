"""Turning one frame of bytes into a JSON-RPC object, safely.

orjson parses first because it is fast; when it refuses (lone surrogates) the standard
library tries before a frame is called unparseable, and also when a JSON-RPC id came back as
a float (orjson reads integers past 64 bits as floats, and ids must stay exact). Size is checked
before parsing and depth after, so a hostile frame costs bounded time and memory. The fast
path is decided later on the parsed object, never on raw bytes: ``"\\u0065licitation/create"``
is still elicitation. Duplicate keys are only looked for in frames that carry elicitation
(:func:`has_colliding_keys`), since that costs a second parse; they count when they
collide once folded too (``method`` and ``METHOD``), because some decoders match keys
without regard to case.
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata
from typing import Any

import orjson
import re2

from elicitguard.errors import FrameError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "fold_key",
    "has_colliding_keys",
    "has_duplicate_keys",
    "may_hide_elicitation",
    "mentions_elicitation",
    "object_has_colliding_keys",
    "parse_frame",
    "protocol_keys_collide",
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


#: Protocol key names (folded) that a decoder ignoring ``_`` and ``-`` as well as case
#: (``Request_State``, ``input-requests``) would take for the real one.
_PROTOCOL_KEYS = frozenset(
    {
        "jsonrpc",
        "id",
        "method",
        "params",
        "result",
        "error",
        "code",
        "data",
        "message",
        "mode",
        "url",
        "requestedschema",
        "elicitationid",
        "elicitations",
        "action",
        "content",
        "resulttype",
        "inputrequests",
        "inputresponses",
        "requeststate",
        "task",
        "taskid",
        "status",
        "properties",
        "required",
        "type",
        "meta",
    }
)


@functools.lru_cache(maxsize=4096)  # the same keys ("type", "title", "properties") recur
def fold_key(key: str) -> str:
    """The form a case-insensitive decoder compares a key in.

    NFKC then case folding (then NFKC again, as Unicode's NFKC_Casefold does):
    ``METHOD``, ``Method``, the full-width ``ＭＥＴＨＯＤ`` and ``meth\u212aod``-style tricks
    (Kelvin sign, long s) all fold to one key. A folded protocol key name also loses its
    ``_`` and ``-`` (``request_state`` is ``requestState`` to some decoders); other keys
    keep them, since ``first_name`` and ``firstname`` are different form fields.
    """
    if key.isascii():
        folded = key.lower()
    else:
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", key).casefold())
    if "_" in folded or "-" in folded:
        bare = folded.replace("_", "").replace("-", "")
        if bare in _PROTOCOL_KEYS:
            return bare
    return folded


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, val in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = val
    return result


def _refuse_collisions(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    folded: set[str] = set()
    for key, val in pairs:
        fold = fold_key(key)
        if key in result or fold in folded:
            raise _DuplicateKeyError(key)
        result[key] = val
        folded.add(fold)
    return result


def _raises_on_pairs(raw: bytes | str, hook: Any) -> bool:
    text = raw.decode("utf-8", "surrogatepass") if isinstance(raw, bytes) else raw
    try:
        json.loads(text, object_pairs_hook=hook)
    except _DuplicateKeyError:
        return True
    except (ValueError, RecursionError):
        return False
    return False


#: What :func:`_parsed_once` answers when a key is repeated, and when it cannot tell.
_REPEATED: Any = object()
_UNTOLD: Any = object()
#: The nodes the folded-key walk (:func:`object_has_colliding_keys`) visits at most; on a
#: frame's parse, a walk cut short leaves the answer to the pairs parser.
_WALK_NODES = 100_000


def _parsed_once(raw: bytes | str) -> Any:
    """orjson's parse of ``raw`` when it provably repeats no key exactly, :data:`_REPEATED`
    when it provably does, :data:`_UNTOLD` when this cannot tell (the pairs parser then
    decides, as it always did).

    Why: the pairs parser (``json`` with ``object_pairs_hook``) calls Python for every
    object and cost most of a form request's evaluation from bytes; this costs one
    orjson parse and one render. How: every key of the text is written with one colon
    outside a string, and a colon inside a string is the same colon in orjson's
    rendering of the parse unless an escape wrote it (``\\u003a``), so a frame without
    a ``\\u`` escape has as many colons as its parse renders with exactly when no key
    was repeated; a repeat drops at least its own colon. Numbers, whitespace and other
    escapes hold no colon. What orjson refuses (lone surrogates, NaN, a BOM, depth) is
    left to the pairs parser.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if b"\\u" in data:
        return _UNTOLD
    try:
        value = orjson.loads(data)
        rendered = orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return _UNTOLD
    colons, kept = data.count(b":"), rendered.count(b":")
    if colons == kept:
        return value
    return _REPEATED if colons > kept else _UNTOLD


def has_duplicate_keys(raw: bytes | str) -> bool:
    """True when some object in the frame repeats a key exactly.

    Two parsers may keep different copies of a repeated key (first or last), so a frame that
    carries elicitation and repeats a key is refused rather than judged on one reading.
    """
    value = _parsed_once(raw)
    if value is not _UNTOLD:
        return value is _REPEATED
    return _raises_on_pairs(raw, _refuse_duplicates)


def has_colliding_keys(raw: bytes | str) -> bool:
    """True when some object in the frame repeats a key, exactly or once folded (:func:`fold_key`).

    A decoder that matches keys case-insensitively (or after Unicode folding) reads one of
    ``{"method": "ping", "METHOD": "elicitation/create"}``'s two keys, and which one is up
    to it: the same disagreement as an exact repeat.

    Exact repeats are told by :func:`_parsed_once`; folded ones by the walk of
    :func:`object_has_colliding_keys` over that parse, when it visits every object; in
    every other case by the pairs parser (tests/protocol/test_colliding_bytes.py holds
    the three to the same answers).
    """
    value = _parsed_once(raw)
    if value is _REPEATED:
        return True
    if value is not _UNTOLD:
        budget = [_WALK_NODES]
        if _collides_within(value, 0, budget):
            return True
        if budget[0] > 0:  # the walk ended before its budget did: it saw every object
            return False
    return _raises_on_pairs(raw, _refuse_collisions)


#: Whether a key set collides once folded, per key tuple: form schemas and envelopes repeat
#: the same few key sets ({"type", "title"}, {"jsonrpc", "id", "method", "params"}) on every
#: message. Keys only (never a value), small key sets only, bounded (cleared when full).
_KEY_SETS: dict[tuple[Any, ...], bool] = {}
_KEY_SETS_LIMIT = 4096
_KEY_SET_MAX_KEYS = 32


def _folded_collision(node: Any) -> bool:
    if not isinstance(node, dict) or len(node) < 2:
        return False
    return _keys_collide(node)


def _keys_collide(node: dict[Any, Any]) -> bool:
    """Whether two keys of ``node`` (two or more keys) are one key once folded."""
    size = len(node)
    if size > _KEY_SET_MAX_KEYS:
        return len({fold_key(k) if isinstance(k, str) else str(k) for k in node}) < size
    keys = tuple(node)
    known = _KEY_SETS.get(keys)
    if known is None:
        known = len({fold_key(k) if isinstance(k, str) else str(k) for k in keys}) < size
        if len(_KEY_SETS) >= _KEY_SETS_LIMIT:
            _KEY_SETS.clear()
        _KEY_SETS[keys] = known
    return known


def _envelope_objects(message: Any) -> list[Any]:
    """The objects of a message whose keys the protocol reads: the message, its params,
    result or error (and error data, a task), and the entries of ``inputRequests`` and
    ``inputResponses`` with their params. Tool arguments and structured content are
    data: a case pair there cannot turn a frame into elicitation."""
    if not isinstance(message, dict):
        return []
    found: list[Any] = [message]
    inner = message.get("message")
    if "direction" in message and isinstance(inner, dict):
        # A capture line (``{"direction": ..., "message": {...}}``): the message inside.
        found = [message, inner]
        message = inner
    for name in ("params", "result", "error"):
        part = message.get(name)
        if not isinstance(part, dict):
            continue
        found.append(part)
        for inner in ("data", "task"):
            if isinstance(part.get(inner), dict):
                found.append(part[inner])
        for entries_name in ("inputRequests", "inputResponses"):
            entries = part.get(entries_name)
            if not isinstance(entries, dict):
                continue
            for entry in entries.values():
                if isinstance(entry, dict):
                    found.append(entry)
                    if isinstance(entry.get("params"), dict):
                        found.append(entry["params"])
    return found


def protocol_keys_collide(raw: bytes | str) -> bool:
    """True when the frame repeats a key anywhere, or two keys of a protocol-level object
    (:func:`_envelope_objects`) collide once folded.

    For ordinary-looking frames: that is what could make them elicitation to a decoder
    that reads another copy, while a case pair in tool arguments could not.
    """
    value = _parsed_once(raw)
    if value is _REPEATED:
        return True
    if value is _UNTOLD:
        text = raw.decode("utf-8", "surrogatepass") if isinstance(raw, bytes) else raw
        try:
            value = json.loads(text, object_pairs_hook=_refuse_duplicates)
        except _DuplicateKeyError:
            return True
        except (ValueError, RecursionError):
            return False
    return any(_folded_collision(node) for node in _envelope_objects(value))


def object_has_colliding_keys(value: Any, max_nodes: int = _WALK_NODES) -> bool:
    """:func:`has_colliding_keys` for a value already parsed (exact repeats are gone by then).

    For callers without the frame's bytes (SDK hooks): a bounded walk over the objects.
    """
    budget = [max_nodes]
    return _collides_within(value, 0, budget)


#: How deep :func:`_collides_within` recurses before it walks the rest with a stack.
_RECURSE_DEPTH = 32


def _collides_within(node: Any, depth: int, budget: list[int]) -> bool:
    """The walk of :func:`object_has_colliding_keys`: recursive while shallow (most messages
    are, and recursion is the cheaper walk), then with an explicit stack; ``budget`` is the
    number of nodes still to visit, shared by the whole walk. Children are visited last
    first, the order of the stack walk, so that a walk cut short by the budget sees the
    same nodes either way."""
    if depth >= _RECURSE_DEPTH:
        return _collides_with_stack(node, budget)
    if depth == _MEMO_DEPTH and type(node) is dict and node:
        return _remembered_subtree(node, budget)
    return _collides_here(node, depth, budget)


def _collides_here(node: Any, depth: int, budget: list[int]) -> bool:
    budget[0] -= 1
    if budget[0] < 0:
        return False
    kind = type(node)
    children: Any
    if kind is dict or (kind is not list and isinstance(node, dict)):
        if len(node) > 1 and _keys_collide(node):
            return True
        children = reversed(node.values())
    elif kind is list or isinstance(node, list):
        children = reversed(node)
    else:
        return False
    for child in children:
        kind = type(child)
        if (
            kind is dict
            or kind is list
            or (kind not in _LEAVES and isinstance(child, (dict, list)))
        ) and _collides_within(child, depth + 1, budget):
            return True
    return False


#: The depth whose objects' verdicts are remembered: a message's ``params``, ``result`` or
#: ``error`` members (a form's ``requestedSchema``, an ``inputRequests`` table), which
#: repeat from message to message while the ids around them do not.
_MEMO_DEPTH = 2
#: Remembered subtrees: a digest of the subtree's JSON (never the text itself) to its
#: verdict and the nodes the walk visited to reach it. Bounded; cleared when full.
_SUBTREES: dict[bytes, tuple[bool, int]] = {}
_SUBTREES_LIMIT = 4096


def _remembered_subtree(node: dict[Any, Any], budget: list[int]) -> bool:
    """:func:`_collides_here` for an object seen before, by the digest of its JSON.

    The same JSON has the same keys everywhere, so the same verdict; the nodes the walk
    visited are charged to the budget as the walk would have been, and a subtree whose
    walk the budget cut short is not remembered (nor reused where the budget could not
    cover it), so the answer is the walk's in every case.
    """
    try:
        digest = hashlib.sha256(orjson.dumps(node)).digest()[:16]
    except (TypeError, orjson.JSONEncodeError):  # keys orjson will not write: just walk
        return _collides_here(node, _MEMO_DEPTH, budget)
    known = _SUBTREES.get(digest)
    if known is not None and budget[0] >= known[1]:
        budget[0] -= known[1]
        return known[0]
    before = budget[0]
    verdict = _collides_here(node, _MEMO_DEPTH, budget)
    if budget[0] >= 0:
        if len(_SUBTREES) >= _SUBTREES_LIMIT:
            _SUBTREES.clear()
        _SUBTREES[digest] = (verdict, before - budget[0])
    return verdict


#: Types a parsed JSON value's leaves have: no container to walk into.
_LEAVES = frozenset({str, int, float, bool, type(None)})


def _collides_with_stack(value: Any, budget: list[int]) -> bool:
    stack = [value]
    while stack and budget[0] > 0:
        node = stack.pop()
        budget[0] -= 1
        if isinstance(node, dict):
            if len(node) > 1 and _keys_collide(node):
                return True
            stack.extend(child for child in node.values() if isinstance(child, (dict, list)))
        elif isinstance(node, list):
            stack.extend(child for child in node if isinstance(child, (dict, list)))
    return False


#: What a frame must mention for a decoder that reads another copy of a repeated (or
#: case-folded) key to find elicitation where the copy the engine read is ordinary: the
#: method, the result and params keys of both eras, task results, the -32042 code (also
#: written ``-3.2042e4``), in any letter case (``ELICITATION/CREATE``), an escape that could
#: spell any of them, or full-width and mathematical letters that NFKC folds to them.
_ELICITATION_MARKERS = re2.compile(
    rb"(?i)elicitation|inputRe|requestState|resultType|input_required|tasks/|-3\.?2|\\[u/]"
    rb"|(?-i:[\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{1D400}-\x{1D6A3}\x{212A}\x{017F}])"
)
#: The same pattern as an RE2 set: asking only *whether* it occurs runs the DFA without
#: the match object and the generator of ``search`` (about 40% less per ordinary frame,
#: where the whole frame is scanned and nothing is found).
_MARKER_SET = re2.Set.SearchSet(_ELICITATION_MARKERS.options)
_MARKER_SET.Add(_ELICITATION_MARKERS.pattern)
_MARKER_SET.Compile()


def mentions_elicitation(raw: bytes) -> bool:
    """True when ``raw`` mentions something elicitation-shaped (the markers above)."""
    return _MARKER_SET.Match(raw) is not None


def may_hide_elicitation(raw: bytes) -> bool:
    """True when ``raw`` repeats a key (exactly, or folded at protocol level: see
    :func:`protocol_keys_collide`) and mentions something elicitation-shaped.

    The engine reads a frame as the last copy of a repeated key reads; a client whose
    parser keeps the first copy, or matches keys regardless of case, could see an
    elicitation the engine judged ordinary. One linear RE2 pass decides whether the
    (costlier) key-collision parse is needed at all.
    """
    return _MARKER_SET.Match(raw) is not None and protocol_keys_collide(raw)
