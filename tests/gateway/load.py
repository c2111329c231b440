"""A load driver for ``serve ext-proc``: Envoy's side of the protocol, many streams at once.

Each exchange is driven the way Envoy drives it (request headers, buffered body, response
headers, the response body in the mode the service asks for) over grpc.aio with the
generated stubs; what Envoy would then send the client is computed from the answers
(:func:`final`). The upstream's responses are real ones, fetched once per message from the
scripted upstream; the expected client responses are the HTTP proxy's, fetched once per
message from ``elicitguard proxy http`` in front of the same upstream.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from envoy.config.core.v3 import base_pb2
from envoy.extensions.filters.http.ext_proc.v3 import processing_mode_pb2
from envoy.service.ext_proc.v3 import external_processor_pb2 as pb
from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc

Mode = processing_mode_pb2.ProcessingMode
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
}


def workload() -> list[tuple[str, bytes, dict[str, str]]]:
    """Benign and violating traffic in both eras, JSON and SSE: (name, body, headers)."""
    round_call = {
        "jsonrpc": "2.0",
        "id": 11,
        "method": "tools/call",
        "params": {
            "name": "connect_two",
            "arguments": {"good": "auth.example.com", "bad": "x.evil.example"},
            "_meta": META,
        },
    }
    mismatch = {"jsonrpc": "2.0", "id": 12, "method": "echo"}
    return [
        (
            "benign echo (push era)",
            b'{"jsonrpc":"2.0","id":1,"method":"echo"}',
            {"Mcp-Session-Id": "load-1"},
        ),
        ("bad frame", b'{"jsonrpc":"2.0","id":5,"method":"echo"', {}),
        (
            "round with a blocked entry (2026-07-28)",
            json.dumps(round_call).encode(),
            {
                "Mcp-Method": "tools/call",
                "Mcp-Name": "connect_two",
                "MCP-Protocol-Version": "2026-07-28",
            },
        ),
        ("SSE stream, non-JSON event dropped", b'{"jsonrpc":"2.0","id":3,"method":"sse"}', {}),
        ("header disagrees with body", json.dumps(mismatch).encode(), {"Mcp-Method": "tools/list"}),
    ]


@dataclass
class Case:
    """One message with the upstream's real answer and the HTTP proxy's answer to the client."""

    name: str
    body: bytes
    headers: dict[str, str]
    upstream: tuple[int, list[tuple[bytes, bytes]], bytes] = (200, [], b"")
    expected: tuple[int, Any] = (0, None)


def strip(value: Any) -> Any:
    """Leave out what differs by run or by route: decision ids, and the headers an echo saw
    (the upstream's canned answer was fetched directly, the proxy's through the proxy)."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in ("decision_id", "headers")}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def normal(status: int, body: bytes) -> tuple[int, Any]:
    """A client response in comparable form: JSON parsed (decision ids out), SSE as bytes."""
    try:
        return status, strip(json.loads(body)) if body.strip() else None
    except ValueError:
        return status, body


def prepare(upstream: str, reference: str) -> list[Case]:
    cases = []
    with httpx.Client(timeout=30) as client:
        for name, body, headers in workload():
            merged = {**HEADERS, **headers}
            direct = client.post(upstream + "/mcp", content=body, headers=merged)
            raw = [
                (k.lower(), v)
                for k, v in direct.headers.raw
                if k.lower() not in (b"transfer-encoding", b"connection")
            ]
            via = client.post(reference, content=body, headers=merged)
            cases.append(
                Case(
                    name,
                    body,
                    merged,
                    (direct.status_code, raw, direct.content),
                    normal(via.status_code, via.content),
                )
            )
    return cases


def _map(pairs: list[tuple[bytes, bytes]]) -> base_pb2.HeaderMap:
    return base_pb2.HeaderMap(
        headers=[base_pb2.HeaderValue(key=k.decode(), raw_value=v) for k, v in pairs]
    )


def _mutated(common: pb.CommonResponse, data: bytes) -> bytes:
    mutation = common.body_mutation
    if mutation.WhichOneof("mutation") == "body":
        return mutation.body
    if mutation.clear_body:
        return b""
    return data


