"""Fault injection against ``elicitguard proxy http`` with real processes.

The upstream is ``fault_http_server.py`` (a raw asyncio HTTP server that misbehaves at the
byte level), the proxy the real ``elicitguard proxy http`` subprocess, the clients httpx or
bare sockets. Mirrors test_faults.py (the stdio proxy): an upstream hanging (before its
headers, and after them), silent mid-stream, killed mid-stream, answering garbage or a
100 MB body; a client leaving mid-request; slow readers on both sides; SIGTERM and SIGINT
during traffic. Each asserts: no hang beyond the configured timeout, no zombie, every
in-flight request answered (or its connection closed cleanly for a client that left), and
the audit log intact (every line JSON; the HMAC chain verifies where it is on).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.integration_support import require_module
from tests.integrations.support import ELICITGUARD, read_line

SERVER = str(Path(__file__).parent / "fault_http_server.py")
TIMEOUT = 1.0
#: Start-up and scheduling slack on a busy 2-core machine, on top of the timeout.
SLACK = 3.0

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _needs_http() -> None:
    require_module("httpx")
    require_module("uvicorn")


_SPAWNED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _cleanup() -> Iterator[None]:
    """Kill what a failed test left behind; reap it; close its pipes."""
    yield
    while _SPAWNED:
        process = _SPAWNED.pop()
        if process.poll() is None:
            process.kill()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def start_upstream() -> tuple[subprocess.Popen[bytes], str]:
    process = subprocess.Popen(
        [sys.executable, SERVER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    _SPAWNED.append(process)
    line = read_line(process.stdout, 30).decode()
    assert line.startswith("PORT "), line
    return process, f"http://127.0.0.1:{int(line.split()[1])}"


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """One misbehaving upstream for the module (each test starts its own proxy)."""
    process = subprocess.Popen(
        [sys.executable, SERVER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        line = read_line(process.stdout, 30).decode()
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        process.kill()
        process.wait(10)
        assert process.stdout is not None
        process.stdout.close()


def write_policy(tmp_path: Path, *, chain: bool = False) -> Path:
    """The default preset, the audit log in a file; with ``chain`` an HMAC chain on it."""
    audit = {"sink": "file", "file": str(tmp_path / "audit.jsonl")}
    text = "name: faults\nextends: [builtin:default]\nenvironment: dev\n"
    if chain:
        keys = tmp_path / "keys.json"
        secret = base64.b64encode(os.urandom(32)).decode()
        keys.write_text(json.dumps({"keys": [{"id": "k1", "secret": secret}]}))
        audit["chain"] = True  # type: ignore[assignment]
        text += f"keys: {{file: {json.dumps(str(keys))}}}\n"
    path = tmp_path / "policy.yaml"
    path.write_text(text + f"audit: {json.dumps(audit)}\n", encoding="utf-8")
    return path


def start_proxy(
    tmp_path: Path, upstream: str, *, timeout: float | None = TIMEOUT, chain: bool = False
) -> tuple[subprocess.Popen[bytes], str]:
    extra = ["--request-timeout", str(timeout)] if timeout is not None else []
    process = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "http",
            "--upstream",
            upstream + "/mcp",
            "--listen",
            "127.0.0.1:0",
            "--policy",
            str(write_policy(tmp_path, chain=chain)),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    _SPAWNED.append(process)
    url = read_line(process.stdout, 60).decode().strip()
    assert url.startswith("http://127.0.0.1:"), url
    return process, url


def rpc(ident: int, method: str, **params: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params:
        message["params"] = params
    return json.dumps(message).encode()


HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def post(url: str, body: bytes, timeout: float = 30, **headers: str) -> Any:
    import httpx

    return httpx.post(url, content=body, headers={**HEADERS, **headers}, timeout=timeout)


def sse_messages(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def audit_records(tmp_path: Path) -> list[dict[str, Any]]:
    """Every line of the audit log, each of which must be one JSON object."""
    path = tmp_path / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def stop_proxy(process: subprocess.Popen[bytes], signum: int = signal.SIGTERM) -> int:
    """Signal the proxy, wait for it (bounded), and check it left no child behind."""
    kids = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signum)
    status = process.wait(10)
    for kid in kids:
        assert not psutil.pid_exists(kid.pid), f"child {kid.pid} outlived the proxy"
    return status


def error_of(message: dict[str, Any], ident: int) -> dict[str, Any]:
    assert message["id"] == ident
    error: dict[str, Any] = message["error"]
    assert error["code"] == -32603
    return error


def test_upstream_sending_nothing_gets_504_after_the_timeout(upstream: str, tmp_path: Path) -> None:
    """No headers within --request-timeout: each waiting request (three at once) gets HTTP
    504 with a JSON-RPC error for its id, in time; each expiry is audited; the chain holds."""
    proxy, url = start_proxy(tmp_path, upstream, chain=True)
    results: dict[int, Any] = {}
    started = time.monotonic()
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, post(url, rpc(i, "hang"))))
        for i in (1, 2, 3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT + SLACK + 5)
    assert time.monotonic() - started < TIMEOUT + SLACK
    for ident, response in results.items():
        assert response.status_code == 504
        error = error_of(response.json(), ident)
        assert error["data"]["elicitguard"] == {"reason": "upstream_timeout", "timeout_s": 1.0}
    assert len(results) == 3
    assert stop_proxy(proxy) == -signal.SIGTERM
    events = [r for r in audit_records(tmp_path) if r["event"] == "elicitguard.upstream_timeout"]
    assert [e["phase"] for e in events] == ["headers"] * 3
    assert verify_chain(tmp_path)


def verify_chain(tmp_path: Path) -> bool:
    from elicitguard.cli import main

    log = tmp_path / "audit.jsonl"
    return main(["audit", "verify", str(log), "--keys", str(tmp_path / "keys.json")]) == 0


def test_upstream_stalling_after_its_headers_is_cut_at_the_timeout(
    upstream: str, tmp_path: Path
) -> None:
    """JSON headers and half a body, then nothing: the client gets the error for its id
    (never the half body) once the timeout runs out, counted from the request."""
    proxy, url = start_proxy(tmp_path, upstream)
    started = time.monotonic()
    response = post(url, rpc(7, "stall"))
    assert time.monotonic() - started < TIMEOUT + SLACK
    error = error_of(response.json(), 7)
    assert error["data"]["elicitguard"]["reason"] == "upstream_timeout"
    assert b"xxxx" not in response.content
    stop_proxy(proxy)
    events = [r for r in audit_records(tmp_path) if r["event"] == "elicitguard.upstream_timeout"]
    assert [e["phase"] for e in events] == ["body"]


def test_silent_event_stream_ends_with_an_error_event(upstream: str, tmp_path: Path) -> None:
    """An SSE answer that goes silent: what came passes, then the stream ends with the
    error event for the request after the timeout of silence."""
    proxy, url = start_proxy(tmp_path, upstream)
    started = time.monotonic()
    response = post(url, rpc(8, "sse-stall"))
    assert time.monotonic() - started < TIMEOUT + SLACK
    messages = sse_messages(response.text)
    assert messages[0]["method"] == "notifications/progress"
    error = error_of(messages[-1], 8)
    assert error["data"]["elicitguard"]["reason"] == "upstream_timeout"
    stop_proxy(proxy)
    events = [r for r in audit_records(tmp_path) if r["event"] == "elicitguard.upstream_timeout"]
    assert [e["phase"] for e in events] == ["idle"]


def test_streams_that_keep_talking_or_only_listen_are_not_cut(
    upstream: str, tmp_path: Path
) -> None:
    """The timeout is silence, not length: a tool that sends a comment every 0.3 s for
    2.4 s gets its result through a 1 s timeout; a GET stream may wait 2 s for its event."""
    proxy, url = start_proxy(tmp_path, upstream)
    response = post(url, rpc(9, "sse-alive", every=0.3, **{"for": 2.4}))
    assert sse_messages(response.text)[-1] == {"jsonrpc": "2.0", "id": 9, "result": {"done": True}}
    import httpx

    got = httpx.get(url + "?quiet=2", headers={"accept": "text/event-stream"}, timeout=30)
    assert sse_messages(got.text)[0]["params"] == {"data": "hi"}
    stop_proxy(proxy)
    assert not [r for r in audit_records(tmp_path) if r["event"].endswith("upstream_timeout")]


def test_upstream_killed_mid_stream(tmp_path: Path) -> None:
    """SIGKILL to the upstream mid-stream: the stream ends with an error for the request;
    the next request gets 502; the proxy stays up; nothing is left as a zombie."""
    server, base = start_upstream()
    proxy, url = start_proxy(tmp_path, base, timeout=None)
    import httpx

    started = time.monotonic()
    with httpx.stream("POST", url, content=rpc(4, "sse-forever"), headers=HEADERS, timeout=30) as s:
        lines = s.iter_lines()
        assert json.loads(next(line for line in lines if line.startswith("data:"))[5:])
        server.kill()
        assert server.wait(10) == -signal.SIGKILL
        rest = "\n".join(lines)
    assert time.monotonic() - started < SLACK + 5
    error = error_of(sse_messages(rest)[-1], 4)
    assert error["data"]["elicitguard"]["reason"] == "upstream_closed"
    after = post(url, rpc(5, "echo"))
    assert after.status_code == 502
    assert error_of(after.json(), 5)["data"]["elicitguard"]["reason"] == "upstream_unreachable"
    assert psutil.Process(proxy.pid).status() != psutil.STATUS_ZOMBIE
    stop_proxy(proxy)
    audit_records(tmp_path)


def test_garbage_and_non_json_answers_become_errors(upstream: str, tmp_path: Path) -> None:
    """Bytes that are not HTTP: 502 for the id. HTTP with a body that is not JSON: an error
    for the id, never the body. The proxy serves the next request normally."""
    proxy, url = start_proxy(tmp_path, upstream)
    garbage = post(url, rpc(11, "garbage"))
    assert garbage.status_code == 502
    assert error_of(garbage.json(), 11)["data"]["elicitguard"] == {
        "reason": "upstream_unreachable",
        "error": "RemoteProtocolError",
    }
    notjson = post(url, rpc(12, "notjson"))
    assert b"html" not in notjson.content
    error_of(notjson.json(), 12)
    assert post(url, rpc(13, "echo")).json()["result"] == {"echo": 13}
    stop_proxy(proxy)
    audit_records(tmp_path)


def test_a_100_mb_body_is_never_held_whole(upstream: str, tmp_path: Path) -> None:
    """A 100 MB JSON answer: the client gets a small error for its id, the proxy's memory
    stays bounded, the timeout does not fire on a body that keeps coming in time."""
    proxy, url = start_proxy(tmp_path, upstream, timeout=60)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            with contextlib.suppress(psutil.Error):
                peak = max(peak, psutil.Process(proxy.pid).memory_info().rss)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        response = post(url, rpc(21, "big"), timeout=120)
    finally:
        done.set()
        sampler.join()
    assert len(response.content) < 4096
    assert error_of(response.json(), 21)
    assert peak < 300 << 20
    stop_proxy(proxy)
    for record in audit_records(tmp_path):
        assert "a" * 1000 not in json.dumps(record)


def upstream_stats(base: str) -> dict[str, int]:
    import httpx

    stats: dict[str, int] = httpx.get(base + "/stats", timeout=10).json()
    return stats


def test_client_leaving_mid_request_closes_the_upstream_connection(tmp_path: Path) -> None:
    """A client that disconnects while the upstream hangs (no timeout set): the proxy closes
    the upstream connection at once, and goes on serving."""
    server, base = start_upstream()
    proxy, url = start_proxy(tmp_path, base, timeout=None)
    port = int(url.split(":")[2].split("/")[0])
    body = rpc(31, "hang")
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(
            b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"accept: application/json\r\ncontent-length: %d\r\n\r\n" % len(body) + body
        )
        deadline = time.monotonic() + 10
        while upstream_stats(base)["requests"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        busy = upstream_stats(base)["open"]
    deadline = time.monotonic() + 5
    while upstream_stats(base)["open"] >= busy:  # our /stats connection counts too
        assert time.monotonic() < deadline, "the upstream connection stayed open"
        time.sleep(0.05)
    assert post(url, rpc(32, "echo")).json()["result"] == {"echo": 32}
    stop_proxy(proxy)
    server.kill()


def test_slow_client_reader_gets_every_event_in_order(upstream: str, tmp_path: Path) -> None:
    """A client that stops reading a 20,000-event stream for 2 s (twice the timeout): the
    proxy waits (backpressure, bounded memory) instead of buffering or timing out; then
    every event arrives in order, the result last."""
    proxy, url = start_proxy(tmp_path, upstream)
    port = int(url.split(":")[2].split("/")[0])
    count = 20_000
    body = rpc(41, "flood", n=count)
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        client.sendall(
            b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"accept: text/event-stream\r\ncontent-length: %d\r\n\r\n" % len(body) + body
        )
        time.sleep(2)  # not reading: the proxy must wait, not buffer without bound
        rss = psutil.Process(proxy.pid).memory_info().rss
        data = bytearray()
        client.settimeout(30)
        while not data.endswith(b"0\r\n\r\n"):
            piece = client.recv(65536)
            assert piece, "the proxy closed the stream early"
            data += piece
    text = data.decode()
    assert "upstream_timeout" not in text
    messages = sse_messages(text)
    assert [m["params"]["n"] for m in messages[:count]] == list(range(count))
    assert messages[-1] == {"jsonrpc": "2.0", "id": 41, "result": {"done": True}}
    assert rss < 300 << 20
    stop_proxy(proxy)


def test_slow_upstream_reader_gets_the_whole_request(upstream: str, tmp_path: Path) -> None:
    """An upstream reading a 2 MB request 64 KiB at a time: the proxy waits for it to drain
    and the answer comes back; the write is not cut by the timeout of a live exchange."""
    proxy, url = start_proxy(tmp_path, upstream, timeout=10)
    padding = "p" * (2 << 20)
    body = rpc(1, "slowread", padding=padding)
    response = post(url, body, **{"x-fault": "slowread"})
    assert response.json()["result"] == {"received": len(body)}
    stop_proxy(proxy)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_traffic_answers_in_flight_and_exits(
    upstream: str, tmp_path: Path, signum: signal.Signals
) -> None:
    """A signal mid-traffic: requests in flight (slow ones among them) are answered; one
    the upstream never answers gets 503 when the 2 s grace ends; later ones are refused or
    their connection closed, never left hanging nor cut mid-body; the proxy exits within
    the grace; the chained audit log verifies."""
    import httpx

    proxy, url = start_proxy(tmp_path, upstream, timeout=None, chain=True)
    outcomes: list[str] = []
    failures: list[str] = []
    stop = threading.Event()

    def client(worker: int) -> None:
        with httpx.Client(headers=HEADERS, timeout=20) as http:
            n = 0
            while not stop.is_set():
                ident = worker * 100_000 + n
                n += 1
                method = "elicit" if n % 5 == 0 else "echo"
                try:
                    response = http.post(url, content=rpc(ident, method))
                except httpx.TransportError:
                    outcomes.append("closed")
                    time.sleep(0.05)
                    continue
                try:
                    messages = (
                        sse_messages(response.text)
                        if method == "elicit"
                        else [response.json()]  # a cut body would not parse
                    )
                    assert messages[-1]["id"] == ident
                except (ValueError, AssertionError, IndexError, KeyError) as exc:
                    failures.append(f"{ident}: {type(exc).__name__}")
                outcomes.append("answered")

    slow: dict[int, Any] = {}

    def slow_client(ident: int) -> None:
        slow[ident] = post(url, rpc(ident, "echo", delay=1.0))

    workers = [threading.Thread(target=client, args=(w,)) for w in range(4)]
    for worker in workers:
        worker.start()
    time.sleep(1.0)

    def hanging_client() -> None:
        slow[-9] = post(url, rpc(-9, "hang"))

    slow_threads = [threading.Thread(target=slow_client, args=(i,)) for i in (-1, -2, -3)]
    slow_threads.append(threading.Thread(target=hanging_client))
    for thread in slow_threads:
        thread.start()
    time.sleep(0.4)  # the slow requests are in flight at the upstream
    started = time.monotonic()
    proxy.send_signal(signum)
    status = proxy.wait(10)
    assert time.monotonic() - started < 2 + SLACK
    # uvicorn re-raises the signal once it has shut down; SIGINT may also end in a clean 0
    assert status in ((-signal.SIGTERM,) if signum == signal.SIGTERM else (0, 130))
    for thread in slow_threads:
        thread.join(10)
    stop.set()
    for worker in workers:
        worker.join(30)
    assert not any(t.is_alive() for t in workers + slow_threads), "a client hung"
    hung = slow.pop(-9)
    assert hung.status_code == 503
    assert error_of(hung.json(), -9)["data"]["elicitguard"] == {"reason": "proxy_shutdown"}
    assert {i: r.json()["result"] for i, r in slow.items()} == {
        i: {"echo": i} for i in (-1, -2, -3)
    }
    assert not failures, failures[:5]
    assert outcomes.count("answered") > 10
    records = audit_records(tmp_path)
    assert any(r["event"] == "elicitguard.decision" for r in records)
    assert verify_chain(tmp_path)
