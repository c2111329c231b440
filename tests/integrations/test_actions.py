"""Acting on decisions (DESIGN.md "Decisions in traffic"), for both eras, without I/O."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from elicitguard import Direction, Engine, Hit, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.engine.context import CheckContext, check
from elicitguard.integrations.actions import Drop, Forward, Relay, Replace, Reply, dumps
from elicitguard.protocol.items import Item

HERE = Path(__file__).parent
POLICY = HERE / "policy" / "test-policy.yaml"
S2C = Direction.SERVER_TO_CLIENT
C2S = Direction.CLIENT_TO_SERVER
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}


def relay_for(
    side: Side = Side.PROXY, extra: list[dict[str, Any]] | None = None, source: Any = POLICY
) -> tuple[Relay, io.StringIO]:
    stream = io.StringIO()
    policy = load_policy(source, environ={}, extra_layers=extra)
    engine = Engine(policy, audit=AuditSink(stream), keys=KeyRing.random())
    return Relay(engine, side=side, server="demo"), stream


def raw(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def push_handshake(relay: Relay, version: str = "2025-11-25") -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    assert isinstance(relay.inspect(raw(init), C2S, session="s"), Forward)
    ok = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version, "capabilities": {}}}
    assert isinstance(relay.inspect(raw(ok), S2C, session="s"), Forward)


def url_push(url: str, jsonrpc_id: Any = 7) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": jsonrpc_id,
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Connect", "url": url, "elicitationId": "e1"},
    }


def form_params(*fields: str, required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {f: {"type": "string"} for f in fields},
    }
    if required is not None:
        schema["required"] = required
    return {"mode": "form", "message": "Details", "requestedSchema": schema}


def test_allowed_push_request_is_forwarded_as_is() -> None:
    """A benign pushed elicitation passes unchanged, with its decision attached."""
    relay, _ = relay_for()
    push_handshake(relay)
    outcome = relay.inspect(raw(url_push("https://auth.example.com/c")), S2C, session="s")
    assert isinstance(outcome, Forward)
    assert outcome.decision is not None
    assert not outcome.decision.fast_path


def test_blocked_push_request_gets_the_documented_error() -> None:
    """A blocked push never reaches the client; the server gets -31001 with data.elicitguard."""
    relay, _ = relay_for()
    push_handshake(relay)
    outcome = relay.inspect(raw(url_push("https://login.evil.example/x", "abc")), S2C, session="s")
    assert isinstance(outcome, Reply)
    error = outcome.message["error"]
    assert outcome.message["id"] == "abc"
    assert error["code"] == -31001
    assert "TST001" in error["data"]["elicitguard"]["codes"]
    assert error["data"]["elicitguard"]["decision_id"] == outcome.decision.decision_id  # type: ignore[union-attr]
    assert b"login.evil.example" not in outcome.to_bytes()  # names the rule, never the URL


def test_push_error_code_follows_the_policy() -> None:
    """on_block.push_error_code changes the code."""
    relay, _ = relay_for(extra=[{"on_block": {"push_error_code": -31500}}])
    push_handshake(relay)
    outcome = relay.inspect(raw(url_push("https://a.evil.example/")), S2C, session="s")
    assert isinstance(outcome, Reply)
    assert outcome.message["error"]["code"] == -31500


@pytest.mark.parametrize("answer", ["decline", "cancel"])
def test_client_side_block_answers_with_on_block_client(answer: str) -> None:
    """On the client side a blocked request is answered with on_block.client."""
    relay, _ = relay_for(Side.CLIENT, extra=[{"on_block": {"client": answer}}])
    push_handshake(relay)
    outcome = relay.inspect(raw(url_push("https://a.evil.example/")), S2C, session="s")
    assert isinstance(outcome, Reply)
    assert outcome.message == {"jsonrpc": "2.0", "id": 7, "result": {"action": answer}}
    assert outcome.decision is not None
    assert "TST001" in outcome.decision.codes


def test_monitor_mode_changes_nothing() -> None:
    """In monitor mode a violation is decided and recorded, and the bytes go on."""
    relay, stream = relay_for(extra=[{"mode": "monitor"}])
    push_handshake(relay)
    outcome = relay.inspect(raw(url_push("https://a.evil.example/")), S2C, session="s")
    assert isinstance(outcome, Forward)
    assert '"enforced":false' in stream.getvalue()


def modern_call(jsonrpc_id: int, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "connect", "arguments": {"x": 1}, "_meta": META, **extra}
    return {"jsonrpc": "2.0", "id": jsonrpc_id, "method": "tools/call", "params": params}


def input_required(jsonrpc_id: int, requests: dict[str, Any], state: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        result["requestState"] = state
    return {"jsonrpc": "2.0", "id": jsonrpc_id, "result": result}


def url_entry(url: str) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"mode": "url", "message": "Go", "url": url}}


@pytest.mark.parametrize("state", ["v1.opaque\u00e9state", None])
def test_blocked_input_request_is_removed_and_declined_on_retry(state: str | None) -> None:
    """A blocked inputRequests entry is removed; the retry gets decline for it."""
    relay, _ = relay_for()
    assert isinstance(relay.inspect(raw(modern_call(1)), C2S, session="m"), Forward)
    reply = input_required(
        1,
        {
            "good": url_entry("https://auth.example.com/ok"),
            "bad": url_entry("https://x.evil.example/p"),
        },
        state,
    )
    outcome = relay.inspect(raw(reply), S2C, session="m")
    assert isinstance(outcome, Replace)
    result = outcome.message["result"]
    assert list(result["inputRequests"]) == ["good"]
    if state is not None:
        assert result["requestState"] == state
        assert json.loads(outcome.to_bytes())["result"]["requestState"] == state
    retry_params: dict[str, Any] = {"inputResponses": {"good": {"action": "accept"}}}
    if state is not None:
        retry_params["requestState"] = state
    retry = modern_call(2, **retry_params)
    outcome = relay.inspect(raw(retry), C2S, session="m")
    assert isinstance(outcome, Replace)
    responses = outcome.message["params"]["inputResponses"]
    assert responses == {"good": {"action": "accept"}, "bad": {"action": "decline"}}
    if state is not None:
        assert outcome.message["params"]["requestState"] == state


def test_input_required_with_no_entry_left_becomes_an_error() -> None:
    """When every entry is blocked the client gets the documented error instead."""
    relay, _ = relay_for()
    relay.inspect(raw(modern_call(4)), C2S, session="m")
    reply = input_required(4, {"bad": url_entry("https://x.evil.example/p")}, "st")
    outcome = relay.inspect(raw(reply), S2C, session="m")
    assert isinstance(outcome, Replace)
    assert outcome.message["id"] == 4
    assert outcome.message["error"]["code"] == -31001
    assert "TST001" in outcome.message["error"]["data"]["elicitguard"]["codes"]


def test_benign_input_required_is_forwarded_byte_for_byte() -> None:
    """A benign round passes unchanged and its retry is not touched."""
    relay, _ = relay_for()
    relay.inspect(raw(modern_call(1)), C2S, session="m")
    reply = input_required(1, {"good": url_entry("https://auth.example.com/ok")}, "st")
    assert isinstance(relay.inspect(raw(reply), S2C, session="m"), Forward)
    retry = modern_call(2, inputResponses={"good": {"action": "accept"}}, requestState="st")
    assert isinstance(relay.inspect(raw(retry), C2S, session="m"), Forward)


def test_url_required_error_with_a_blocked_url_is_replaced() -> None:
    """A -32042 error whose only URL is blocked reaches the client as the guard's error."""
    relay, _ = relay_for()
    push_handshake(relay)
    relay.inspect(raw({"jsonrpc": "2.0", "id": 3, "method": "tools/call"}), C2S, session="s")
    error = {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": -32042,
            "message": "auth",
            "data": {"elicitations": [url_push("https://y.evil.example/")["params"]]},
        },
    }
    outcome = relay.inspect(raw(error), S2C, session="s")
    assert isinstance(outcome, Replace)
    assert outcome.message["error"]["code"] == -31001


