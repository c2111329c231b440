"""The Redis identity state store: several replicas behind a load balancer."""

from __future__ import annotations

import time
from typing import Any

from elicitguard.base.keys import KeyRing
from elicitguard.errors import PolicyError
from elicitguard.identity.store_base import Clock, StoreBase

__all__ = ["RedisStore"]


#: Take the first of the keys that exists (any rotation of the address), atomically.
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


class RedisStore(StoreBase):
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
