"""What later messages need to know about earlier ones.

In the push era a session is a connection: the negotiated version, the client's declared
capability, and the server's open requests by id (the two directions have separate id
spaces). In the 2026-07-28 era there are no sessions: a retry is tied to the
``InputRequiredResult`` it answers through its echoed ``requestState``, or else through the
method, the tool name or URI and a digest of the arguments. Every map is bounded; the
oldest entries go first and are counted as evictions.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import orjson

__all__ = [
    "BoundedMap",
    "ChainState",
    "PendingClientRequest",
    "PendingServerRequest",
    "SessionState",
    "chain_key_for_request",
    "chain_key_for_state",
    "elicitation_signature",
]

K = TypeVar("K")
V = TypeVar("V")


class BoundedMap(Generic[K, V]):
    """An insertion-ordered map that forgets its oldest entries past ``limit``."""

    __slots__ = ("_data", "evictions", "limit")

    def __init__(self, limit: int) -> None:
        self._data: OrderedDict[K, V] = OrderedDict()
        self.limit = limit
        self.evictions = 0

    def put(self, key: K, value: V) -> None:
        """Remember ``value`` under ``key`` as the newest entry, forgetting the oldest past
        ``limit``. The size before and after tells a new key from a replaced one: one hash
        look-up instead of two, as the fast route puts a request on most messages."""
        data = self._data
        size = len(data)
        data[key] = value
        if len(data) == size:  # the key was there: its value is replaced, it moves last
            data.move_to_end(key)
        elif size >= self.limit:
            data.popitem(last=False)
            self.evictions += 1

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def pop(self, key: K) -> V | None:
        return self._data.pop(key, None)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def values(self) -> list[V]:
        return list(self._data.values())

    def __copy__(self) -> BoundedMap[K, V]:
        """Copying builds through ``__init__``: compiled (mypyc), the default copy calls the
        class with no arguments and ``limit`` is required."""
        copied: BoundedMap[K, V] = BoundedMap(self.limit)
        copied._data = OrderedDict(self._data)
        copied.evictions = self.evictions
        return copied

    def __deepcopy__(self, memo: dict[int, Any]) -> BoundedMap[K, V]:
        """As ``__copy__``, with the entries copied deeply (session snapshots in tests)."""
        copied: BoundedMap[K, V] = BoundedMap(self.limit)
        memo[id(self)] = copied
        copied._data = copy.deepcopy(self._data, memo)
        copied.evictions = self.evictions
        return copied


@dataclass(slots=True)
class PendingServerRequest:
    """A server-to-client request still waiting for the client's answer."""

    method: str
    era: str | None
    mode: str | None = None
    schema: Any = None
    elicitation_id: Any = None
    task: bool = False
    task_id: Any = None
    signature: str | None = None


@dataclass(slots=True)
class PendingClientRequest:
    """A client-to-server request still waiting for the server's answer."""

    method: str
    era: str | None
    capabilities: Any = None
    params: Any = None


@dataclass(slots=True)
class ChainState:
    """One 2026-07-28 round: what the server asked for, so the retry can be checked.

    ``origin_id`` is the JSON-RPC id of the request that got the ``InputRequiredResult``
    (a retry must use another, MR-11); ``request_state_digest`` the digest of the
    ``requestState`` the server issued, ``None`` when it issued none (MR-10).
    """

    method: str | None
    era: str | None
    requests: dict[str, tuple[str | None, Any]] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    request_state_digest: str | None = None
    origin_id: Any = None
    #: The request key (method, name or URI, arguments) of the originating request, the
    #: principal it came from, and how many retries echoed this round's state (EG504).
    origin_key: str | None = None
    principal: Any = None
    uses: int = 0


@dataclass(slots=True)
class SessionState:
    """Protocol state of one connection (push era) or one capture stream (any era)."""

    era: str | None = None
    offered_version: str | None = None
    initialize_seen: bool = False
    #: Whether this history contains the start of its session (an ``initialize`` or a
    #: ``server/discover`` request was seen): then a ``requestState`` no round of this
    #: history issued was, as far as anyone can tell, never issued (EG504).
    from_start: bool = False
    client_capabilities: Any = None
    pending_server: BoundedMap[Any, PendingServerRequest] = field(
        default_factory=lambda: BoundedMap(1024)
    )
    pending_client: BoundedMap[Any, PendingClientRequest] = field(
        default_factory=lambda: BoundedMap(4096)
    )
    tasks: BoundedMap[Any, PendingServerRequest] = field(default_factory=lambda: BoundedMap(1024))
    chains: BoundedMap[str, ChainState] = field(default_factory=lambda: BoundedMap(1024))
    elicitations: BoundedMap[str, str] = field(default_factory=lambda: BoundedMap(1024))
    last_seen: float = 0.0
    #: The signature and answer of the last push elicitation the client declined or
    #: cancelled, until the next push elicitation (EG122's "asked again right after").
    last_refused: tuple[str, str] | None = None
    #: Whether the client's HTTP requests carried an ``Authorization`` header: ``None``
    #: until a request with headers is seen, then sticky ``True`` once one had it (EG501).
    authorization: bool | None = None
    #: Session-level notices already given (EG501's "no verified user" when no identity is
    #: configured at all: said once per session, not on every message).
    notices: set[str] = field(default_factory=set)

    @property
    def evictions(self) -> int:
        """How many entries the bounded maps have forgotten."""
        return (
            self.pending_server.evictions
            + self.pending_client.evictions
            + self.tasks.evictions
            + self.chains.evictions
            + self.elicitations.evictions
        )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def chain_key_for_state(request_state: str) -> str:
    """The chain key of a round that carried ``requestState`` (a digest, never the value)."""
    return "rs:" + _digest(request_state.encode("utf-8", "surrogatepass"))


def elicitation_signature(params: object) -> str:
    """A digest of what an elicitation asks (mode, message, schema or URL), never the text."""
    if not isinstance(params, dict):
        return _digest(b"")
    picked = [params.get(k) for k in ("mode", "message", "requestedSchema", "url")]
    try:
        blob = orjson.dumps(picked, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        blob = repr(picked).encode("utf-8", "surrogatepass")
    return _digest(blob)


def chain_key_for_request(method: str | None, params: object) -> str:
    """The chain key of a round without ``requestState``: method, name or URI, arguments."""
    name: Any = None
    arguments: Any = None
    if isinstance(params, dict):
        name = params.get("name", params.get("uri", params.get("taskId")))
        arguments = params.get("arguments")
    try:
        blob = orjson.dumps([method, name, arguments], option=orjson.OPT_SORT_KEYS)
    except TypeError:
        blob = repr([method, name, arguments]).encode("utf-8", "surrogatepass")
    return "rq:" + _digest(blob)
