"""URL-mode binding: only the user a handle was issued to completes it, once (PH-01, EG505)."""

from __future__ import annotations

import io
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from tests.identity.conftest import key_json

from elicitguard import Engine, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing, load_keyring
from elicitguard.errors import BindingError
from elicitguard.identity.binding import BIND_PARAM, UrlBinder, handle_secret_bits
from elicitguard.identity.principal import Principal
from elicitguard.identity.stores import MemoryStore

ALICE = Principal("https://auth.example.com", "alice")
MALLORY = Principal("https://auth.example.com", "mallory")
OTHER_ISSUER_ALICE = Principal("https://other-idp.example", "alice")


class Clock:
    """A settable clock."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _binder(keys: KeyRing, clock: Clock | None = None, engine: Engine | None = None) -> UrlBinder:
    return UrlBinder(MemoryStore(keys), keys, ttl_s=60, engine=engine, clock=clock or Clock())


def _reason(binder: UrlBinder, handle: str, who: Principal | None) -> str:
    with pytest.raises(BindingError) as info:
        binder.complete(handle, who)
    assert info.value.code == "EG505"
    assert not handle or handle not in str(info.value)
    return info.value.reason


def test_issue_and_complete(keys: KeyRing) -> None:
    """The issuing user completes the flow and gets the data back."""
    binder = _binder(keys)
    handle = binder.issue(ALICE, elicitation_id="e-1", data={"service": "github"})
    assert handle_secret_bits() >= 128
    binding = binder.complete(handle, ALICE)
    assert binding.principal == ALICE
    assert (binding.elicitation_id, dict(binding.data)) == ("e-1", {"service": "github"})


def test_another_user_cannot_complete_and_does_not_burn_it(keys: KeyRing) -> None:
    """Mallory gets other_user; Alice can still complete her own link."""
    binder = _binder(keys)
    handle = binder.issue(ALICE)
    assert _reason(binder, handle, MALLORY) == "other_user"
    assert _reason(binder, handle, OTHER_ISSUER_ALICE) == "other_user"  # same sub, other issuer
    assert binder.complete(handle, ALICE).principal == ALICE


def test_a_handle_is_single_use(keys: KeyRing) -> None:
    """The second completion is refused as reused."""
    binder = _binder(keys)
    handle = binder.issue(ALICE)
    binder.complete(handle, ALICE)
    assert _reason(binder, handle, ALICE) == "reused"


def test_an_expired_handle_is_refused(keys: KeyRing) -> None:
    """Past the TTL the handle is expired (kept a grace period to say so)."""
    clock = Clock()
    binder = _binder(keys, clock)
    handle = binder.issue(ALICE)
    clock.now += 61
    assert _reason(binder, handle, ALICE) == "expired"


def test_edited_and_made_up_handles_are_unknown(keys: KeyRing) -> None:
    """Changing any character of the secret, or inventing one, gives unknown."""
    binder = _binder(keys)
    handle = binder.issue(ALICE)
    tag, secret = handle.split(".")
    edited = f"{tag}.{secret[:-1]}{'A' if secret[-1] != 'A' else 'B'}"
    assert _reason(binder, edited, ALICE) == "unknown"
    assert _reason(binder, "not-a-handle", ALICE) == "unknown"
    assert _reason(binder, "", ALICE) == "unknown"
    # Mallory swaps the owner tag for her own: the entry is not under her name.
    mallory_tag = binder.issue(MALLORY).split(".")[0]
    assert _reason(binder, f"{mallory_tag}.{secret}", MALLORY) == "unknown"
    assert binder.complete(handle, ALICE).principal == ALICE


def test_an_unauthenticated_user_cannot_complete(keys: KeyRing) -> None:
    """No verified principal: refused; and issuing needs one too."""
    binder = _binder(keys)
    handle = binder.issue(ALICE)
    assert _reason(binder, handle, None) == "unauthenticated"
    with pytest.raises(BindingError):
        binder.issue(None)  # type: ignore[arg-type]


def test_handles_are_random_and_url_safe(keys: KeyRing) -> None:
    """Distinct handles, URL-safe characters, placed in the URL as eg_bind."""
    binder = _binder(keys)
    handles = {binder.issue(ALICE) for _ in range(200)}
    assert len(handles) == 200
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", h) for h in handles)
    url, handle = binder.issue_url(
        ALICE, "https://mcp.example.com/connect?service=github&eg_bind=old"
    )
    query = parse_qs(urlsplit(url).query)
    assert [handle] == query[BIND_PARAM]
    assert query["service"] == ["github"]


def test_rotation_keeps_issued_handles_working() -> None:
    """A handle issued before a key rotation completes after it."""
    old_text = key_json("old")
    old = load_keyring(environ={"ELICITGUARD_KEYS": old_text})
    store = MemoryStore(old)
    handle = UrlBinder(store, old).issue(ALICE)
    entries = json.loads(key_json("new"))["keys"] + json.loads(old_text)["keys"]
    rotated = load_keyring(environ={"ELICITGUARD_KEYS": json.dumps({"keys": entries})})
    store.keys = rotated
    assert UrlBinder(store, rotated).complete(handle, ALICE).principal == ALICE


def test_failures_are_reported_as_eg505(keys: KeyRing) -> None:
    """With an engine attached, a completion by another user is an audited EG505 decision."""
    out = io.StringIO()
    engine = Engine(load_policy("builtin:default"), audit=AuditSink(out), keys=keys)
    binder = _binder(keys, engine=engine)
    handle = binder.issue(ALICE)
    _reason(binder, handle, MALLORY)
    record = json.loads(out.getvalue().strip().splitlines()[-1])
    assert [f["code"] for f in record["findings"]] == ["EG505"]
    assert record["action"] == "block"
    assert handle not in out.getvalue()
    assert "mallory" not in out.getvalue()
