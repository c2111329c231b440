"""Protocol state shared by every replica, in the identity feature's secure store.

A gateway may send a round's request to one replica and its retry to another, or a
pushed ``elicitation/create`` to one and the client's answer to the next. What the guard
remembers between messages (a session's pending requests, a credential's 2026-07-28
rounds and the entries it removed from them) therefore lives in the shared
:class:`~elicitguard.identity.stores.SecureStore` (Redis for a fleet): addressed by keyed
HMACs, sealed with AES-GCM under the keys from the one key file, with the policy's
``limits.state_ttl_s`` as expiry. Issued ``requestState`` markers and URL bindings already
live there (sealing, binding); this module adds the engine's session state.

How it is used: the engine asks :class:`SharedStateStore` for a session, which loads it
from the store the first time a phase asks; after each gateway phase the service calls
:func:`flush`, which writes back every state and round that phase touched and forgets the
local copies, so the next phase (on whichever replica) reads what this one wrote. A
replica killed mid-round loses only the phase it was handling, which the gateway retries or
fails. Two replicas writing one session at the same instant keep the last write.

States of one exchange (``x:`` keys: a 2026-07-28 request without a session) never leave
the process: the exchange is one gateway stream, handled by one replica.
"""

from __future__ import annotations

import contextvars
import dataclasses
import hashlib
import json
from typing import Any

from elicitguard.identity.principal import Principal
from elicitguard.identity.stores import SecureStore
from elicitguard.integrations.actions import dumps
from elicitguard.integrations.asgi import ElicitGuardMiddleware
from elicitguard.protocol.session import (
    BoundedMap,
    ChainState,
    PendingClientRequest,
    PendingServerRequest,
    SessionState,
)

__all__ = [
    "SharedChains",
    "SharedGuard",
    "SharedState",
    "SharedStateStore",
    "Touched",
    "decode_state",
    "encode_state",
    "flush",
    "flush_sessions",
    "reset_touched",
    "touched_scope",
]

SESSION_NS = "gateway-session"
ROUND_NS = "gateway-round"
_OWNER = "gateway"


class Touched:
    """What one exchange read or wrote, to be written back after each phase."""

    __slots__ = ("chains", "sessions")

    def __init__(self) -> None:
        self.sessions: dict[str, SessionState] = {}
        self.chains: dict[tuple[str, str], ChainState] = {}


_TOUCHED: contextvars.ContextVar[Touched | None] = contextvars.ContextVar(
    "elicitguard_touched", default=None
)


def touched_scope(touched: Touched) -> contextvars.Token[Touched | None]:
    """Make ``touched`` the current exchange's record (tasks started now inherit it)."""
    return _TOUCHED.set(touched)


def reset_touched(token: contextvars.Token[Touched | None]) -> None:
    _TOUCHED.reset(token)


# --- encoding ---------------------------------------------------------------------------


def _principal(value: Any) -> Any:
    if isinstance(value, Principal):
        data = dataclasses.asdict(value)
        data["audience"] = list(value.audience)
        data["scopes"] = list(value.scopes)
        return {"principal": data}
    return None


def _from_principal(value: Any) -> Principal | None:
    if isinstance(value, dict) and isinstance(value.get("principal"), dict):
        data = dict(value["principal"])
        data["audience"] = tuple(data.get("audience") or ())
        data["scopes"] = tuple(data.get("scopes") or ())
        return Principal(**data)
    return None


def _chain(chain: ChainState) -> dict[str, Any]:
    return {
        "method": chain.method,
        "era": chain.era,
        "requests": {k: list(v) for k, v in chain.requests.items()},
        "removed": sorted(chain.removed),
        "request_state_digest": chain.request_state_digest,
        "origin_id": chain.origin_id,
        "origin_key": chain.origin_key,
        "principal": _principal(chain.principal),
        "uses": chain.uses,
    }


def _from_chain(data: dict[str, Any]) -> ChainState:
    return ChainState(
        method=data.get("method"),
        era=data.get("era"),
        requests={k: (v[0], v[1]) for k, v in (data.get("requests") or {}).items()},
        removed=set(data.get("removed") or ()),
        request_state_digest=data.get("request_state_digest"),
        origin_id=data.get("origin_id"),
        origin_key=data.get("origin_key"),
        principal=_from_principal(data.get("principal")),
        uses=int(data.get("uses") or 0),
    )


def _map(bounded: BoundedMap[Any, Any], encode: Any) -> dict[str, Any]:
    items = bounded._data.items()
    return {"limit": bounded.limit, "items": [[k, encode(v)] for k, v in items]}


def _hashable(key: Any) -> Any:
    """Map keys as the engine made them: JSON lists back to tuples (typed ids)."""
    if isinstance(key, list):
        return tuple(_hashable(k) for k in key)
    return key


def _from_map(data: Any, decode: Any, default_limit: int) -> BoundedMap[Any, Any]:
    limit = data.get("limit", default_limit) if isinstance(data, dict) else default_limit
    out: BoundedMap[Any, Any] = BoundedMap(int(limit))
    for key, value in (data.get("items") or []) if isinstance(data, dict) else []:
        out.put(_hashable(key), decode(value))
    return out


def encode_state(state: SessionState) -> bytes:
    """A session's state as JSON bytes (ids and JSON values kept exactly)."""
    document = {
        "era": state.era,
        "offered_version": state.offered_version,
        "initialize_seen": state.initialize_seen,
        "client_capabilities": state.client_capabilities,
        "pending_server": _map(state.pending_server, dataclasses.asdict),
        "pending_client": _map(state.pending_client, dataclasses.asdict),
        "tasks": _map(state.tasks, dataclasses.asdict),
        "chains": _map(state.chains, _chain)
        if not isinstance(state.chains, SharedChains)
        else None,
        "elicitations": _map(state.elicitations, lambda v: v),
        "last_refused": list(state.last_refused) if state.last_refused else None,
        "authorization": state.authorization,
    }
    return dumps(document)


