"""Session state stores: where protocol state lives between messages.

The memory store is the default: a bounded map of sessions with a time-to-live, the
oldest evicted first (evictions are counted). SQLite and Redis stores for one host and for
several replicas implement the same interface (identity issue).
"""

from __future__ import annotations

from collections import OrderedDict
from time import monotonic
from typing import Protocol

from elicitguard.protocol.session import SessionState

__all__ = ["MemoryStateStore", "StateStore"]


class StateStore(Protocol):
    """Where session state is kept."""

    def get(self, key: str) -> SessionState:
        """The state of session ``key``, created empty when unknown or expired."""
        ...

    def drop(self, key: str) -> None:
        """Forget a session (its connection closed)."""
        ...


class MemoryStateStore:
    """Sessions in this process, bounded by count and idle time."""

    def __init__(self, *, ttl_s: float = 900.0, max_sessions: int = 10_000) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self.evictions = 0
        self.expirations = 0
        self._sessions: OrderedDict[str, SessionState] = OrderedDict()
        #: The session asked for last: most calls ask for the same one again, and it is
        #: already the newest in ``_sessions``, so the reordering can be skipped.
        self._last_key: str | None = None
        self._last: SessionState | None = None

    def get(self, key: str) -> SessionState:
        now = monotonic()  # one clock read per message: the session's idle time
        last = self._last
        if last is not None and key == self._last_key and now - last.last_seen <= self.ttl_s:
            last.last_seen = now
            return last
        state = self._get(key, now)
        self._last_key, self._last = key, state
        return state

    def _get(self, key: str, now: float) -> SessionState:
        sessions = self._sessions
        state = sessions.get(key)
        if state is not None and now - state.last_seen > self.ttl_s:
            del sessions[key]
            self.expirations += 1
            state = None
        if state is None:
            state = SessionState()
            sessions[key] = state
            while len(sessions) > self.max_sessions:
                sessions.popitem(last=False)
                self.evictions += 1
        else:
            sessions.move_to_end(key)
        state.last_seen = now
        return state

    def drop(self, key: str) -> None:
        self._sessions.pop(key, None)
        if key == self._last_key:
            self._last_key, self._last = None, None

    def __len__(self) -> int:
        return len(self._sessions)
