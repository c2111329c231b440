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
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sqlite3
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from elicitguard.base.keys import KeyRing
from elicitguard.errors import PolicyError
from elicitguard.identity.aead import SealedBlobError, open_blob, seal_blob

__all__ = [
    "MemoryStore",
    "RedisStore",
    "SecureStore",
    "SqliteStore",
    "open_store",
]

PURPOSE = "state"
_INDEX_LABEL = "state-index"
_EXPIRY = struct.Struct(">Q")
Clock = Callable[[], float]


class SecureStore(Protocol):
    """A small encrypted key-value store with expiry, namespaced by principal."""

    kind: str

    def put(self, namespace: str, owner: str, key: str, value: bytes, ttl_s: float) -> None:
        """Store ``value`` for ``ttl_s`` seconds, replacing what was there."""
        ...

    def get(self, namespace: str, owner: str, key: str) -> bytes | None:
        """The value, or ``None`` when absent, expired or not openable."""
        ...

    def take(self, namespace: str, owner: str, key: str) -> bytes | None:
        """Remove and return the value in one atomic step (single use)."""
        ...

    def add(self, namespace: str, owner: str, key: str, value: bytes, ttl_s: float) -> bool:
        """Store ``value`` only if nothing live is there; True when it was stored."""
        ...

    def delete(self, namespace: str, owner: str, key: str) -> None:
        """Forget the entry."""
        ...

    def purge(self) -> int:
        """Drop expired entries now; returns how many went (0 where the backend expires)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class _Base:
    """Addressing and sealing shared by every backend; backends move opaque blobs."""

    kind = "base"

    def __init__(self, keys: KeyRing, *, prefix: str = "eg:", clock: Clock = time.time) -> None:
        self.keys = keys
        self.prefix = prefix
        self.clock = clock
        self.unreadable = 0  # values that failed to open (tampered, or keys removed)

    # --- addressing and sealing -----------------------------------------------------------

    def _slots(self, namespace: str, owner: str, key: str) -> list[str]:
        """The backend addresses of one entry: one per verifying key, signing key first."""
        signing = self.keys.signing_key(PURPOSE)
        ordered = [signing, *(k for k in self.keys.verifying_keys(PURPOSE) if k is not signing)]
        slots: list[str] = []
        for k in ordered:
            index_key = k.derive(_INDEX_LABEL)
            owner_tag = hmac.new(index_key, owner.encode("utf-8", "surrogatepass"), hashlib.sha256)
            key_tag = hmac.new(
                index_key,
                namespace.encode() + b"\x00" + key.encode("utf-8", "surrogatepass"),
                hashlib.sha256,
            )
            slots.append(
                f"{self.prefix}{namespace}:{owner_tag.hexdigest()[:32]}:{key_tag.hexdigest()[:32]}"
            )
        return slots

    @staticmethod
    def _aad(namespace: str, owner: str, key: str) -> bytes:
        parts = (namespace, owner, key)
        return b"\x00".join(p.encode("utf-8", "surrogatepass") for p in parts)

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    def _seal(
        self, namespace: str, owner: str, key: str, value: bytes, ttl_s: float
    ) -> tuple[bytes, int]:
        if ttl_s <= 0:
            raise ValueError("ttl_s must be positive")
        expires = self._now_ms() + max(1, int(ttl_s * 1000))
        blob = seal_blob(
            self.keys, PURPOSE, _EXPIRY.pack(expires) + value, self._aad(namespace, owner, key)
        )
        return blob, expires

    def _open(self, namespace: str, owner: str, key: str, blob: bytes | None) -> bytes | None:
        if blob is None:
            return None
        try:
            plain = open_blob(self.keys, PURPOSE, blob, self._aad(namespace, owner, key))
        except SealedBlobError:
            self.unreadable += 1
            return None
        (expires,) = _EXPIRY.unpack_from(plain)
        if expires <= self._now_ms():
            return None
        return plain[_EXPIRY.size :]

    # --- the interface ----------------------------------------------------------------------

    def put(self, namespace: str, owner: str, key: str, value: bytes, ttl_s: float) -> None:
        blob, expires = self._seal(namespace, owner, key, value, ttl_s)
        self._put(self._slots(namespace, owner, key), blob, expires)

    def get(self, namespace: str, owner: str, key: str) -> bytes | None:
        return self._open(namespace, owner, key, self._get(self._slots(namespace, owner, key)))

    def take(self, namespace: str, owner: str, key: str) -> bytes | None:
        return self._open(namespace, owner, key, self._take(self._slots(namespace, owner, key)))

    def add(self, namespace: str, owner: str, key: str, value: bytes, ttl_s: float) -> bool:
        blob, expires = self._seal(namespace, owner, key, value, ttl_s)
        return self._add(self._slots(namespace, owner, key), blob, expires)

    def delete(self, namespace: str, owner: str, key: str) -> None:
        self._delete(self._slots(namespace, owner, key))

    def purge(self) -> int:
        return 0

    def close(self) -> None:
        return None

    # --- backend primitives (slots are tried in order; the first is where writes go) -------

    def _put(self, slots: list[str], blob: bytes, expires_ms: int) -> None:
        raise NotImplementedError

    def _get(self, slots: list[str]) -> bytes | None:
        raise NotImplementedError

    def _take(self, slots: list[str]) -> bytes | None:
        raise NotImplementedError

    def _add(self, slots: list[str], blob: bytes, expires_ms: int) -> bool:
        raise NotImplementedError

    def _delete(self, slots: list[str]) -> None:
        raise NotImplementedError


class MemoryStore(_Base):
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


class SqliteStore(_Base):
    """Entries in one SQLite file: one host, any number of processes, survives restarts.

    WAL mode and ``BEGIN IMMEDIATE`` make ``take`` and ``add`` atomic across processes. The
    file is created with mode 0600.
    """

    kind = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        keys: KeyRing,
        *,
        clock: Clock = time.time,
        purge_every: int = 512,
    ) -> None:
        keys.require_configured("the sqlite state store (its entries outlive this process)")
        super().__init__(keys, clock=clock)
        self.path = Path(path)
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        self._conn = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=10.0
        )
        self._lock = threading.Lock()
        self._ops = 0
        self._purge_every = purge_every
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS eg_state "
                "(slot TEXT PRIMARY KEY, blob BLOB NOT NULL, exp INTEGER NOT NULL) WITHOUT ROWID"
            )
            self._conn.execute("CREATE INDEX IF NOT EXISTS eg_state_exp ON eg_state (exp)")

    @staticmethod
    def _marks(slots: list[str]) -> str:
        return ",".join("?" * len(slots))

    def _first(self, rows: list[Any], slots: list[str]) -> bytes | None:
        found = {row[0]: row[1] for row in rows}
        for slot in slots:
            if slot in found:
                return bytes(found[slot])
        return None

    def _tick(self) -> None:
        self._ops += 1
        if self._ops % self._purge_every == 0:
            self._conn.execute("DELETE FROM eg_state WHERE exp <= ?", (self._now_ms(),))

    def _put(self, slots: list[str], blob: bytes, expires_ms: int) -> None:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                if len(slots) > 1:
                    conn.execute(
                        f"DELETE FROM eg_state WHERE slot IN ({self._marks(slots[1:])})",  # noqa: S608
                        slots[1:],
                    )
                conn.execute(
                    "INSERT OR REPLACE INTO eg_state (slot, blob, exp) VALUES (?, ?, ?)",
                    (slots[0], blob, expires_ms),
                )
                self._tick()
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _get(self, slots: list[str]) -> bytes | None:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT slot, blob FROM eg_state WHERE slot IN ({self._marks(slots)}) AND exp > ?",  # noqa: S608
                (*slots, self._now_ms()),
            ).fetchall()
        return self._first(rows, slots)

    def _take(self, slots: list[str]) -> bytes | None:
        with self._lock:
            rows = self._conn.execute(
                f"DELETE FROM eg_state WHERE slot IN ({self._marks(slots)}) RETURNING slot, blob, exp",  # noqa: S608
                slots,
            ).fetchall()
        now = self._now_ms()
        return self._first([r for r in rows if r[2] > now], slots)

    def _add(self, slots: list[str], blob: bytes, expires_ms: int) -> bool:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                live = conn.execute(
                    f"SELECT 1 FROM eg_state WHERE slot IN ({self._marks(slots)}) AND exp > ? LIMIT 1",  # noqa: S608
                    (*slots, self._now_ms()),
                ).fetchone()
                if live is None:
                    conn.execute(
                        "INSERT OR REPLACE INTO eg_state (slot, blob, exp) VALUES (?, ?, ?)",
                        (slots[0], blob, expires_ms),
                    )
                    self._tick()
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return live is None

    def _delete(self, slots: list[str]) -> None:
        with self._lock:
            self._conn.execute(
                f"DELETE FROM eg_state WHERE slot IN ({self._marks(slots)})",  # noqa: S608
                slots,
            )

    def purge(self) -> int:
        with self._lock:
            cursor = self._conn.execute("DELETE FROM eg_state WHERE exp <= ?", (self._now_ms(),))
            return cursor.rowcount

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# Atomic multi-slot operations: a marker or value written under an older key still counts.
_TAKE_SCRIPT = """
for i, k in ipairs(KEYS) do
  local v = redis.call('GET', k)
  if v then redis.call('DEL', k) return v end
