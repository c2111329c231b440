"""``elicitguard proxy http`` and the ASGI middleware, with real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration_support import require_module
from tests.integrations.support import (
    ERAS,
    PY,
    SERVERS,
    Seen,
    assert_matrix,
    http_proxy,
    make_callback,
    read_line,
    run_matrix,
    sdk_asgi_server,
    sdk_http_server,
    stop,
)

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _needs_http() -> None:
    require_module("httpx")
    require_module("uvicorn")
    require_module("mcp")


def run_sdk_matrix(url: str, era: str) -> dict[str, dict[str, Any]]:
    from mcp import Client

    async def main() -> dict[str, dict[str, Any]]:
        seen = Seen()
        async with Client(url, mode=era, elicitation_callback=make_callback(seen)) as client:
            return await run_matrix(client, seen, era)

    return asyncio.run(main())


@pytest.mark.parametrize("era", ERAS)
def test_sdk_client_and_server_through_the_http_proxy(era: str, tmp_path: Path) -> None:
    """Streamable HTTP, each era: benign elicitation passes, violations are blocked."""
    record = tmp_path / "http.jsonl"
    with sdk_http_server() as upstream, http_proxy(upstream, "--record", str(record)) as url:
        outcomes = run_sdk_matrix(url, era)
    assert_matrix(outcomes, era)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    text = record.read_text()
    assert "Luigi" not in text
    headers = [json.loads(line).get("headers", {}) for line in text.splitlines()]
    assert any("accept" in h for h in headers)
    assert not any("authorization" in h or "cookie" in h for h in headers)


@pytest.mark.parametrize("era", ERAS)
def test_sdk_server_inside_the_asgi_middleware(era: str) -> None:
    """The middleware around the SDK's own Streamable HTTP app enforces the same way."""
    with sdk_asgi_server() as url:
        outcomes = run_sdk_matrix(url, era)
    assert_matrix(outcomes, era)


@contextlib.contextmanager
def scripted() -> Iterator[str]:
    process = subprocess.Popen(
        [PY, str(SERVERS / "scripted_http.py")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        line = read_line(process.stdout).decode()
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def scripted_proxy() -> Iterator[tuple[str, str]]:
    """The scripted upstream and a proxy in front of it: (upstream base, proxy MCP URL)."""
    with scripted() as base, http_proxy(base + "/mcp") as url:
        yield base, url


def post(url: str, message: dict[str, Any] | bytes, **headers: str) -> Any:
    import httpx

    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    merged = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    merged.update(headers)
    return httpx.post(url, content=body, headers=merged, timeout=20)


def test_headers_and_bodies_pass_untouched(scripted_proxy: tuple[str, str]) -> None:
    """Unknown Mcp-Param-* headers and session headers reach the upstream; bytes are unchanged."""
    _, url = scripted_proxy
    body = b'{ "jsonrpc":"2.0", "id" : 7, "method":"echo", "params":{"x": 1.50} }'
    response = post(
        url,
        body,
        **{"Mcp-Param-Region": "eu-west", "Mcp-Session-Id": "s-9", "Authorization": "Bearer t"},
    )
    assert response.status_code == 200
    assert response.content.startswith(b'{ "id" : 7 , "jsonrpc":"2.0"')
    seen = response.json()["result"]
    assert seen["body"] == body.decode()
    assert seen["headers"]["mcp-param-region"] == "eu-west"
    assert seen["headers"]["mcp-session-id"] == "s-9"
    assert seen["headers"]["authorization"] == "Bearer t"


def test_sse_events_are_judged_one_by_one_and_kept_byte_for_byte(
    scripted_proxy: tuple[str, str],
) -> None:
    """Comments and priming events pass; a non-JSON event is dropped but keeps its id."""
    _, url = scripted_proxy
    response = post(url, {"jsonrpc": "2.0", "id": 3, "method": "sse"})
    text = response.content
    assert b": keep-alive comment\n\n" in text
    assert b"id: e0\ndata:\n\n" in text
    assert b"not json" not in text
    assert b"id: e1\n\n" in text
    assert (
        b'event: message\r\nid: e2\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress"'
        in text
    )
    assert b'id: e3\ndata: {"jsonrpc": "2.0", "id": 3, "result": {"n": 1}}\n\n' in text


def test_upstream_dying_mid_stream_fails_the_request(scripted_proxy: tuple[str, str]) -> None:
    """The upstream breaks its SSE stream: the client gets a JSON-RPC error for its request."""
    _, url = scripted_proxy
    response = post(url, {"jsonrpc": "2.0", "id": "d1", "method": "die"})
    events = [
        json.loads(line[len("data: ") :])
        for line in response.text.splitlines()
        if line.startswith("data: ")
    ]
    assert events[0]["method"] == "notifications/progress"
    assert events[-1]["id"] == "d1"
    assert events[-1]["error"]["data"]["elicitguard"]["reason"] == "upstream_closed"


def test_blocked_push_gets_the_reply_post(scripted_proxy: tuple[str, str]) -> None:
    """A blocked pushed elicitation never reaches the client; the server gets -31001 by POST."""
    _, url = scripted_proxy
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"url": {}}}},
    }
    headers = {"Mcp-Session-Id": "push-1", "MCP-Protocol-Version": "2025-11-25"}
    post(url, init, **headers)
    push = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "push",
        "params": {"url": "https://login.evil.example/x"},
    }
    response = post(url, push, **headers)
    assert b"elicitation/create" not in response.content
    final = json.loads(response.text.split("data: ")[-1])
    answer = final["result"]["answer"]
    assert answer["id"] == "srv-1"
    assert answer["error"]["code"] == -31001
    assert "TST001" in answer["error"]["data"]["elicitguard"]["codes"]
    benign = {**push, "id": 2, "params": {"url": "https://auth.example.com/c", "wait": 0.1}}
    response = post(url, benign, **headers)
    assert b"elicitation/create" in response.content


