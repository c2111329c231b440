"""One contract for every state store: memory, SQLite and a real Redis on loopback."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.identity.conftest import key_json

from elicitguard.base.keys import KeyRing, load_keyring
from elicitguard.errors import KeyConfigError, PolicyError
from elicitguard.identity.stores import (
    MemoryStore,
    RedisStore,
    SecureStore,
    SqliteStore,
    open_store,
)


class Clock:
    """A settable clock, so that expiry is tested without sleeping."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


Factory = Callable[[KeyRing, Clock], SecureStore]


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """Build stores of one backend; every store made is closed afterwards."""
    made: list[SecureStore] = []
    prefix = f"eg-test-{request.node.name}-"

    def factory(keys: KeyRing, clock: Clock) -> SecureStore:
        store: SecureStore
        if request.param == "memory":
            store = MemoryStore(keys, clock=clock)
        elif request.param == "sqlite":
            store = SqliteStore(tmp_path / "state.db", keys, clock=clock)
        else:
            url = request.getfixturevalue("redis_url")
            store = RedisStore(url, keys, prefix=prefix, clock=clock)
        made.append(store)
        return store

    yield factory
    for store in made:
        store.close()


def _keys(*ids: str) -> KeyRing:
    return load_keyring(environ={"ELICITGUARD_KEYS": key_json(*ids)})


def test_put_get_round_trip(make_store: Factory) -> None:
    """A value comes back as stored, under its namespace, owner and key."""
    store = make_store(_keys("k1"), Clock())
    store.put("bind", "alice", "h1", b"\x00value\xff", 60)
    assert store.get("bind", "alice", "h1") == b"\x00value\xff"
    assert store.get("bind", "alice", "h2") is None
    assert store.get("other", "alice", "h1") is None


def test_entries_are_namespaced_by_principal(make_store: Factory) -> None:
    """The same handle under another user is another entry (SB-02)."""
    store = make_store(_keys("k1"), Clock())
    store.put("bind", "alice", "handle", b"a", 60)
    assert store.get("bind", "mallory", "handle") is None
    assert store.take("bind", "mallory", "handle") is None
    assert store.get("bind", "alice", "handle") == b"a"


def test_take_is_single_use(make_store: Factory) -> None:
    """take returns the value once and removes it."""
    store = make_store(_keys("k1"), Clock())
    store.put("rs", "alice", "jti", b"v", 60)
    assert store.take("rs", "alice", "jti") == b"v"
    assert store.take("rs", "alice", "jti") is None
    assert store.get("rs", "alice", "jti") is None


def test_add_only_when_absent(make_store: Factory) -> None:
    """add stores a marker once; the second add says it was there."""
    store = make_store(_keys("k1"), Clock())
    assert store.add("used", "alice", "jti-1", b"1", 60)
    assert not store.add("used", "alice", "jti-1", b"1", 60)
    assert store.add("used", "bob", "jti-1", b"1", 60)


def test_ttl_is_enforced(make_store: Factory) -> None:
    """Past its TTL an entry is gone for get, take and add."""
    clock = Clock()
    store = make_store(_keys("k1"), clock)
    store.put("bind", "alice", "h", b"v", 0.2)
    store.add("used", "alice", "m", b"1", 0.2)
    assert store.get("bind", "alice", "h") == b"v"
    clock.now += 0.3
    time.sleep(0.3)  # Redis keeps its own clock for PX
    assert store.get("bind", "alice", "h") is None
    assert store.take("bind", "alice", "h") is None
    assert store.add("used", "alice", "m", b"1", 30)


def test_delete_forgets(make_store: Factory) -> None:
    """delete removes the entry."""
    store = make_store(_keys("k1"), Clock())
    store.put("bind", "alice", "h", b"v", 60)
    store.delete("bind", "alice", "h")
    assert store.get("bind", "alice", "h") is None


def test_rotation_keeps_entries_and_markers(make_store: Factory) -> None:
    """After a rotation old entries still read, and old markers still block an add."""
    old_text = key_json("old")
    store = make_store(load_keyring(environ={"ELICITGUARD_KEYS": old_text}), Clock())
    store.put("bind", "alice", "h", b"v", 60)
    store.add("used", "alice", "jti", b"1", 60)
    # The rotated file lists the new key first and keeps the old one for verification.
    entries = json.loads(key_json("new"))["keys"] + json.loads(old_text)["keys"]
    store.keys = load_keyring(environ={"ELICITGUARD_KEYS": json.dumps({"keys": entries})})  # type: ignore[attr-defined]
    assert store.get("bind", "alice", "h") == b"v"
    assert not store.add("used", "alice", "jti", b"1", 60)
    assert store.take("bind", "alice", "h") == b"v"
    assert store.get("bind", "alice", "h") is None
    store.put("bind", "alice", "h2", b"w", 60)  # new entries go under the new key
    store.keys = load_keyring(environ={"ELICITGUARD_KEYS": json.dumps({"keys": entries[:1]})})  # type: ignore[attr-defined]
    assert store.get("bind", "alice", "h2") == b"w"


