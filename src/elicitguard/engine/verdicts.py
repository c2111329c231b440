"""Reusing the hits of pure checks for an identical item.

Servers ask the same things again and again: the same booking form on every call, the same
connect URL to every user. Most checks judge only what an item says (its schema, its URL,
its era and the capability the client declared), so their hits for an identical item are
the same every time. A check registered with ``@check(..., pure=True)`` promises exactly
that (see :func:`elicitguard.engine.context.check`), and the engine keeps its hits here,
keyed by a digest of everything such a check may read. Checks that look at the session,
the principal, the clock or a service run on every message as before.

The key is a 128-bit digest (SHA-256 cut to 16 bytes: OpenSSL's SHA-256 hashes a form's
kilobyte or two faster than BLAKE2b) of the item's kind, pointer, era, method, mode,
request mode, declared capability, requested schema, location facts and data (JSON, in the
order the message had them; a URL request's ``elicitationId``, fresh on every request,
counts only as "a non-empty string" or its actual value otherwise), plus the server name,
side and direction: two items share hits only when a check could not tell them apart. The
cache is per engine (one policy, one set of lists and params, started afresh when the
engine's policy is replaced), bounded, and forgets its oldest entries first. Items whose
data JSON cannot encode (lone surrogates) or that are larger than :data:`MAX_KEY_BYTES` are
not cached: they are judged afresh each time, as are items holding a subclass of a JSON
type (never read from traffic; a library caller's own mapping may behave otherwise).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import orjson

from elicitguard.base.decision import Hit
from elicitguard.protocol.envelope import Direction, Side
from elicitguard.protocol.items import ABSENT, Item, ItemKind

__all__ = ["MAX_KEY_BYTES", "VerdictCache", "item_key"]

#: Items whose encoded content is larger than this are not cached (bounded key cost).
MAX_KEY_BYTES = 64 * 1024
#: Facts the extractor sets from where an item was found, which pure checks may read.
LOCATION_FACTS = ("pushed", "embedded", "in_error", "mode_present")

_ABSENT_MARK = "\x00absent"
_ID_MARK = "\x00id"


def _default(value: Any) -> Any:
    if value is ABSENT:
        return _ABSENT_MARK
    raise TypeError


def item_key(
    item: Item, server: str | None, side: Side, direction: Direction
) -> tuple[bytes, str | None, Side, Direction] | None:
    """The cache key of ``item``, or ``None`` when it cannot be cached."""
    facts = item.facts
    data = item.data
    if item.kind is ItemKind.URL_REQUEST and isinstance(data, dict) and "elicitationId" in data:
        # A fresh id on every URL request; pure checks only ask whether it is a non-empty
        # string, so that is all the key keeps of it.
        eid = data["elicitationId"]
        data = {**data, "elicitationId": _ID_MARK if isinstance(eid, str) and eid else eid}
    try:
        blob = orjson.dumps(
            (
                item.kind.value,
                item.pointer,
                item.era,
                item.method,
                item.mode,
                item.request_mode,
                item.draft,
                item.task,
                item.input_key,
                [facts.get(name, _ABSENT_MARK) for name in LOCATION_FACTS],
                item.capabilities,
                item.schema,
                data,
            ),
            default=_default,
            # A subclass of dict, list, str or int is not taken for the plain value it
            # holds (it may behave otherwise): such an item gets no key, judged afresh.
            option=orjson.OPT_PASSTHROUGH_SUBCLASS,
        )
    except (TypeError, orjson.JSONEncodeError):
        return None
    if len(blob) > MAX_KEY_BYTES:
        return None
    return hashlib.sha256(blob).digest()[:16], server, side, direction


class VerdictCache:
    """Hits of pure rules per item key: ``{rule code: hits}``, bounded, oldest out first."""

    __slots__ = ("_entries", "hits", "limit", "misses")

    def __init__(self, limit: int = 4096) -> None:
        self._entries: OrderedDict[Any, dict[str, list[Hit]]] = OrderedDict()
        self.limit = limit
        self.hits = 0
        self.misses = 0

    def get(self, key: Any) -> dict[str, list[Hit]] | None:
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return entry

    def put(self, key: Any, hits: dict[str, list[Hit]]) -> None:
        entries = self._entries
        entries[key] = hits
        if len(entries) > self.limit:
            entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
