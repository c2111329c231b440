"""The SQLite identity state store: one host, several processes, survives restarts."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from elicitguard.base.keys import KeyRing
from elicitguard.identity.store_base import Clock, StoreBase

__all__ = ["SqliteStore"]


class SqliteStore(StoreBase):
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