def test_values_are_sealed_and_keys_hashed(tmp_path: Path) -> None:
    """The database holds neither the owner, the handle nor the value in clear."""
    store = SqliteStore(tmp_path / "s.db", _keys("k1"))
    store.put("bind", "alice@example.com", "handle-secret-123", b"value-in-clear", 60)
    store.close()
    dump = "\n".join(sqlite3.connect(tmp_path / "s.db").iterdump())
    for clear in ("alice@example.com", "handle-secret-123", "value-in-clear"):
        assert clear not in dump
    assert (tmp_path / "s.db").stat().st_mode & 0o077 == 0


def test_a_value_moved_to_another_slot_does_not_open(make_store: Factory) -> None:
    """A value copied under another user's address fails its integrity check."""
    keys = _keys("k1")
    store = make_store(keys, Clock())
    base = store
    assert hasattr(base, "_slots")
    store.put("bind", "alice", "h", b"secret", 60)
    alice_slot = base._slots("bind", "alice", "h")[0]  # type: ignore[attr-defined]
    bob_slot = base._slots("bind", "bob", "h")[0]  # type: ignore[attr-defined]
    blob = base._get([alice_slot])  # type: ignore[attr-defined]
    base._put([bob_slot], blob, 2**62)  # type: ignore[attr-defined]
    assert store.get("bind", "bob", "h") is None
    assert base.unreadable == 1  # type: ignore[attr-defined]


def test_sqlite_survives_a_restart(tmp_path: Path) -> None:
    """A new process (a new store on the same file and keys) reads what the old one wrote."""
    text = key_json("k1")
    first = SqliteStore(tmp_path / "s.db", load_keyring(environ={"ELICITGUARD_KEYS": text}))
    first.put("bind", "alice", "h", b"v", 60)
    first.close()
    second = SqliteStore(tmp_path / "s.db", load_keyring(environ={"ELICITGUARD_KEYS": text}))
    assert second.take("bind", "alice", "h") == b"v"
    second.close()


@pytest.mark.parametrize(
    "url",
    ["sqlite:///tmp/eg-never-created.db", "redis://127.0.0.1:1/0"],  # persistent, shared
)
def test_shared_and_persistent_stores_refuse_a_random_key(url: str) -> None:
    """A random per-process key would make every stored value unreadable elsewhere."""
    with pytest.raises(KeyConfigError, match="needs configured keys"):
        open_store(url, KeyRing.random())


def test_several_replicas_refuse_a_random_key_and_the_memory_store() -> None:
    """replicas > 1 needs configured keys and a shared store."""
    with pytest.raises(KeyConfigError, match="3 replicas"):
        open_store("memory", KeyRing.random(), replicas=3)
    with pytest.raises(PolicyError, match="cannot be shared"):
        open_store("memory", _keys("k1"), replicas=3)


def test_open_store_names(tmp_path: Path) -> None:
    """memory, sqlite:///PATH; unknown schemes are refused without echoing the URL."""
    assert open_store(None, _keys("k1")).kind == "memory"
    store = open_store(f"sqlite:///{tmp_path}/x.db", _keys("k1"))
    assert store.kind == "sqlite"
    store.close()
    with pytest.raises(PolicyError) as info:
        open_store("mongodb://user:hunter2@host/db", _keys("k1"))
    assert "hunter2" not in str(info.value)


def test_redis_expires_entries_itself(redis_url: str) -> None:
    """Redis holds entries with a PX TTL, so a crashed replica leaves nothing forever."""
    import redis

    store = RedisStore(redis_url, _keys("k1"), prefix="eg-ttl-")
    store.put("bind", "alice", "h", b"v", 30)
    client = redis.Redis.from_url(redis_url)
    names = client.keys("eg-ttl-*")
    assert len(names) == 1
    assert 0 < client.pttl(names[0]) <= 30_000
    client.close()
    store.close()