def test_rewritten_retry_keeps_headers_consistent(scripted_proxy: tuple[str, str]) -> None:
    """A retry the guard completes with decline still matches its Mcp-* headers (TR-01)."""
    _, url = scripted_proxy
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
    }
    headers = {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "connect_two",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Param-Tenant": "acme",
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
    first = post(url, call, **headers).json()
    assert list(first["result"]["inputRequests"]) == ["good"]
    retry = json.loads(json.dumps(call))
    retry["id"] = 2
    retry["params"]["inputResponses"] = {"good": {"action": "accept"}}
    retry["params"]["requestState"] = "s-1"
    echoed = post(url, retry, **headers).json()["result"]
    body = json.loads(echoed["body"])
    assert body["params"]["inputResponses"] == {
        "good": {"action": "accept"},
        "bad": {"action": "decline"},
    }
    assert body["params"]["requestState"] == "s-1"
    assert echoed["headers"]["mcp-name"] == "connect_two"
    assert echoed["headers"]["mcp-method"] == "tools/call"
    assert echoed["headers"]["mcp-protocol-version"] == "2026-07-28"
    assert echoed["headers"]["mcp-param-tenant"] == "acme"
    assert echoed["headers"]["content-length"] == str(len(echoed["body"].encode()))


def test_bad_client_frames_get_400(scripted_proxy: tuple[str, str]) -> None:
    """A body that is not JSON never reaches the upstream; the client gets a JSON-RPC error."""
    _, url = scripted_proxy
    response = post(url, b'{"jsonrpc":"2.0","id":5,"method":"echo"')
    assert response.status_code == 400
    assert response.json()["id"] == 5
    assert response.json()["error"]["code"] == -32700


def test_client_disconnect_closes_the_upstream_stream(scripted_proxy: tuple[str, str]) -> None:
    """A client that leaves a GET stream makes the proxy close the upstream stream."""
    import httpx

    base, url = scripted_proxy
    with httpx.stream("GET", url, headers={"accept": "text/event-stream"}, timeout=10) as stream:
        chunks = stream.iter_raw()  # kept: dropping the iterator would close the stream
        assert next(chunks) == b": ping\n\n"
        assert httpx.get(base + "/stats").json()["open_streams"] == 1
    deadline = time.monotonic() + 10
    while httpx.get(base + "/stats").json()["open_streams"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert httpx.get(base + "/stats").json()["open_streams"] == 0


def test_unreachable_upstream_gives_502_with_the_request_id() -> None:
    """No upstream: the client gets HTTP 502 and a JSON-RPC error for its id."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with http_proxy(f"http://127.0.0.1:{port}/mcp") as url:
        response = post(url, {"jsonrpc": "2.0", "id": 11, "method": "tools/list"})
    assert response.status_code == 502
    assert response.json()["id"] == 11
    assert response.json()["error"]["data"]["elicitguard"]["reason"] == "upstream_unreachable"


def test_port_file_and_sigterm(tmp_path: Path) -> None:
    """--port-file names the bound port; SIGTERM stops the proxy (uvicorn re-raises it)."""
    from tests.integrations.support import ELICITGUARD

    port_file = tmp_path / "port"
    process = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "http",
            "--upstream",
            "http://127.0.0.1:9/mcp",
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            str(port_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = read_line(process.stdout).decode().strip()
        assert url == f"http://127.0.0.1:{int(port_file.read_text())}/mcp"
        process.terminate()
        assert process.wait(10) == -signal.SIGTERM
    finally:
        stop(process)
