"""requestState sealing: exact round trip, and every kind of bad state refused and audited."""

from __future__ import annotations

import base64
import io
import json

import orjson
import pytest
from tests.identity.conftest import key_json

from elicitguard.audit.records import AuditLog
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing, load_keyring
from elicitguard.errors import StateError
from elicitguard.identity.principal import Principal
from elicitguard.identity.sealing import (
    INVALID_STATE_MESSAGE,
    TOKEN_PREFIX,
    RequestStateGuard,
    RequestStateSealer,
    owner_of,
    request_digest,
)
from elicitguard.identity.stores import MemoryStore

ALICE = Principal("https://auth.example.com", "alice")
BOB = Principal("https://auth.example.com", "bob")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


class Clock:
    """A settable clock."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _ring(text: str) -> KeyRing:
    return load_keyring(environ={"ELICITGUARD_KEYS": text})


def _sealer(keys: KeyRing, clock: Clock | None = None) -> RequestStateSealer:
    return RequestStateSealer(keys, MemoryStore(keys), ttl_s=60, clock=clock or Clock())


REQUEST = request_digest("tools/call", {"name": "book", "arguments": {"table": 4}})
OWNER = owner_of(ALICE)


@pytest.mark.parametrize(
    "inner",
    [
        "v1.upstream-state",  # an SDK token
        '{"step": 2, "user": "alice"}',  # plain JSON
        "",  # empty
        'é ü 中文 🙂 \n\t\\"',  # non-ASCII and escapes
        "\ud800 lone surrogate",  # what a stdlib JSON parser can hand over
        "x" * 100_000,  # large
    ],
)
def test_the_upstream_gets_back_exactly_what_it_issued(keys: KeyRing, inner: str) -> None:
    """Seal then unseal gives the identical string, whatever it holds."""
    sealer = _sealer(keys)
    token = sealer.seal(inner, owner=OWNER, request=REQUEST)
    assert token.startswith(TOKEN_PREFIX)
    assert inner[:20] not in token or inner == ""
    assert inner == sealer.unseal(token, owner=OWNER, request=REQUEST)


def _reason(sealer: RequestStateSealer, token: str, **kw: object) -> str:
    with pytest.raises(StateError) as info:
        sealer.unseal(token, owner=kw.get("owner", OWNER), request=kw.get("request", REQUEST))  # type: ignore[arg-type]
    assert info.value.code == "EG504"
    return info.value.reason


def test_every_flipped_bit_is_refused(keys: KeyRing) -> None:
    """Tampering with any single bit of the sealed blob is detected."""
    sealer = _sealer(keys)
    token = sealer.seal('{"step": 2}', owner=OWNER, request=REQUEST)
    blob = base64.urlsafe_b64decode(token[len(TOKEN_PREFIX) :] + "==")
    for index in range(len(blob) * 8):
        changed = bytearray(blob)
        changed[index // 8] ^= 1 << (index % 8)
        forged = TOKEN_PREFIX + base64.urlsafe_b64encode(bytes(changed)).decode().rstrip("=")
        assert _reason(sealer, forged) in {"tampered", "unknown_key", "malformed"}


def test_every_truncation_is_refused(keys: KeyRing) -> None:
    """A token cut anywhere is refused."""
    sealer = _sealer(keys)
    token = sealer.seal("state", owner=OWNER, request=REQUEST)
    for end in range(len(token)):
        _reason(sealer, token[:end])


def test_expired_state_is_refused(keys: KeyRing) -> None:
    """After the TTL the state no longer opens."""
    clock = Clock()
    sealer = _sealer(keys, clock)
    token = sealer.seal("state", owner=OWNER, request=REQUEST)
    clock.now += 61
    assert _reason(sealer, token) == "expired"


def test_replayed_state_is_refused(keys: KeyRing) -> None:
    """A state opens once."""
    sealer = _sealer(keys)
    token = sealer.seal("state", owner=OWNER, request=REQUEST)
    sealer.unseal(token, owner=OWNER, request=REQUEST)
    assert _reason(sealer, token) == "replayed"


def test_state_of_another_principal_is_refused_without_burning_it(keys: KeyRing) -> None:
    """Bob cannot use Alice's state, and his attempt does not use it up."""
    sealer = _sealer(keys)
    token = sealer.seal("state", owner=OWNER, request=REQUEST)
    assert _reason(sealer, token, owner=owner_of(BOB)) == "wrong_principal"
    assert sealer.unseal(token, owner=OWNER, request=REQUEST) == "state"


def test_state_on_another_request_is_refused(keys: KeyRing) -> None:
    """Other tool, other arguments: refused (MR-07, MR-12)."""
    sealer = _sealer(keys)
    token = sealer.seal("state", owner=OWNER, request=REQUEST)
    other = request_digest("tools/call", {"name": "book", "arguments": {"table": 5}})
    assert _reason(sealer, token, request=other) == "wrong_request"
    same = request_digest(
        "tools/call",
        {"name": "book", "arguments": {"table": 4}, "_meta": META, "requestState": token},
    )
    assert same == REQUEST  # _meta and the state itself are not part of the request


def test_foreign_and_garbage_tokens_are_refused(keys: KeyRing) -> None:
    """Another deployment's token, an SDK token and garbage are all refused."""
    sealer = _sealer(keys)
    stranger = _sealer(load_keyring(environ={"ELICITGUARD_KEYS": key_json("k1")}))
    token = stranger.seal("state", owner=OWNER, request=REQUEST)
    assert _reason(sealer, token) == "tampered"  # same key id, other secret
    assert _reason(sealer, "v1.2EmK5vxf") == "malformed"
    assert _reason(sealer, TOKEN_PREFIX + "!!!") == "malformed"