def decode_state(blob: bytes) -> SessionState:
    """The inverse of :func:`encode_state`."""
    data = json.loads(blob)
    state = SessionState(
        era=data.get("era"),
        offered_version=data.get("offered_version"),
        initialize_seen=bool(data.get("initialize_seen")),
        client_capabilities=data.get("client_capabilities"),
        pending_server=_from_map(
            data.get("pending_server"), lambda v: PendingServerRequest(**v), 1024
        ),
        pending_client=_from_map(
            data.get("pending_client"), lambda v: PendingClientRequest(**v), 4096
        ),
        tasks=_from_map(data.get("tasks"), lambda v: PendingServerRequest(**v), 1024),
        elicitations=_from_map(data.get("elicitations"), str, 1024),
        authorization=data.get("authorization"),
    )
    if data.get("chains") is not None:
        state.chains = _from_map(data["chains"], _from_chain, 1024)
    refused = data.get("last_refused")
    state.last_refused = (str(refused[0]), str(refused[1])) if refused else None
    return state


# --- the stores -------------------------------------------------------------------------


class SharedStateStore:
    """The engine's :class:`~elicitguard.engine.state.StateStore`, backed by ``store``."""

    def __init__(self, store: SecureStore, *, ttl_s: float = 900.0) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self._local: dict[str, SessionState] = {}

    def get(self, key: str) -> SessionState:
        if key.startswith("x:") or not key:
            state = self._local.get(key)
            if state is None:
                state = self._local[key] = SessionState()
            return state
        touched = _TOUCHED.get()
        if touched is not None and key in touched.sessions:
            return touched.sessions[key]
        blob = self.store.get(SESSION_NS, _OWNER, key)
        state = decode_state(blob) if blob is not None else SessionState()
        if touched is not None:
            touched.sessions[key] = state
        return state

    def drop(self, key: str) -> None:
        if key.startswith("x:") or not key:
            self._local.pop(key, None)
            return
        touched = _TOUCHED.get()
        if touched is not None:
            touched.sessions.pop(key, None)
        self.store.delete(SESSION_NS, _OWNER, key)

    def write(self, key: str, state: SessionState) -> None:
        self.store.put(SESSION_NS, _OWNER, key, encode_state(state), self.ttl_s)


class SharedChains(BoundedMap[str, ChainState]):
    """One credential's 2026-07-28 rounds, read from and written back to the store."""

    __slots__ = ("owner", "shared", "ttl_s")

    def __init__(self, shared: SecureStore, owner: str, *, ttl_s: float) -> None:
        super().__init__(1024)
        self.shared = shared
        self.owner = owner
        self.ttl_s = ttl_s

    def _touched(self) -> Touched | None:
        return _TOUCHED.get()

    def get(self, key: str) -> ChainState | None:
        touched = self._touched()
        if touched is not None and (self.owner, key) in touched.chains:
            return touched.chains[(self.owner, key)]
        blob = self.shared.get(ROUND_NS, self.owner, key)
        if blob is None:
            return None
        chain = _from_chain(json.loads(blob))
        if touched is not None:
            touched.chains[(self.owner, key)] = chain
        return chain

    def put(self, key: str, value: ChainState) -> None:
        touched = self._touched()
        if touched is not None:
            touched.chains[(self.owner, key)] = value
        else:
            self.write(key, value)

    def pop(self, key: str) -> ChainState | None:
        value = self.get(key)
        touched = self._touched()
        if touched is not None:
            touched.chains.pop((self.owner, key), None)
        self.shared.delete(ROUND_NS, self.owner, key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def write(self, key: str, value: ChainState) -> None:
        self.shared.put(ROUND_NS, self.owner, key, dumps(_chain(value)), self.ttl_s)


def flush(touched: Touched, sessions: SharedStateStore, chains: dict[str, SharedChains]) -> None:
    """Write back what a phase touched and forget the local copies."""
    for key, state in list(touched.sessions.items()):
        sessions.write(key, state)
    touched.sessions.clear()
    for (owner, key), chain in list(touched.chains.items()):
        holder = chains.get(owner)
        if holder is not None:
            holder.write(key, chain)
    touched.chains.clear()


def flush_sessions(touched: Touched, sessions: SharedStateStore) -> None:
    """Write back the sessions a call touched (services without a guard's round maps)."""
    for key, state in list(touched.sessions.items()):
        sessions.write(key, state)
    touched.sessions.clear()
    touched.chains.clear()


@dataclasses.dataclass(slots=True)
class SharedState:
    """The shared session store and the guard's round maps, flushed after each phase."""

    sessions: SharedStateStore
    guard: SharedGuard

    def flush(self, touched: Touched) -> None:
        flush(touched, self.sessions, self.guard.holders)


class SharedGuard(ElicitGuardMiddleware):
    """The HTTP proxy's guard with each credential's rounds in the shared store."""

    def __init__(self, *args: Any, shared: SecureStore, ttl_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared = shared
        self.ttl_s = ttl_s
        self.holders: dict[str, SharedChains] = {}

    def _shared_chains(self, headers: dict[str, str]) -> BoundedMap[str, ChainState]:
        credential = headers.get("authorization", "")
        owner = hashlib.sha256(credential.encode("utf-8", "surrogatepass")).hexdigest()
        holder = self.holders.get(owner)
        if holder is None:
            if len(self.holders) > 4096:
                self.holders.clear()
            holder = self.holders[owner] = SharedChains(self.shared, owner, ttl_s=self.ttl_s)
        return holder