def jwt_metadata(claims: dict[str, Any], key: str = "jwt_payload") -> Any:
    """Envoy's ``jwt_authn`` dynamic metadata with ``claims`` under ``key``."""
    from google.protobuf import struct_pb2

    payload = struct_pb2.Struct()
    payload.update({key: claims})
    metadata = base_pb2.Metadata()
    metadata.filter_metadata["envoy.filters.http.jwt_authn"].CopyFrom(payload)
    return metadata


async def exchange(
    stub: pb_grpc.ExternalProcessorStub, case: Case, *, metadata: Any = None, raw: bool = False
) -> tuple[int, Any]:
    """One exchange as Envoy drives it; the response Envoy would send the client.

    ``raw``: stop after the request body and return ``(0, the body the upstream gets)``.
    """
    call = stub.Process()
    try:
        pseudo = [
            (b":method", b"POST"),
            (b":path", b"/mcp"),
            (b":scheme", b"http"),
            (b":authority", b"mcp"),
        ]
        headers = [(k.lower().encode(), v.encode()) for k, v in case.headers.items()]
        first = pb.ProcessingRequest(request_headers=pb.HttpHeaders(headers=_map(pseudo + headers)))
        if metadata is not None:
            first.metadata_context.CopyFrom(metadata)
        await call.write(first)
        answer = await call.read()
        if answer.WhichOneof("response") == "immediate_response":
            return normal(answer.immediate_response.status.code, answer.immediate_response.body)
        await call.write(
            pb.ProcessingRequest(request_body=pb.HttpBody(body=case.body, end_of_stream=True))
        )
        answer = await call.read()
        if answer.WhichOneof("response") == "immediate_response":
            return normal(answer.immediate_response.status.code, answer.immediate_response.body)
        if raw:
            return 0, _mutated(answer.request_body.response, case.body)
        status, response_headers, data = case.upstream
        await call.write(
            pb.ProcessingRequest(
                response_headers=pb.HttpHeaders(
                    headers=_map([(b":status", str(status).encode()), *response_headers])
                )
            )
        )
        answer = await call.read()
        if answer.WhichOneof("response") == "immediate_response":
            return normal(answer.immediate_response.status.code, answer.immediate_response.body)
        mode = (
            answer.mode_override.response_body_mode
            if answer.HasField("mode_override")
            else Mode.BUFFERED
        )
        if mode == Mode.NONE:
            return normal(status, data)
        if mode == Mode.BUFFERED:
            await call.write(
                pb.ProcessingRequest(response_body=pb.HttpBody(body=data, end_of_stream=True))
            )
            answer = await call.read()
            if answer.WhichOneof("response") == "immediate_response":
                return normal(answer.immediate_response.status.code, answer.immediate_response.body)
            return normal(status, _mutated(answer.response_body.response, data))
        out = b""
        await call.write(pb.ProcessingRequest(response_body=pb.HttpBody(body=data)))
        out += _mutated((await call.read()).response_body.response, data)
        await call.write(
            pb.ProcessingRequest(response_body=pb.HttpBody(body=b"", end_of_stream=True))
        )
        out += _mutated((await call.read()).response_body.response, b"")
        return normal(status, out)
    finally:
        call.cancel()


@dataclass
class LoadResult:
    sent: int = 0
    answered: int = 0
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


async def run_load(
    addresses: list[str], cases: list[Case], *, messages: int, streams: int = 64
) -> LoadResult:
    """``messages`` exchanges over ``streams`` concurrent streams, spread over the replicas."""
    import grpc

    channels = [grpc.aio.insecure_channel(a) for a in addresses]
    stubs = [pb_grpc.ExternalProcessorStub(c) for c in channels]
    result = LoadResult()
    counter = iter(range(messages))

    async def worker(index: int) -> None:
        for n in counter:
            case = cases[n % len(cases)]
            result.sent += 1
            try:
                got = await exchange(stubs[(index + n) % len(stubs)], case)
            except Exception as exc:
                result.errors.append(f"{case.name}: {type(exc).__name__}: {exc}"[:300])
                continue
            result.answered += 1
            if got != case.expected:
                result.mismatches.append(f"{case.name}: {got!r:.300} != {case.expected!r:.300}")

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(i) for i in range(streams)))
    finally:
        result.seconds = time.perf_counter() - started
        for channel in channels:
            await channel.close()
    return result
