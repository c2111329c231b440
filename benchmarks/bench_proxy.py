"""Round-trip overhead of the proxies, next to talking to the same server directly.

Why: a proxy sits on every message between a client and its server; ordinary traffic must
cost little more than the extra hop. Each pair sends sequential JSON-RPC requests (one
in flight at a time, so the time per item is a full round trip) to the same tiny server:

* ``stdio proxy: round trip`` – ``tests/integrations/servers/raw_server.py echo`` behind
  ``elicitguard proxy stdio`` versus the same server spawned directly;
* ``HTTP proxy: round trip`` – ``scripted_http.py``'s ``echo`` method behind ``elicitguard
  proxy http`` versus the same server over loopback, both with a kept-alive connection.

Processes are started once and stopped at exit. Run alone:
``.venv/bin/python benchmarks/bench_proxy.py [--quick]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import Pair, measure_pair, print_table, spawn

SERVERS = Path(__file__).resolve().parents[1] / "tests" / "integrations" / "servers"
ELICITGUARD = str(Path(sys.executable).with_name("elicitguard"))


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
    proxy = spawn(
        [
            ELICITGUARD,
            "proxy",
            "http",
            "--upstream",
            direct_url,
            "--listen",
            "127.0.0.1:0",
            "--policy",
            "builtin:default",
        ]
    )
    proxy_url = read_line(proxy.stdout).decode().strip()
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo"}).encode()

    def trips(url: str) -> None:
        # http.client writes headers and body in one send: no Nagle/delayed-ACK stall,
        # which would otherwise add ~40 ms to every request on both paths. One kept-alive
        # connection per batch (servers close idle ones after a few seconds).
        parts = urlsplit(url)
        connection = HTTPConnection(parts.netloc, timeout=20)
        try:
            for _ in range(count):
                connection.request("POST", parts.path, body=body, headers=headers)
                response = connection.getresponse()
                response.read()
                assert response.status == 200
        finally:
            connection.close()

    trips(proxy_url)
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