@check("tests.integrations.redact_field")
def _redact_field(item: Item, ctx: CheckContext, params: Mapping[str, Any]) -> Iterator[Hit]:
    content = item.data.get("content") if isinstance(item.data, dict) else None
    if isinstance(content, dict):
        for name in content:
            if name.startswith("flagged"):
                yield Hit(pointer=f"{item.pointer}/content/{name}", field=name)


def redact_policy(tmp_path: Path) -> Path:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "TST900-redact-secret.yaml").write_text(
        "code: TST900\nname: redact-secret\nsummary: s\nseverity: high\naction: redact\n"
        "applies_to: {items: [elicit_result]}\ncheck: tests.integrations.redact_field\n"
        "message: m\ndocs: {why: w, fix: f, example: {expect: ruleid, note: n, message: {}}}\n"
    )
    policy = tmp_path / "p.yaml"
    policy.write_text('extends: ["builtin:default"]\npacks: [pack]\naudit: {sink: none}\n')
    return policy


@pytest.mark.parametrize(
    ("required", "expected"),
    [
        (["name"], {"action": "accept", "content": {"name": "Ada"}}),
        (["name", "flagged_note"], {"action": "decline"}),
    ],
)
def test_redact_removes_optional_keys_and_declines_for_required(
    tmp_path: Path, required: list[str], expected: dict[str, Any]
) -> None:
    """redact drops non-required offending keys; a required one turns the answer to decline."""
    relay, _ = relay_for(source=redact_policy(tmp_path))
    push_handshake(relay)
    request = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "elicitation/create",
        "params": form_params("name", "flagged_note", required=required),
    }
    assert isinstance(relay.inspect(raw(request), S2C, session="s"), Forward)
    answer = {
        "jsonrpc": "2.0",
        "id": 9,
        "result": {"action": "accept", "content": {"name": "Ada", "flagged_note": "1234"}},
    }
    outcome = relay.inspect(raw(answer), C2S, session="s")
    assert isinstance(outcome, Replace)
    assert outcome.message["result"] == expected
    assert b"1234" not in outcome.to_bytes()


