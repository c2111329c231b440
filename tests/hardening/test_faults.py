"""Fault injection against ``elicitguard proxy stdio`` with real processes.

Complements tests/integrations/test_stdio_proxy.py (upstream exit and kill mid-request,
garbage, a stubborn child, SIGTERM) and test_http_proxy.py (upstream dying mid-stream,
client disconnect, unreachable upstream, SIGTERM): here a hanging server, a 100 MB line,
a server closing its stdout, SIGINT during traffic, and slow readers on both sides. Each
asserts: no hang beyond the configured timeout, no zombie, every in-flight request answered,
and the audit log parseable with one record per non-fast-path decision.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.integrations.support import ELICITGUARD, read_line

SERVER = str(Path(__file__).parent / "fault_server.py")
PY = sys.executable


def policy(tmp_path: Path) -> Path:
    """The default preset with the audit log in a file (to check it stays intact)."""
    path = tmp_path / "policy.yaml"
    path.write_text(
        "name: faults\nextends: [builtin:default]\nenvironment: dev\n"
        f"audit: {{sink: file, file: {json.dumps(str(tmp_path / 'audit.jsonl'))}}}\n",
        encoding="utf-8",
    )
    return path


_SPAWNED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _cleanup() -> Iterator[None]:
    """Kill what a failed test left behind and close its pipes."""
    yield
    while _SPAWNED:
        process = _SPAWNED.pop()
        if process.poll() is None:
            process.kill()
            process.wait(10)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def spawn(
    tmp_path: Path, *server: str, timeout: float = 0.5, request_timeout: float | None = None
) -> subprocess.Popen[bytes]:
    extra = ["--request-timeout", str(request_timeout)] if request_timeout is not None else []
    process = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "stdio",
            "--policy",
            str(policy(tmp_path)),
            "--shutdown-timeout",
            str(timeout),
            *extra,
            "--",
            PY,
            SERVER,
            *server,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    _SPAWNED.append(process)
    return process


def request(ident: int, method: str = "tools/list") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method}).encode() + b"\n"


def send(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.flush()


def answers(process: subprocess.Popen[bytes], timeout: float) -> list[dict[str, Any]]:
    """Every message until the proxy closes its output (bounded by ``timeout``)."""
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = read_line(process.stdout, max(0.1, deadline - time.monotonic()))
        if not line:
            return out
        out.append(json.loads(line))
    raise AssertionError("the proxy kept its output open past the deadline")


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def assert_clean_exit(
    process: subprocess.Popen[bytes], kids: list[psutil.Process], within: float
) -> int:
    status = process.wait(within)
    for kid in kids:
        assert not psutil.pid_exists(kid.pid) or kid.status() != psutil.STATUS_ZOMBIE
        assert not psutil.pid_exists(kid.pid), f"child {kid.pid} outlived the proxy"
    return status


def audit_records(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def wait_child(process: subprocess.Popen[bytes]) -> list[psutil.Process]:
    deadline = time.monotonic() + 20
    while not (kids := descendants(process.pid)):
        assert time.monotonic() < deadline, "no server spawned"
        time.sleep(0.05)
    return kids


@pytest.mark.integration
def test_hanging_server_is_bounded_by_the_shutdown_timeout(tmp_path: Path) -> None:
    """A server that never answers nor exits (ignoring SIGTERM): when the client leaves, the
    proxy kills and reaps it within the configured timeout (2 x --shutdown-timeout)."""
    process = spawn(tmp_path, "hang", timeout=0.5)
    kids = wait_child(process)
    for ident in range(1, 6):
        send(process, request(ident))
    assert process.stdin is not None
    started = time.monotonic()
    process.stdin.close()
    got = answers(process, timeout=10)
    assert_clean_exit(process, kids, within=10)
    assert time.monotonic() - started < 5  # 2 x 0.5 s timeout plus process start-up slack
    assert all("error" in m for m in got)  # nothing but error answers, if any
    audit_records(tmp_path)  # parseable


@pytest.mark.integration
def test_hanging_server_requests_are_answered_after_the_request_timeout(tmp_path: Path) -> None:
    """With --request-timeout, every request a hanging server never answers gets an error
    within the configured time, while the client stays connected; the log records it."""
    process = spawn(tmp_path, "hang", timeout=0.5, request_timeout=1.0)
    kids = wait_child(process)
    started = time.monotonic()
    for ident in range(1, 4):
        send(process, request(ident))
    got = [json.loads(read_line(process.stdout, 10)) for _ in range(3)]
    assert time.monotonic() - started < 6
    assert sorted(m["id"] for m in got) == [1, 2, 3]
    assert all(m["error"]["data"]["elicitguard"]["reason"] == "upstream_timeout" for m in got)
    assert process.stdin is not None
    process.stdin.close()
    assert_clean_exit(process, kids, within=10)
    events = [r.get("event") for r in audit_records(tmp_path)]
    assert events.count("elicitguard.upstream_timeout") == 3


@pytest.mark.integration
def test_a_100_mb_line_is_dropped_and_the_answer_still_arrives(tmp_path: Path) -> None:
    """An oversized server line is never forwarded nor held whole; the reply after it passes."""
    process = spawn(tmp_path, "bigline")
    kids = wait_child(process)
    send(process, request(7))
    line = read_line(process.stdout, 120)
    assert len(line) < 1 << 20
    message = json.loads(line)
    assert message["id"] == 7
    assert message["result"] == {"echo": 7}
    assert psutil.Process(process.pid).memory_info().rss < 400 << 20
    assert process.stdin is not None
    process.stdin.close()
    assert_clean_exit(process, kids, within=20)
    for record in audit_records(tmp_path):
        assert "a" * 1000 not in json.dumps(record)


@pytest.mark.integration
def test_server_closing_stdout_answers_in_flight_and_reaps(tmp_path: Path) -> None:
    """The server closes stdout but lives on: the pending request is failed, the server killed."""
    process = spawn(tmp_path, "close-stdout", timeout=0.5)
    kids = wait_child(process)
    send(process, request(3))
    got = answers(process, timeout=15)
    assert [m["id"] for m in got if "error" in m] == [3]
    assert_clean_exit(process, kids, within=10)


@pytest.mark.integration
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_traffic_answers_everything_and_exits(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """A signal mid-burst: forwarded to the server; every request sent gets exactly one answer."""
    process = spawn(tmp_path, "echo")
    kids = wait_child(process)
    sent = 400
    writer = threading.Thread(
        target=lambda: [send(process, request(i)) for i in range(sent)], daemon=True
    )
    writer.start()
    first = json.loads(read_line(process.stdout, 20))
    process.send_signal(signum)
    got = [first, *answers(process, timeout=20)]
    writer.join(5)
    assert_clean_exit(process, kids, within=10)
    ids = [m["id"] for m in got if "id" in m]
    assert len(ids) == len(set(ids))  # never twice
    # every request the proxy read was answered (a result or an error); the rest never left
    # the client's pipe: they are an unbroken prefix of what was sent
    assert sorted(ids) == list(range(len(ids)))


@pytest.mark.integration
def test_slow_client_reader_gets_every_message_in_order(tmp_path: Path) -> None:
    """The client stops reading while the server floods: backpressure, no loss, bounded memory."""
    count = 20_000
    process = spawn(tmp_path, "flood", str(count))
    kids = wait_child(process)
    send(process, request(1))
    time.sleep(2)  # the pipes fill; the proxy must wait, not buffer without bound
    rss = psutil.Process(process.pid).memory_info().rss
    seen = [json.loads(read_line(process.stdout, 30)) for _ in range(count + 1)]
    assert [m["params"]["n"] for m in seen[:count]] == list(range(count))
    assert seen[-1]["id"] == 1
    assert rss < 300 << 20
    assert process.stdin is not None
    process.stdin.close()
    assert_clean_exit(process, kids, within=15)


@pytest.mark.integration
def test_slow_server_reader_gets_every_request_in_order(tmp_path: Path) -> None:
    """A client writing faster than the server reads: all requests answered, in order."""
    process = spawn(tmp_path, "echo")
    kids = wait_child(process)
    count = 5_000
    payload = b"".join(request(i) for i in range(count))
    writer = threading.Thread(target=send, args=(process, payload), daemon=True)
    writer.start()
    got = [json.loads(read_line(process.stdout, 30)) for _ in range(count)]
    assert [m["id"] for m in got] == list(range(count))
    assert process.stdin is not None
    writer.join(10)
    process.stdin.close()
    assert_clean_exit(process, kids, within=15)
