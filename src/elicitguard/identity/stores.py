"""State stores for identity features: one interface, memory, SQLite and Redis.

What lives here is small and security-relevant: single-use markers of sealed
``requestState``, URL-binding handles, anything a server must not lose between the request
that starts a flow and the one that finishes it. Three backends, one contract (one test
suite runs against all three):

* ``memory`` (the default): this process only; lost on restart.
* ``sqlite:///path/state.db``: one host, several processes, survives restarts.
* ``redis://host:6379/0``: several replicas behind a load balancer.

Every entry is addressed by ``(namespace, owner, key)``. ``owner`` is the verified
principal's binding identity (or a connection id where there is no principal), so entries
are keyed ``<user>:<handle>`` as the security best practices ask (SB-02): a handle that
leaks is useless under another user's name. The store never sees these strings: each part
is replaced by a keyed HMAC, and each value is sealed with AES-GCM whose authenticated
data is the logical address, so a value copied to another user's slot does not open, and
a dump of the database gives nothing away. Expiry is enforced twice: by the backend
(Redis ``PX``, SQLite and memory on read and purge) and by the expiry sealed into the value.

Key rotation: addresses and values use the ``state`` keys. Reads try the address under
every verifying key (newest first); writes use the signing key; ``add`` (set if absent) is
atomic across all of them, so a marker written before a rotation still counts after it.
Persistent and shared backends refuse a random per-process key (``KeyConfigError``).

The shared machinery is :mod:`elicitguard.identity.store_base`; the SQLite and Redis
backends are :mod:`~elicitguard.identity.store_sqlite` and
:mod:`~elicitguard.identity.store_redis` (re-exported here).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from elicitguard.base.keys import KeyRing
from elicitguard.errors import PolicyError
from elicitguard.identity.store_base import (
    PURPOSE,
    Clock,
    SecureStore,
    StoreBase,
)
from elicitguard.identity.store_redis import RedisStore
from elicitguard.identity.store_sqlite import SqliteStore

__all__ = [
    "PURPOSE",
    "MemoryStore",
    "RedisStore",
    "SecureStore",
    "SqliteStore",
    "open_store",
]


class MemoryStore(StoreBase):
    """Entries in this process, bounded in number (the oldest go first, counted)."""

    kind = "memory"

    def __init__(
        self,
        keys: KeyRing | None = None,
        *,
        max_entries: int = 100_000,
        clock: Clock = time.time,
    ) -> None:
        super().__init__(keys if keys is not None else KeyRing.random(), clock=clock)
        self.max_entries = max_entries
        self.evictions = 0
        self._data: OrderedDict[str, tuple[bytes, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._ops = 0

    def _live(self, slot: str, now: int) -> tuple[bytes, int] | None:
        entry = self._data.get(slot)
        if entry is not None and entry[1] <= now:
            del self._data[slot]
            return None
        return entry

    def _tick(self) -> None:
        self._ops += 1
        if self._ops % 1024 == 0:
            self._purge_locked()

    def _put(self, slots: list[str], blob: bytes, expires_ms: int) -> None:
        with self._lock:
            self._put_locked(slots, blob, expires_ms)

    def _put_locked(self, slots: list[str], blob: bytes, expires_ms: int) -> None:
        for slot in slots[1:]:
            self._data.pop(slot, None)
        self._data[slots[0]] = (blob, expires_ms)
        self._data.move_to_end(slots[0])
        while len(self._data) > self.max_entries:
            self._data.popitem(last=False)
            self.evictions += 1
        self._tick()

    def _get(self, slots: list[str]) -> bytes | None:
        now = self._now_ms()
        with self._lock:
            for slot in slots:
                entry = self._live(slot, now)
                if entry is not None:
                    return entry[0]
        return None

    def _take(self, slots: list[str]) -> bytes | None:
        now = self._now_ms()
        with self._lock:
            for slot in slots:
                entry = self._live(slot, now)
                if entry is not None:
                    del self._data[slot]
                    return entry[0]
        return None

    def _add(self, slots: list[str], blob: bytes, expires_ms: int) -> bool:
        now = self._now_ms()
        with self._lock:
            if any(self._live(slot, now) is not None for slot in slots):
                return False
            self._put_locked(slots, blob, expires_ms)
        return True

    def _delete(self, slots: list[str]) -> None:
        with self._lock:
            for slot in slots:
                self._data.pop(slot, None)

    def _purge_locked(self) -> int:
        now = self._now_ms()
        dead = [slot for slot, (_, expires) in self._data.items() if expires <= now]
        for slot in dead:
            del self._data[slot]
        return len(dead)

    def purge(self) -> int:
        with self._lock:
            return self._purge_locked()

    def __len__(self) -> int:
        return len(self._data)


def open_store(url: str | None, keys: KeyRing, *, replicas: int = 1) -> SecureStore:
    """Open the store a URL names: ``memory``, ``sqlite:///path`` or ``redis://host/db``.

    ``replicas`` is how many processes serve the same users; more than one needs a shared
    store (Redis, or SQLite on one host) and configured keys, and refuses otherwise.
    """
    if replicas > 1:
        keys.require_configured(f"{replicas} replicas")
    if url is None or url in ("memory", "memory:", "memory://"):
        if replicas > 1:
            msg = (
                f"the memory state store cannot be shared by {replicas} replicas: a flow "
                "started on one would be unknown to the others; use redis://HOST:PORT/DB "
                "(or sqlite:///PATH when every replica runs on one host)"
            )
            raise PolicyError(msg)
        return MemoryStore(keys)
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:")
        path = path[2:] if path.startswith("//") else path
        if not path:
            raise PolicyError(
                "a sqlite state store needs a path: sqlite:///var/lib/elicitguard/state.db"
            )
        return SqliteStore(path, keys)
    if url.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(url, keys)
    msg = "unknown state store; use memory, sqlite:///PATH or redis://HOST:PORT/DB"
    raise PolicyError(msg)
