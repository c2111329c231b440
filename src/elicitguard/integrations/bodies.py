"""What an HTTP body is, whatever its label says: the one rule for both HTTP doors.

A peer does not always trust ``Content-Type``: a lenient client parses a JSON-RPC body
labelled ``text/plain``, ``application/octet-stream`` or nothing at all, and some read an
event stream under any label. So the guard never lets the label decide whether a body is
judged. :func:`label_of` reads the label (``json``, ``sse`` or ``other``); for ``other``,
:func:`sniff` says whether the bytes read as JSON-RPC (a JSON object or array holding a
JSON-RPC-shaped object, after an optional BOM) or as an event stream carrying one; the
policy's ``limits.unlabelled_jsonrpc`` then says ``judge`` (as if labelled) or ``refuse``
(the default: a mislabelled MCP message is malformed).
"""

from __future__ import annotations

from typing import Any, Literal

import orjson

from elicitguard.protocol.sse import BOM, parse_events

__all__ = ["Label", "Sniffed", "is_jsonrpc_value", "label_of", "sniff"]

Label = Literal["json", "sse", "other"]
Sniffed = Literal["json", "sse"]
_JSONRPC_KEYS = frozenset({"jsonrpc", "method", "result", "error", "params", "id"})


def label_of(content_type: bytes | str | None) -> Label:
    """``json`` for ``application/json`` and ``+json`` types, ``sse`` for event streams."""
    if content_type is None:
        return "other"
    text = content_type.decode("latin-1") if isinstance(content_type, bytes) else content_type
    media = text.split(";", 1)[0].strip().lower()
    if media == "text/event-stream":
        return "sse"
    if media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    ):
        return "json"
    return "other"


def is_jsonrpc_value(value: Any) -> bool:
    """A JSON value a lenient JSON-RPC peer would act on: an object (or a batch of them) with
    a JSON-RPC key, the keys compared case-insensitively as some decoders do."""
    items = value if isinstance(value, list) else [value]
    for item in items[:1000]:
        if isinstance(item, dict) and any(
            isinstance(key, str) and key.lower() in _JSONRPC_KEYS for key in item
        ):
            return True
    return False


def _json(data: bytes) -> Any:
    text = data.removeprefix(BOM).strip()
    if not text or text[:1] not in (b"{", b"["):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        import json

        try:
            return json.loads(text.decode("utf-8", "surrogatepass"))
        except (ValueError, RecursionError):
            return _UNPARSED


_UNPARSED = object()


def sniff(data: bytes) -> Sniffed | None:
    """How a lenient peer could read ``data`` as JSON-RPC: ``json``, ``sse`` or ``None``.

    JSON that no parser here takes (too deep, say) but that names a JSON-RPC key counts
    as JSON-RPC: another parser may take it, so it fails closed.
    """
    value = _json(data)
    if value is _UNPARSED:
        lowered = data[:65536].lower()
        if any(b'"' + key.encode() + b'"' in lowered for key in _JSONRPC_KEYS):
            return "json"
    elif is_jsonrpc_value(value):
        return "json"
    if b"data" in data:
        for event in parse_events(data):
            if event.data is None:
                continue
            value = _json(event.data)
            if value is _UNPARSED or is_jsonrpc_value(value):
                return "sse"
    return None
