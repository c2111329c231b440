"""A small Envoy stand-in for the tests: an HTTP reverse proxy that asks ext_proc, as Envoy does.

It applies the service's answers the way Envoy's ext_proc filter does (header and body
mutations, immediate responses, the response body mode override) and forwards to a real
upstream with httpx. The processor is reached over a real gRPC channel with the generated
stubs; ``X-Test-Replica: N`` picks which processor (replica) handles the exchange, else
they take turns.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import httpx
from envoy.config.core.v3 import base_pb2
from envoy.extensions.filters.http.ext_proc.v3 import processing_mode_pb2
from envoy.service.ext_proc.v3 import external_processor_pb2 as pb
from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc

Mode = processing_mode_pb2.ProcessingMode


def header_map(pairs: list[tuple[bytes, bytes]]) -> base_pb2.HeaderMap:
    return base_pb2.HeaderMap(
        headers=[base_pb2.HeaderValue(key=k.decode(), raw_value=v) for k, v in pairs]
    )


def apply(
    headers: list[tuple[bytes, bytes]], mutation: pb.HeaderMutation
) -> list[tuple[bytes, bytes]]:
    removed = {h.lower().encode() for h in mutation.remove_headers}
    out = [(k, v) for k, v in headers if k.lower() not in removed]
    for option in mutation.set_headers:
        key = option.header.key.lower().encode()
        value = option.header.raw_value or option.header.value.encode()
        out = [(k, v) for k, v in out if k.lower() != key] + [(key, value)]
    return out


class Emulator:
    """The proxy as an ASGI app."""

    def __init__(self, upstream: str, processors: list[str]) -> None:
        self.upstream = upstream.rstrip("/")
        self.processors = processors
        self.channels: list[grpc.aio.Channel] = []
        self.turn = 0

    def _stub(self, index: int) -> pb_grpc.ExternalProcessorStub:
        if not self.channels:
            self.channels = [grpc.aio.insecure_channel(p) for p in self.processors]
        return pb_grpc.ExternalProcessorStub(self.channels[index % len(self.channels)])

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        async with httpx.AsyncClient(timeout=30) as client:
            await self._exchange(client, scope, receive, send)

    async def _exchange(
        self, client: httpx.AsyncClient, scope: Any, receive: Any, send: Any
    ) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k.lower(), v) for k, v in scope["headers"]]
        chosen = dict(headers).get(b"x-test-replica")
        if chosen is None:  # round robin: consecutive exchanges land on different replicas
            self.turn += 1
        replica = int(chosen) if chosen is not None else self.turn
        target = scope["raw_path"] + (
            b"?" + scope["query_string"] if scope["query_string"] else b""
        )
        pseudo = [
            (b":method", scope["method"].encode()),
            (b":path", target),
            (b":scheme", b"http"),
            (b":authority", dict(headers).get(b"host", b"localhost")),
        ]
        call = self._stub(replica).Process()
        has_body = scope["method"] in ("POST", "PUT", "PATCH")
        await call.write(
            pb.ProcessingRequest(
                request_headers=pb.HttpHeaders(
                    headers=header_map(pseudo + headers), end_of_stream=not has_body
                )
            )
        )
        answer = await call.read()
        if await self._immediate(answer, send, call):
            return
        headers = apply(headers, answer.request_headers.response.header_mutation)
        if has_body:
            await call.write(
                pb.ProcessingRequest(request_body=pb.HttpBody(body=body, end_of_stream=True))
            )
            answer = await call.read()
            if await self._immediate(answer, send, call):
                return
            common = answer.request_body.response
            headers = apply(headers, common.header_mutation)
            if common.body_mutation.WhichOneof("mutation") == "body":
                body = common.body_mutation.body
            elif common.body_mutation.clear_body:
                body = b""
            headers = [(k, v) for k, v in headers if k != b"content-length"]
        forwarded = [(k, v) for k, v in headers if k not in (b"host", b"x-test-replica")]
        request = client.build_request(
            scope["method"], self.upstream + target.decode(), headers=forwarded, content=body
        )
        response = await client.send(request, stream=True)
        try:
            await self._respond(call, response, send)
        finally:
            await response.aclose()
            call.cancel()

    async def _respond(self, call: Any, response: httpx.Response, send: Any) -> None:
        status = str(response.status_code).encode()
        headers = [(k.lower(), v) for k, v in response.headers.raw]
        headers = [(k, v) for k, v in headers if k not in (b"transfer-encoding", b"connection")]
        await call.write(
            pb.ProcessingRequest(
                response_headers=pb.HttpHeaders(
                    headers=header_map([(b":status", status), *headers])
                )
            )
        )
        answer = await call.read()
        if await self._immediate(answer, send, call):
            return
        headers = apply(headers, answer.response_headers.response.header_mutation)
        mode = Mode.BUFFERED
        if answer.HasField("mode_override"):
            mode = answer.mode_override.response_body_mode
        if mode == Mode.NONE:
            data = await response.aread()
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": headers}
            )
            await send({"type": "http.response.body", "body": data})
            return
        if mode == Mode.BUFFERED:
            data = await response.aread()
            await call.write(
                pb.ProcessingRequest(response_body=pb.HttpBody(body=data, end_of_stream=True))
            )
            answer = await call.read()
            if await self._immediate(answer, send, call):
                return
            data = _mutated(answer.response_body.response, data)
            headers = [(k, v) for k, v in headers if k != b"content-length"]
            headers.append((b"content-length", str(len(data)).encode()))
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": headers}
            )
            await send({"type": "http.response.body", "body": data})
            return
        headers = [(k, v) for k, v in headers if k != b"content-length"]
        await send(
            {"type": "http.response.start", "status": response.status_code, "headers": headers}
        )
        try:
            async for chunk in response.aiter_raw():
                await call.write(pb.ProcessingRequest(response_body=pb.HttpBody(body=chunk)))
                answer = await call.read()
                out = _mutated(answer.response_body.response, chunk)
                if out:
                    await send({"type": "http.response.body", "body": out, "more_body": True})
        except httpx.HTTPError:
            pass
        await call.write(
            pb.ProcessingRequest(response_body=pb.HttpBody(body=b"", end_of_stream=True))
        )
        answer = await call.read()
        out = _mutated(answer.response_body.response, b"")
        await send({"type": "http.response.body", "body": out, "more_body": False})

    async def _immediate(self, answer: pb.ProcessingResponse, send: Any, call: Any) -> bool:
        if answer.WhichOneof("response") != "immediate_response":
            return False
        immediate = answer.immediate_response
        headers = apply([], immediate.headers)
        headers.append((b"content-length", str(len(immediate.body)).encode()))
        await send(
            {"type": "http.response.start", "status": immediate.status.code, "headers": headers}
        )
        await send({"type": "http.response.body", "body": immediate.body})
        call.cancel()
        return True


def _mutated(common: pb.CommonResponse, data: bytes) -> bytes:
    mutation = common.body_mutation
    if mutation.WhichOneof("mutation") == "body":
        return mutation.body
    if mutation.clear_body:
        return b""
    return data


@contextmanager
def serve_emulator(upstream: str, processors: list[str]) -> Iterator[str]:
    """Run the emulator on a loopback port in a thread; yield its base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        Emulator(upstream, processors), log_level="warning", lifespan="off", loop="asyncio"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)
