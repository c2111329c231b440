"""Load through both proxies on loopback: nothing lost, order kept, bytes identical, RSS flat.

CI size: 10,000 messages per proxy (``ELICITGUARD_LOAD_MESSAGES``; the full run in
scripts/hardening_full.sh sends 100,000). The stdio proxy serves one client per process, so
``ELICITGUARD_LOAD_STDIO_CLIENTS`` proxies run at once (16 in CI, 64 in the full run); the
HTTP proxy takes 64 concurrent clients. Every loop is bounded and stops by itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from tests.integration_support import require_module
from tests.integrations.support import ELICITGUARD, read_line

HERE = Path(__file__).parent
SERVER = str(HERE / "fault_server.py")
MESSAGES = int(os.environ.get("ELICITGUARD_LOAD_MESSAGES", "10000"))
STDIO_CLIENTS = int(os.environ.get("ELICITGUARD_LOAD_STDIO_CLIENTS", "16"))
HTTP_CLIENTS = 64
#: RSS may grow this much between the first quarter and the end (warm caches, not leaks).
RSS_SLACK = 40 << 20


@pytest.fixture(autouse=True)
def _no_background_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proxies here run without the community credential catalogue.

    Warm-up compiles it on a nice-19 background thread (tens of MB, once). On a busy machine
    that thread is starved until the load eases, so the one-off growth lands at any point of
    the run and reads as a leak. These tests measure the relay's own memory and ordering;
    the catalogue's cost is measured in ``benchmarks/``.
    """
    monkeypatch.setenv("ELICITGUARD_COMMUNITY_SECRETS", "0")


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "name: load\nextends: [builtin:default]\nenvironment: dev\naudit: {sink: none}\n",
        encoding="utf-8",
    )
    return path


def _request(ident: int, elicit: bool) -> bytes:
    params = {"name": "t", "arguments": {"n": ident}, "elicit": elicit}
    return json.dumps(
        {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
    ).encode()


def _stdio_client(
    policy: Path, count: int, rss: list[tuple[int, int]], failures: list[str]
) -> None:
    process = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "stdio",
            "--policy",
            str(policy),
            "--",
            sys.executable,
            SERVER,
            "echo",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        init = {
            "jsonrpc": "2.0",
            "id": -1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "load", "version": "1"},
            },
        }
        process.stdin.write(json.dumps(init).encode() + b"\n")
        process.stdin.flush()
        read_line(process.stdout, 300)  # 64 interpreters starting at once on 2 cores
        results: list[int] = []
        elicitations = 0
        for ident in range(count):
            process.stdin.write(_request(ident, ident % 10 == 0) + b"\n")
            process.stdin.flush()
            while True:
                line = read_line(process.stdout, 60)
                message = json.loads(line)
                if message.get("method") == "elicitation/create":
                    elicitations += 1
                    answer = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"action": "accept", "content": {"name": "Ada"}},
                    }
                    process.stdin.write(json.dumps(answer).encode() + b"\n")
                    process.stdin.flush()
                    continue
                expected = (
                    json.dumps({"jsonrpc": "2.0", "id": ident, "result": {"echo": ident}}).encode()
                    + b"\n"
                )
                if line != expected:
                    failures.append(f"bytes differ for {ident}")
                results.append(message["id"])
                break
            if ident in (count // 4, count - 1):
                rss.append((ident, psutil.Process(process.pid).memory_info().rss))
        if results != list(range(count)):
            failures.append("results lost or out of order")
        if elicitations != len(range(0, count, 10)):
            failures.append(f"{elicitations} elicitations arrived")
    except Exception as exc:
        failures.append(repr(exc))
    finally:
        process.stdin.close()
        process.wait(30)
        process.stdout.close()


@pytest.mark.integration
def test_stdio_proxy_under_load(tmp_path: Path) -> None:
    """Concurrent stdio proxies relay every message in order, byte for byte, RSS flat."""
    policy = _policy(tmp_path)
    per_client = MESSAGES // STDIO_CLIENTS
    failures: list[str] = []
    samples: list[list[tuple[int, int]]] = [[] for _ in range(STDIO_CLIENTS)]
    threads = [
        threading.Thread(target=_stdio_client, args=(policy, per_client, samples[i], failures))
        for i in range(STDIO_CLIENTS)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    assert not any(t.is_alive() for t in threads), "a client did not finish"
    assert not failures, failures[:5]
    for sample in samples:
        assert len(sample) == 2
        assert sample[1][1] - sample[0][1] < RSS_SLACK
    print(f"stdio: {per_client * STDIO_CLIENTS} requests in {time.monotonic() - started:.1f}s")


@pytest.mark.integration
def test_http_proxy_under_load(tmp_path: Path) -> None:
    """64 concurrent HTTP clients: every request answered once, bodies identical, RSS flat."""
    require_module("httpx")
    import httpx
    from tests.integrations.support import http_proxy
    from tests.integrations.test_http_proxy import scripted

    policy = _policy(tmp_path)
    with scripted() as base, http_proxy(base + "/mcp", policy=policy) as url:
        proxy_pid = _listener_pid(url)
        rss: list[int] = []

        async def client(worker: int, count: int, failures: list[str]) -> None:
            async with httpx.AsyncClient(timeout=60) as http:
                for n in range(count):
                    ident = worker * 1_000_000 + n
                    method = "sse" if n % 10 == 0 else "echo"
                    body = json.dumps({"jsonrpc": "2.0", "id": ident, "method": method}).encode()
                    response = await http.post(
                        url,
                        content=body,
                        headers={
                            "content-type": "application/json",
                            "accept": "application/json, text/event-stream",
                        },
                    )
                    if response.status_code != 200:
                        failures.append(f"{ident}: {response.status_code}")
                    elif (
                        method == "echo"
                        and json.loads(response.content)["result"]["body"] != body.decode()
                    ):
                        failures.append(f"{ident}: body changed")
                    elif (
                        method == "sse"
                        and f'"id": {ident}' not in response.text
                        and f'"id":{ident}' not in response.text
                    ):
                        failures.append(f"{ident}: no result in stream")
                    if worker == 0 and n in (count // 4, count - 1):
                        rss.append(psutil.Process(proxy_pid).memory_info().rss)

        async def run() -> list[str]:
            failures: list[str] = []
            per = MESSAGES // HTTP_CLIENTS
            await asyncio.gather(*(client(w, per, failures) for w in range(HTTP_CLIENTS)))
            return failures

        started = time.monotonic()
        failures = asyncio.run(asyncio.wait_for(run(), max(600, MESSAGES * 0.06)))
        assert not failures, failures[:5]
        assert len(rss) == 2
        assert rss[1] - rss[0] < RSS_SLACK
        print(f"http: {MESSAGES} requests in {time.monotonic() - started:.1f}s")


def _listener_pid(url: str) -> int:
    port = int(url.split(":")[2].split("/")[0])
    for conn in psutil.net_connections("tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN:
            assert conn.pid is not None
            return conn.pid
    raise AssertionError("no process listens on the proxy port")