def test_redact_in_a_retry_touches_only_that_answer(tmp_path: Path) -> None:
    """In 2026-07-28 redaction applies per inputResponses entry."""
    relay, _ = relay_for(source=redact_policy(tmp_path))
    relay.inspect(raw(modern_call(1)), C2S, session="m")
    reply = input_required(
        1,
        {
            "a": {"method": "elicitation/create", "params": form_params("flagged_x", "y")},
            "b": {"method": "elicitation/create", "params": form_params("z")},
        },
        "st",
    )
    assert isinstance(relay.inspect(raw(reply), S2C, session="m"), Forward)
    responses = {
        "a": {"action": "accept", "content": {"flagged_x": "s", "y": "1"}},
        "b": {"action": "accept", "content": {"z": "2"}},
    }
    retry = modern_call(2, inputResponses=responses, requestState="st")
    outcome = relay.inspect(raw(retry), C2S, session="m")
    assert isinstance(outcome, Replace)
    assert outcome.message["params"]["inputResponses"] == {
        "a": {"action": "accept", "content": {"y": "1"}},
        "b": {"action": "accept", "content": {"z": "2"}},
    }
    assert outcome.message["params"]["requestState"] == "st"


def test_unparseable_request_with_an_id_gets_an_error_back() -> None:
    """A broken frame is never forwarded; a request whose id is readable gets -32700."""
    relay, _ = relay_for()
    outcome = relay.inspect(b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{', C2S)
    assert isinstance(outcome, Reply)
    assert outcome.message["id"] == 12
    assert outcome.message["error"]["code"] == -32700
    assert relay.bad_frames == 1


def test_unparseable_frame_without_an_id_is_dropped() -> None:
    """Garbage without an id is dropped and counted, never forwarded."""
    relay, _ = relay_for()
    outcome = relay.inspect(b"this is not json", S2C)
    assert isinstance(outcome, Drop)
    assert outcome.jsonrpc_id is None
    broken_response = relay.inspect(b'{"jsonrpc":"2.0","id":"r1","result":{', S2C)
    assert isinstance(broken_response, Drop)
    assert broken_response.jsonrpc_id == "r1"


def test_oversized_frame_is_refused() -> None:
    """A frame over limits.max_message_bytes is refused (EG903) without parsing it."""
    relay, _ = relay_for(extra=[{"limits": {"max_message_bytes": 64, "bad_frames": "close"}}])
    frame = raw({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"p": "a" * 100}})
    outcome = relay.inspect(frame, C2S)
    assert isinstance(outcome, Reply)
    assert outcome.close
    assert outcome.decision is not None
    assert "EG903" in outcome.decision.codes


def test_dumps_keeps_values_orjson_refuses() -> None:
    """Big integer ids and lone surrogates survive re-serialisation."""
    message = {"jsonrpc": "2.0", "id": 2**70, "result": {"requestState": "a\ud800b"}}
    assert json.loads(dumps(message)) == message
