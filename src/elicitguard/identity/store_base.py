"""The contract every identity state store keeps, and what the backends share.

Why: the memory, SQLite and Redis stores (:mod:`elicitguard.identity.stores`) differ only in
where bytes go; addressing by keyed HMAC, sealing with AES-GCM bound to the address, expiry
sealed into the value and key rotation are the same code for all three, here.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
import time
from collections.abc import Callable
from typing import Protocol

from elicitguard.base.keys import KeyRing
from elicitguard.identity.aead import SealedBlobError, open_blob, seal_blob

__all__ = ["EXPIRY", "INDEX_LABEL", "PURPOSE", "Clock", "SecureStore", "StoreBase"]

PURPOSE = "state"
INDEX_LABEL = "state-index"
EXPIRY = struct.Struct(">Q")
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


class StoreBase:
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
            index_key = k.derive(INDEX_LABEL)
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
            self.keys, PURPOSE, EXPIRY.pack(expires) + value, self._aad(namespace, owner, key)
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
        (expires,) = EXPIRY.unpack_from(plain)
        if expires <= self._now_ms():
            return None
        return plain[EXPIRY.size :]

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
