"""Round-trip overhead of the proxies, next to talking to the same server directly.

Why: a proxy sits on every message between a client and its server; ordinary traffic must
cost little more than the extra hop. Each pair sends sequential JSON-RPC requests (one
in flight at a time, so the time per item is a full round trip) to the same tiny server:

* ``stdio proxy: round trip`` – ``tests/integrations/servers/raw_server.py echo`` behind
  ``elicitguard proxy stdio`` versus the same server spawned directly;
* ``HTTP proxy: round trip`` – ``scripted_http.py``'s ``echo`` method behind ``elicitguard
  proxy http`` versus the same server over loopback, both with a kept-alive connection.

Processes are started once and stopped at exit. A batch is cut so that one round stays
within :data:`ROUND_BUDGET_S` at the proxy's warm-up speed (once, a missing ``TCP_NODELAY``
made every HTTP request wait ~40 ms for a delayed ACK, and this module alone took minutes).
Run alone: ``.venv/bin/python benchmarks/bench_proxy.py [--quick]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import ELICITGUARD, Pair, measure_pair, print_table, spawn, spawn_http_proxy

SERVERS = Path(__file__).resolve().parents[1] / "tests" / "integrations" / "servers"
#: Seconds one batch of the slower side may take; the harness runs about 20 of each side.
ROUND_BUDGET_S = 0.5


def _sized(count: int, trip: Callable[[int], None]) -> int:
    """``count``, or fewer when a warm-up batch shows a round would exceed the budget."""
    probe = 10
    started = time.perf_counter()
    trip(probe)
    per_trip = (time.perf_counter() - started) / probe
    return max(probe, min(count, int(ROUND_BUDGET_S / per_trip)))


def _stdio_round_trips(process: subprocess.Popen[bytes], count: int) -> None:
    assert process.stdin is not None
    assert process.stdout is not None
    for index in range(count):
        frame = {"jsonrpc": "2.0", "id": index, "method": "tools/list"}
        process.stdin.write(json.dumps(frame).encode() + b"\n")
        process.stdin.flush()
        process.stdout.readline()


def bench_stdio(quick: bool) -> Pair:
    count = 200 if quick else 1_000
    server = [sys.executable, str(SERVERS / "raw_server.py"), "echo", os.devnull]
    direct = spawn(server)
    proxied = spawn([ELICITGUARD, "proxy", "stdio", "--policy", "builtin:default", "--", *server])
    _stdio_round_trips(proxied, 5)  # warm up: the proxy's imports and the policy
    count = _sized(count, lambda n: _stdio_round_trips(proxied, n))
    return Pair(
        "stdio proxy: round trip",
        lambda: _stdio_round_trips(proxied, count),
        lambda: _stdio_round_trips(direct, count),
        count,
        baseline_name="direct",
    )


def bench_http(quick: bool) -> Pair:
    from http.client import HTTPConnection
    from urllib.parse import urlsplit

    from tests.integrations.support import read_line

    count = 100 if quick else 500
    upstream = spawn([sys.executable, str(SERVERS / "scripted_http.py")])
    port = int(read_line(upstream.stdout).decode().split()[1])
    direct_url = f"http://127.0.0.1:{port}/mcp"
    _proxy, proxy_url = spawn_http_proxy(direct_url)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo"}).encode()

    def trips(url: str, n: int | None = None) -> None:
        # http.client writes headers and body in one send: no Nagle/delayed-ACK stall on
        # the client's side (the servers set TCP_NODELAY for theirs). One kept-alive
        # connection per batch (servers close idle ones after a few seconds).
        parts = urlsplit(url)
        connection = HTTPConnection(parts.netloc, timeout=20)
        try:
            for _ in range(count if n is None else n):
                connection.request("POST", parts.path, body=body, headers=headers)
                response = connection.getresponse()
                response.read()
                assert response.status == 200
        finally:
            connection.close()

    trips(proxy_url, 5)
    count = _sized(count, lambda n: trips(proxy_url, n))
    return Pair(
        "HTTP proxy: round trip",
        lambda: trips(proxy_url),
        lambda: trips(direct_url),
        count,
        baseline_name="direct",
    )


def pairs(quick: bool) -> list[Pair]:
    """The proxy pairs (no targets: the issue sets none; the ratio is what to watch)."""
    return [bench_stdio(quick), bench_http(quick)]


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print_table([measure_pair(pair, rounds=5 if quick else 9) for pair in pairs(quick)])