def test_rotation_mid_flow(keys: KeyRing) -> None:
    """State sealed before a rotation opens after it; once the old key is gone it does not."""
    old_text = key_json("2026-10")
    before = _ring(old_text)
    store = MemoryStore(before)
    clock = Clock()
    token = RequestStateSealer(before, store, clock=clock).seal("s", owner=OWNER, request=REQUEST)
    entries = json.loads(key_json("2026-11"))["keys"] + json.loads(old_text)["keys"]
    rotated = _ring(json.dumps({"keys": entries}))
    after = RequestStateSealer(rotated, store, clock=clock)
    assert after.key_id(token) == "2026-10"
    new_token = after.seal("t", owner=OWNER, request=REQUEST)
    assert after.key_id(new_token) == "2026-11"
    assert after.unseal(token, owner=OWNER, request=REQUEST) == "s"
    only_new = RequestStateSealer(_ring(json.dumps({"keys": entries[:1]})), store, clock=clock)
    assert only_new.unseal(new_token, owner=OWNER, request=REQUEST) == "t"
    second = RequestStateSealer(before, store, clock=clock).seal("u", owner=OWNER, request=REQUEST)
    assert _reason(only_new, second) == "unknown_key"


def _guard(keys: KeyRing) -> tuple[RequestStateGuard, io.StringIO]:
    out = io.StringIO()
    audit = AuditLog(AuditSink(out), keys)
    return RequestStateGuard(_sealer(keys), audit=audit, server="demo"), out


def _call(rid: int, **extra: object) -> dict[str, object]:
    params: dict[str, object] = {"name": "book", "arguments": {"table": 4}, "_meta": META}
    params.update(extra)
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_guard_round_trip_over_messages(keys: KeyRing) -> None:
    """Outgoing state is sealed; the retry reaches the upstream with the exact original."""
    guard, _ = _guard(keys)
    assert guard.client_message(_call(1), principal=ALICE).message is None
    result = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "input_required", "requestState": "upstream-ÿ-state"},
    }
    sealed = guard.server_message(result)
    assert sealed.message is not None
    token = sealed.message["result"]["requestState"]
    assert token.startswith(TOKEN_PREFIX)
    assert result["result"]["requestState"] == "upstream-ÿ-state"  # the original is untouched
    retry = guard.client_message(_call(2, requestState=token), principal=ALICE)
    assert retry.reply is None
    assert retry.message is not None
    assert retry.message["params"]["requestState"] == "upstream-ÿ-state"
    # forwarded bytes: only requestState changed
    again = orjson.loads(orjson.dumps(retry.message))
    assert again["params"]["arguments"] == {"table": 4}


def test_guard_seals_task_state(keys: KeyRing) -> None:
    """The tasks extension's state (result.task.requestState) is sealed and bound to the task."""
    guard, _ = _guard(keys)
    guard.client_message(
        {"jsonrpc": "2.0", "id": 7, "method": "tasks/get", "params": {"taskId": "t-1"}},
        principal=ALICE,
    )
    out = guard.server_message(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"task": {"status": "input_required", "requestState": "inner"}},
        }
    )
    assert out.message is not None
    token = out.message["result"]["task"]["requestState"]
    update = {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "tasks/update",
        "params": {"taskId": "t-1", "inputResponses": {}, "requestState": token},
    }
    opened = guard.client_message(update, principal=ALICE)
    assert opened.message is not None
    assert opened.message["params"]["requestState"] == "inner"


def test_guard_refuses_with_invalid_params_and_audits(keys: KeyRing) -> None:
    """A bad state gets -32602 with data.elicitguard, and one audit event without the state."""
    guard, out = _guard(keys)
    outcome = guard.client_message(
        _call(2, requestState="egs1.forged-state-value"), principal=ALICE
    )
    assert outcome.message is None
    assert outcome.reply is not None
    error = outcome.reply["error"]
    assert error["code"] == -32602
    assert error["message"] == INVALID_STATE_MESSAGE
    assert error["data"]["elicitguard"]["codes"] == ["EG504"]
    assert outcome.reply["id"] == 2
    event = json.loads(out.getvalue().strip().splitlines()[-1])
    assert event["event"] == "elicitguard.request_state"
    assert event["reason"] == "malformed"
    assert "forged-state-value" not in out.getvalue()
    assert "alice" not in out.getvalue()


def test_guard_refuses_non_string_state(keys: KeyRing) -> None:
    """A requestState that is not a string cannot be one the guard sealed."""
    guard, _ = _guard(keys)
    outcome = guard.client_message(_call(3, requestState={"x": 1}), principal=ALICE)
    assert outcome.reply is not None
    assert outcome.reason == "malformed"


def test_guard_leaves_other_messages_alone(keys: KeyRing) -> None:
    """Notifications, results without state and errors pass unchanged."""
    guard, _ = _guard(keys)
    assert (
        guard.client_message({"jsonrpc": "2.0", "method": "notifications/initialized"}).message
        is None
    )
    assert (
        guard.server_message({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}).message is None
    )
    assert (
        guard.server_message(
            {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}
        ).message
        is None
    )


def test_state_sealed_blind_never_opens(keys: KeyRing) -> None:
    """A state on a response to an unknown request is sealed so that no retry can use it."""
    guard, _ = _guard(keys)
    out = guard.server_message(
        {
            "jsonrpc": "2.0",
            "id": 99,
            "result": {"resultType": "input_required", "requestState": "s"},
        }
    )
    assert out.message is not None
    token = out.message["result"]["requestState"]
    retry = guard.client_message(_call(100, requestState=token), principal=ALICE)
    assert retry.reason in {"wrong_request", "wrong_principal"}
