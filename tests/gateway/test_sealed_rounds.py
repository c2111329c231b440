"""Sealed requestState across ext_proc replicas, principals from Envoy's jwt_authn metadata.

Replica one seals the server's state for user A; replica two opens it for A's retry (the
upstream gets back exactly what it issued); tampered, replayed and another user's state
is refused with -32602 before the upstream sees it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc
from tests.gateway.conftest import replica
from tests.gateway.load import Case, exchange, jwt_metadata

pytestmark = pytest.mark.integration

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
ALICE = {"iss": "https://idp.example", "sub": "alice"}
MALLORY = {"iss": "https://idp.example", "sub": "mallory"}


@pytest.fixture(scope="module")
def sealing_replicas(redis_url: str, key_file: Path, tmp_path_factory: Any) -> Iterator[list[str]]:
    folder = tmp_path_factory.mktemp("sealed")
    audit = folder / "audit.jsonl"
    policy = folder / "policy.yaml"
    policy.write_text(
        'name: sealed\nextends: ["builtin:default"]\n'
        f"audit: {{sink: file, file: {json.dumps(str(audit))}}}\n"
    )
    extra = ("--seal-request-state", "--trust-envoy-jwt", "jwt_payload")
    with (
        replica("ext-proc", redis_url, key_file, *extra, policy=policy) as one,
        replica("ext-proc", redis_url, key_file, *extra, policy=policy) as two,
    ):
        yield [one[0], two[0], str(audit)]


def _run(address: str, case: Case, claims: dict[str, str], *, raw: bool = False) -> tuple[int, Any]:
    async def go() -> tuple[int, Any]:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = pb_grpc.ExternalProcessorStub(channel)
            return await exchange(stub, case, metadata=jwt_metadata(claims), raw=raw)

    return asyncio.run(go())


def _round(address: str, claims: dict[str, str], issued: str) -> str:
    """A tools/call answered with an InputRequiredResult; returns the state the client sees."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {}, "_meta": META},
    }
    entries = {
        "q": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Pick a colour",
                "requestedSchema": {"type": "object", "properties": {"c": {"type": "string"}}},
            },
        }
    }
    result = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "input_required",
            "inputRequests": entries,
            "requestState": issued,
        },
    }
    case = Case(
        "round",
        json.dumps(call).encode(),
        {"content-type": "application/json"},
        (200, [(b"content-type", b"application/json")], json.dumps(result).encode()),
    )
    status, body = _run(address, case, claims)
    assert status == 200, body
    sealed = body["result"]["requestState"]
    assert sealed != issued
    assert issued not in json.dumps(body)
    return str(sealed)


def _retry(address: str, claims: dict[str, str], state: str) -> tuple[int, Any]:
    retry = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "t",
            "arguments": {},
            "_meta": META,
            "requestState": state,
            "inputResponses": {"q": {"action": "accept", "content": {"c": "blue"}}},
        },
    }
    case = Case("retry", json.dumps(retry).encode(), {"content-type": "application/json"})
    return _run(address, case, claims, raw=True)


def _forwarded_state(answer: tuple[int, Any]) -> Any:
    status, body = answer
    assert status == 0, answer  # forwarded, not answered by the guard
    return json.loads(body)["params"]["requestState"]


def test_sealed_on_one_replica_opened_on_the_other(sealing_replicas: list[str]) -> None:
    one, two, _ = sealing_replicas
    sealed = _round(one, ALICE, "server-state-1")
    assert _forwarded_state(_retry(two, ALICE, sealed)) == "server-state-1"


def test_replayed_state_refused(sealing_replicas: list[str]) -> None:
    one, two, _ = sealing_replicas
    sealed = _round(one, ALICE, "server-state-2")
    assert _forwarded_state(_retry(two, ALICE, sealed)) == "server-state-2"
    status, body = _retry(one, ALICE, sealed)
    assert status == 200
    assert body["error"]["code"] == -32602


def test_tampered_state_refused(sealing_replicas: list[str]) -> None:
    one, two, _ = sealing_replicas
    sealed = _round(one, ALICE, "server-state-3")
    tampered = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
    _status, body = _retry(two, ALICE, tampered)
    assert body["error"]["code"] == -32602


def test_another_principals_state_refused(sealing_replicas: list[str]) -> None:
    one, two, audit = sealing_replicas
    sealed = _round(one, ALICE, "server-state-4")
    _status, body = _retry(two, MALLORY, sealed)
    assert body["error"]["code"] == -32602
    assert _forwarded_state(_retry(two, ALICE, sealed)) == "server-state-4"
    records = [json.loads(line) for line in Path(audit).read_text().splitlines() if line.strip()]
    principals = [r.get("principal") for r in records if r.get("principal")]
    assert any(p["iss"] == "https://idp.example" for p in principals)
    text = Path(audit).read_text()
    assert "server-state-4" not in text
    assert sealed not in text
    assert "alice" not in text  # subjects are fingerprinted