end
return false
"""
_ADD_SCRIPT = """
for i, k in ipairs(KEYS) do
  if redis.call('EXISTS', k) == 1 then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


class RedisStore(_Base):
    """Entries in Redis, shared by every replica; Redis expires them (``PX``).

    Needs the ``redis`` package (``elicitguard[redis]``) and configured keys: every replica
    must open what another sealed.
    """

    kind = "redis"

    def __init__(
        self,
        url: str,
        keys: KeyRing,
        *,
        prefix: str = "eg:",
        clock: Clock = time.time,
        client: Any = None,
    ) -> None:
        keys.require_configured("the redis state store (shared by several replicas)")
        super().__init__(keys, prefix=prefix, clock=clock)
        if client is None:
            try:
                import redis
            except ImportError:
                msg = "the redis state store needs the redis package: pip install 'elicitguard[redis]'"
                raise PolicyError(msg) from None
            client = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=5.0)
        self._redis = client
        self._take_script = client.register_script(_TAKE_SCRIPT)
        self._add_script = client.register_script(_ADD_SCRIPT)

    def _ttl_ms(self, expires_ms: int) -> int:
        return max(1, expires_ms - self._now_ms())

    def _put(self, slots: list[str], blob: bytes, expires_ms: int) -> None:
        pipe = self._redis.pipeline(transaction=True)
        if len(slots) > 1:
            pipe.delete(*slots[1:])
        pipe.set(slots[0], blob, px=self._ttl_ms(expires_ms))
        pipe.execute()

    def _get(self, slots: list[str]) -> bytes | None:
        for value in self._redis.mget(slots):
            if value is not None:
                return bytes(value)
        return None

    def _take(self, slots: list[str]) -> bytes | None:
        value = self._take_script(keys=slots)
        return bytes(value) if value else None

    def _add(self, slots: list[str], blob: bytes, expires_ms: int) -> bool:
        return bool(self._add_script(keys=slots, args=[blob, self._ttl_ms(expires_ms)]))

    def _delete(self, slots: list[str]) -> None:
        self._redis.delete(*slots)

    def close(self) -> None:
        self._redis.close()


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
