"""``serve ext-proc`` verifying bearer tokens itself (the policy's identity section)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from envoy.service.ext_proc.v3 import external_processor_pb2 as pb
from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc
from tests.gateway.conftest import replica
from tests.gateway.load import Case, _map, exchange
from tests.identity.jwt_support import AUDIENCE, ISSUER, Signer, write_jwks

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def verifying(tmp_path_factory: Any) -> Iterator[tuple[str, Signer, Path]]:
    folder = tmp_path_factory.mktemp("auth")
    signer = Signer("k1")
    write_jwks(folder / "jwks.json", signer)
    audit = folder / "audit.jsonl"
    policy = folder / "policy.yaml"
    policy.write_text(
        "extends: ['builtin:default']\nname: auth\nidentity:\n  require_auth: true\n"
        f"  audience: {AUDIENCE}\n  issuers: [{ISSUER}]\n  jwks: {folder / 'jwks.json'}\n"
        f"audit: {{sink: file, file: {json.dumps(str(audit))}}}\n"
    )
    with replica("ext-proc", None, None, policy=policy) as (address, _):
        yield address, signer, audit


def _echo(token: str | None) -> Case:
    headers = {"content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    upstream = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
    return Case("list", body, headers, (200, [(b"content-type", b"application/json")], upstream))


def _run(address: str, case: Case) -> tuple[int, Any]:
    async def go() -> tuple[int, Any]:
        async with grpc.aio.insecure_channel(address) as channel:
            return await exchange(pb_grpc.ExternalProcessorStub(channel), case)

    return asyncio.run(go())


def _challenge(address: str) -> pb.ProcessingResponse:
    async def go() -> pb.ProcessingResponse:
        async with grpc.aio.insecure_channel(address) as channel:
            call = pb_grpc.ExternalProcessorStub(channel).Process()
            pseudo = [
                (b":method", b"POST"),
                (b":path", b"/mcp"),
                (b"content-type", b"application/json"),
            ]
            await call.write(
                pb.ProcessingRequest(request_headers=pb.HttpHeaders(headers=_map(pseudo)))
            )
            answer = await call.read()
            call.cancel()
            return answer

    return asyncio.run(go())


def test_missing_token_gets_the_401_challenge_at_the_headers(
    verifying: tuple[str, Signer, Path],
) -> None:
    address, _, _ = verifying
    answer = _challenge(address)
    assert answer.WhichOneof("response") == "immediate_response"
    assert answer.immediate_response.status.code == 401
    headers = {
        h.header.key.lower(): h.header.raw_value
        for h in answer.immediate_response.headers.set_headers
    }
    assert headers["www-authenticate"].startswith(b"Bearer")


def test_valid_token_passes(
    verifying: tuple[str, Signer, Path],
) -> None:
    address, signer, _ = verifying
    status, body = _run(address, _echo(signer.token()))
    assert status == 200
    assert body["result"] == {"tools": []}


def test_forged_token_refused(verifying: tuple[str, Signer, Path]) -> None:
    address, _, _ = verifying
    other = Signer("k1")  # same kid, another key
    status, _ = _run(address, _echo(other.token()))
    assert status == 401
