"""The gateway services' added latency per message, versus the in-process engine.

``serve ext-proc``: one exchange (request headers and body, response headers and a JSON
body: the four phases Envoy sends for a POST) over a real gRPC stream to a service
subprocess on loopback, against the same request and response judged in-process by the
HTTP proxy's Relay. ``serve ext-mcp``: CheckRequest + CheckResponse against the same two
messages in-process. Per item: one message pair. No target is set; the ratio and the p99
are what to watch.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import Pair, measure_pair, print_table  # noqa: E402

from elicitguard import Direction, Engine, load_policy  # noqa: E402
from elicitguard.audit.sink import AuditSink  # noqa: E402
from elicitguard.base.keys import KeyRing  # noqa: E402
from elicitguard.integrations.actions import Relay  # noqa: E402
from elicitguard.protocol.envelope import Side, Transport  # noqa: E402

ELICITGUARD = str(Path(sys.executable).with_name("elicitguard"))
REQUEST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "t", "arguments": {"q": "x"}},
}
RESPONSE = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ok"}]}}
_PROCESSES: list[subprocess.Popen[bytes]] = []


def _spawn(kind: str) -> str:
    from tests.integrations.support import read_line

    process = subprocess.Popen(
        [ELICITGUARD, "serve", kind, "--listen", "127.0.0.1:0", "--policy", "builtin:default"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if not _PROCESSES:
        atexit.register(_stop)
    _PROCESSES.append(process)
    return read_line(process.stdout, timeout=30).decode().strip().removeprefix("grpc://")


def _in_process(count: int) -> Any:
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    relay = Relay(engine, side=Side.PROXY, transport=Transport.HTTP, server="bench")
    request, response = json.dumps(REQUEST).encode(), json.dumps(RESPONSE).encode()

    def run() -> None:
        for n in range(count):
            session = f"x:{n}"
            relay.inspect(request, Direction.CLIENT_TO_SERVER, session=session)
            relay.inspect(response, Direction.SERVER_TO_CLIENT, session=session)

    return run


def bench_ext_proc(quick: bool) -> Pair:
    import grpc
    from envoy.config.core.v3 import base_pb2
    from envoy.service.ext_proc.v3 import external_processor_pb2 as pb
    from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc

    count = 20 if os.environ.get("ELICITGUARD_BENCH_TINY") else 200 if quick else 1_000
    address = _spawn("ext-proc")
    channel = grpc.insecure_channel(address)
    stub = pb_grpc.ExternalProcessorStub(channel)

    def headers(pairs: list[tuple[bytes, bytes]]) -> Any:
        return base_pb2.HeaderMap(
            headers=[base_pb2.HeaderValue(key=k.decode(), raw_value=v) for k, v in pairs]
        )

    phases = [
        pb.ProcessingRequest(
            request_headers=pb.HttpHeaders(
                headers=headers(
                    [
                        (b":method", b"POST"),
                        (b":path", b"/mcp"),
                        (b"content-type", b"application/json"),
                    ]
                )
            )
        ),
        pb.ProcessingRequest(
            request_body=pb.HttpBody(body=json.dumps(REQUEST).encode(), end_of_stream=True)
        ),
        pb.ProcessingRequest(
            response_headers=pb.HttpHeaders(
                headers=headers([(b":status", b"200"), (b"content-type", b"application/json")])
            )
        ),
        pb.ProcessingRequest(
            response_body=pb.HttpBody(body=json.dumps(RESPONSE).encode(), end_of_stream=True)
        ),
    ]

    def run() -> None:
        for _ in range(count):
            answers = list(stub.Process(iter(phases), timeout=20))
            assert len(answers) == 4, answers

    run()  # warm up the channel and the service
    return Pair(
        "ext_proc: one exchange (4 phases)",
        run,
        _in_process(count),
        count,
        baseline_name="in-process Relay",
    )


def bench_ext_mcp(quick: bool) -> Pair:
    import grpc

    from elicitguard.gateway import ext_mcp_proto as wire

    count = 20 if os.environ.get("ELICITGUARD_BENCH_TINY") else 200 if quick else 1_000
    address = _spawn("ext-mcp")
    channel = grpc.insecure_channel(address)
    check_request = channel.unary_unary(
        wire.CHECK_REQUEST,
        request_serializer=wire.McpRequest.SerializeToString,
        response_deserializer=wire.McpRequestResult.FromString,
    )
    check_response = channel.unary_unary(
        wire.CHECK_RESPONSE,
        request_serializer=wire.McpResponse.SerializeToString,
        response_deserializer=wire.McpResponseResult.FromString,
    )
    request = wire.McpRequest(
        service_names=["b"], method="tools/call", mcp_request=json.dumps(REQUEST["params"]).encode()
    )
    response = wire.McpResponse(
        service_names=["b"],
        method="tools/call",
        mcp_response=json.dumps(RESPONSE["result"]).encode(),
    )

    def run() -> None:
        for _ in range(count):
            check_request(request, timeout=20)
            check_response(response, timeout=20)

    run()
    return Pair(
        "ext_mcp: CheckRequest + CheckResponse",
        run,
        _in_process(count),
        count,
        baseline_name="in-process Relay",
    )


def pairs(quick: bool) -> list[Pair]:
    """The gateway pairs (no targets: the issue sets none)."""
    return [bench_ext_proc(quick), bench_ext_mcp(quick)]


def _stop() -> None:
    while _PROCESSES:
        process = _PROCESSES.pop()
        process.terminate()
        process.wait(5)


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    try:
        print_table([measure_pair(pair, rounds=5 if quick else 9) for pair in pairs(quick)])
    finally:
        _stop()
