"""``serve ext-proc`` behind a real ext_proc client, against the HTTP proxy's decisions."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.integrations.test_http_proxy import post

pytestmark = pytest.mark.integration


def _strip(value: Any) -> Any:
    """A response without what differs by run: decision ids."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "decision_id"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def test_headers_and_bodies_pass_untouched(gateway: str) -> None:
    body = b'{ "jsonrpc":"2.0", "id" : 7, "method":"echo", "params":{"x": 1.50} }'
    response = post(gateway, body, **{"Mcp-Param-Region": "eu-west", "Mcp-Session-Id": "s-9"})
    assert response.status_code == 200
    assert response.content.startswith(b'{ "id" : 7 , "jsonrpc":"2.0"')
    seen = response.json()["result"]
    assert seen["body"] == body.decode()
    assert seen["headers"]["mcp-param-region"] == "eu-west"


def test_sse_events_judged_one_by_one(gateway: str, reference: str) -> None:
    message = {"jsonrpc": "2.0", "id": 3, "method": "sse"}
    text = post(gateway, message).content
    assert text == post(reference, message).content
    assert b"not json" not in text
    assert b"id: e1\n\n" in text
    assert b'id: e3\ndata: {"jsonrpc": "2.0", "id": 3, "result": {"n": 1}}\n\n' in text


def test_bad_frames_get_the_proxy_error(gateway: str, reference: str) -> None:
    bad = b'{"jsonrpc":"2.0","id":5,"method":"echo"'
    ours, theirs = post(gateway, bad), post(reference, bad)
    assert ours.status_code == theirs.status_code == 400
    assert _strip(ours.json()) == _strip(theirs.json())
    assert ours.json()["error"]["code"] == -32700


def test_oversized_body_refused(gateway: str, reference: str) -> None:
    """A body over limits.max_message_bytes (4 MiB here) gets the proxy's 400, not the upstream."""
    big = json.dumps(
        {"jsonrpc": "2.0", "id": 6, "method": "echo", "params": {"x": "a" * (5 << 20)}}
    ).encode()
    ours, theirs = post(gateway, big), post(reference, big)
    assert ours.status_code == theirs.status_code == 400
    assert _strip(ours.json()) == _strip(theirs.json())
    assert b"aaaa" not in ours.content


def _round(url: str, first_replica: str, retry_replica: str) -> tuple[Any, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
    }
    headers = {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "connect_two",
        "MCP-Protocol-Version": "2026-07-28",
        "Authorization": "Bearer user-a",
    }
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "connect_two",
            "arguments": {"good": "auth.example.com", "bad": "x.evil.example"},
            "_meta": meta,
        },
    }
    first = post(url, call, **headers, **{"X-Test-Replica": first_replica}).json()
    retry = json.loads(json.dumps(call))
    retry["id"] = 2
    retry["params"]["inputResponses"] = {"good": {"action": "accept"}}
    retry["params"]["requestState"] = "s-1"
    echoed = post(url, retry, **headers, **{"X-Test-Replica": retry_replica}).json()
    return first, echoed


def test_round_on_one_replica_retry_on_the_other(gateway: str, reference: str) -> None:
    """The removed entry is declined on the retry although another replica removed it."""
    first, echoed = _round(gateway, "0", "1")
    ref_first, ref_echoed = _round(reference, "0", "1")
    assert _strip(first) == _strip(ref_first)
    assert list(first["result"]["inputRequests"]) == ["good"]
    body = json.loads(echoed["result"]["body"])
    assert body["params"]["inputResponses"] == {
        "good": {"action": "accept"},
        "bad": {"action": "decline"},
    }
    assert echoed["result"]["headers"]["mcp-name"] == "connect_two"
    ref_body = json.loads(ref_echoed["result"]["body"])
    assert body["params"] == ref_body["params"]


def test_blocked_push_and_benign_push(gateway: str, reference: str) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"url": {}}}},
    }
    for url, session in ((gateway, "gw-push-1"), (reference, "ref-push-1")):
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        post(url, init, **headers, **{"X-Test-Replica": "0"})
        push = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "push",
            "params": {"url": "https://login.evil.example/x"},
        }
        response = post(url, push, **headers, **{"X-Test-Replica": "1"})
        assert b"elicitation/create" not in response.content
        final = json.loads(response.text.split("data: ")[-1])
        answer = final["result"]["answer"]
        assert answer["error"]["code"] == -31001
        assert "TST001" in answer["error"]["data"]["elicitguard"]["codes"]
        benign = {**push, "id": 2, "params": {"url": "https://auth.example.com/c", "wait": 0.1}}
        response = post(url, benign, **headers, **{"X-Test-Replica": "0"})
        assert b"elicitation/create" in response.content


def test_replica_killed_mid_round_loses_nothing(
    upstream: str, redis_url: str, key_file: Any, replicas: list[str]
) -> None:
    """The replica that removed an entry dies; the retry on another still gets the decline."""
    from tests.gateway.conftest import replica
    from tests.gateway.envoy_emulator import serve_emulator

    with (
        replica("ext-proc", redis_url, key_file) as (address, process),
        serve_emulator(upstream, [address, replicas[1]]) as base,
    ):
        if True:
            url = base + "/mcp"
            meta = {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
            }
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "connect_two",
                    "arguments": {"good": "auth.example.com", "bad": "y.evil.example"},
                    "_meta": meta,
                },
            }
            headers = {"Authorization": "Bearer user-kill", "X-Test-Replica": "0"}
            first = post(url, call, **headers).json()
            assert list(first["result"]["inputRequests"]) == ["good"]
            process.kill()
            process.wait()
            retry = json.loads(json.dumps(call))
            retry["id"] = 2
            retry["params"]["inputResponses"] = {"good": {"action": "accept"}}
            headers["X-Test-Replica"] = "1"
            echoed = post(url, retry, **headers).json()
            body = json.loads(echoed["result"]["body"])
            assert body["params"]["inputResponses"]["bad"] == {"action": "decline"}


def test_another_credential_does_not_see_the_round(gateway: str) -> None:
    """Rounds are kept per credential: another user's retry with that round's state is
    refused, and gets no decline added."""
    first, _ = _round(gateway, "0", "1")
    assert list(first["result"]["inputRequests"]) == ["good"]
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "connect_two",
            "arguments": {"good": "auth.example.com", "bad": "x.evil.example"},
            "inputResponses": {"good": {"action": "accept"}},
            "requestState": "s-1",
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        },
    }
    echoed = post(gateway, call, Authorization="Bearer user-b", **{"X-Test-Replica": "1"}).json()
    # The state was issued to another credential's round: refused (EG504, provenance), and
    # no decline of the other user's removed entry is added to it either.
    assert "bad" not in json.dumps(echoed)
    assert "EG504" in echoed["error"]["data"]["elicitguard"]["codes"], echoed


def test_malformed_grpc_message_ends_the_stream_and_the_service_stays_up(
    replicas: list[str], gateway: str
) -> None:
    import grpc

    channel = grpc.insecure_channel(replicas[0])
    try:
        raw = channel.stream_stream("/envoy.service.ext_proc.v3.ExternalProcessor/Process")
        with pytest.raises(grpc.RpcError):
            list(raw(iter([b"\xff\xff\xff\xff\x0f garbage"]), timeout=10))
    finally:
        channel.close()
    body = {"jsonrpc": "2.0", "id": 8, "method": "echo"}
    assert post(gateway, body, **{"X-Test-Replica": "0"}).json()["id"] == 8
