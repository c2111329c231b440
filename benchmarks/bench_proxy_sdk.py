"""Proxy targets on the issue's fixed upstream: an ``mcp`` SDK server with a no-op tool.

Why: a proxy sits on every request; what it adds to the round trip (median and p99, in
absolute microseconds and in proxy CPU time per request) is what users pay. Complements
``bench_proxy.py`` (raw echo servers, no targets) with the workload the issue fixes:

* ``stdio``: ``tools/call noop`` requests, one in flight, sent directly to the server, through
  ``elicitguard proxy stdio`` and through ``mcp-firewall wrap`` (the peer, from a separate
  virtual environment under ``benchmarks/out/`` that this module creates once and reuses: it
  is AGPL and never a dependency), interleaved in blocks of 100 (the order rotating every
  round) so drift hits all three alike. Every answer is checked, outside the timing, to be the
  server's own result for that id: mcp-firewall's default global rate limit (200 calls a
  minute) answers the rest itself with a "Blocked" result, which once made it look faster
  than talking to the server directly, so the peer runs with that limit off (its config is
  written to ``benchmarks/out/mcp-firewall.yaml``, its audit log next to it) and its other
  defaults on. Targets: median <= +10 %, p99 <= +1 ms; faster than mcp-firewall.
* ``HTTP``: the same tool over Streamable HTTP (stateless, JSON responses) directly and
  through ``elicitguard proxy http``, with 1 and 32 concurrent clients (requests per second).
  Target: >= 95 % of direct requests per second at 32 clients.

Sizes: 10,000 stdio requests per subject (``--quick``: 1,500); HTTP 3 interleaved rounds of
3,328 requests per subject at 32 clients and at one, about 10,000 each (quick: 960 and 240).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ELICITGUARD, Result, spawn, spawn_http_proxy

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, str(HERE / "servers" / "noop_server.py")]
PEER_VENV = HERE / "out" / "peer-venv"
MODERN_INIT = "2025-11-25"


def _tiny() -> bool:
    return bool(os.environ.get("ELICITGUARD_BENCH_TINY"))


def _cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` and its children that were waited for (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(v) for v in fields[11:15]) / ticks


class StdioPeer:
    """A spawned stdio MCP endpoint, initialised, ready for ``tools/call``."""

    def __init__(self, argv: list[str], cwd: Path | None = None) -> None:
        self.process = spawn(argv, cwd=cwd)
        self._id = 0
        #: Answers that were not the server's result for the request's id (a proxy's own).
        self.foreign = 0
        self.call(
            {
                "method": "initialize",
                "params": {
                    "protocolVersion": MODERN_INIT,
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"},
                },
            }
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def call(self, message: dict) -> bytes:
        self._id += 1
        self._send({"jsonrpc": "2.0", "id": self._id, **message})
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the stdio endpoint closed its output")
            if b'"id"' in line:
                return line

    def block(self, count: int, times: list[float]) -> None:
        """``count`` timed round trips; each answer is checked after its timing ends."""
        request = {"method": "tools/call", "params": {"name": "noop", "arguments": {}}}
        for _ in range(count):
            started = time.perf_counter_ns()
            line = self.call(request)
            times.append((time.perf_counter_ns() - started) / 1000)
            if not _server_answer(line, self._id):
                self.foreign += 1


def _server_answer(line: bytes, request_id: int) -> bool:
    """True when ``line`` is the no-op tool's own result for ``request_id``."""
    message = json.loads(line)
    result = message.get("result")
    return (
        message.get("id") == request_id
        and isinstance(result, dict)
        and result.get("structuredContent") == {"result": "ok"}
        and result.get("isError") is False
    )


#: mcp-firewall's settings for the run: its defaults, except the global rate limit (200 calls
#: a minute, after which it answers every call itself) and the audit log's place.
PEER_CONFIG = """version: 1
globalRateLimit:
  enabled: false
audit:
  path: {audit}
"""


def _peer_argv() -> tuple[list[str] | None, str]:
    """``mcp-firewall wrap`` from its own venv (created once, then reused), or why it cannot run."""
    if _tiny():
        return None, "skipped in the tiny smoke run"
    binary = PEER_VENV / "bin" / "mcp-firewall"
    config = PEER_VENV.parent / "mcp-firewall.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    audit = PEER_VENV.parent / "mcp-firewall.audit.jsonl"
    audit.unlink(missing_ok=True)
    config.write_text(PEER_CONFIG.format(audit=json.dumps(str(audit))))
    if not binary.exists():
        try:
            subprocess.run(
                [sys.executable, "-m", "venv", str(PEER_VENV)],
                check=True,
                capture_output=True,
                timeout=120,
            )
            subprocess.run(
                [str(PEER_VENV / "bin" / "pip"), "install", "-q", "mcp-firewall"],
                check=True,
                capture_output=True,
                timeout=600,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            return None, f"could not install mcp-firewall into {PEER_VENV}: {type(exc).__name__}"
    return [str(binary), "wrap", "--config", str(config), "--", *SERVER, "stdio"], ""


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _row(
    name: str,
    items: int,
    subject: list[float],
    base: list[float],
    target: float | None,
    text: str,
    verdict: str | None,
    extra: dict,
    baseline_name: str = "direct",
) -> Result:
    s_med, b_med = statistics.median(subject), statistics.median(base)
    ratio = s_med / b_med if b_med else float("inf")
    if verdict is None:
        verdict = "-" if target is None else ("PASS" if ratio <= target else "MISS")
    return Result(
        name,
        items,
        1,
        round(s_med, 2),
        round(_p99(subject), 2),
        round(b_med, 2),
        round(_p99(base), 2),
        round(ratio, 3),
        target,
        verdict,
        text,
        baseline_name,
        extra,
    )


def stdio_results(quick: bool) -> list[Result]:
    total = 60 if _tiny() else (1_500 if quick else 10_000)
    block = min(100, total)
    direct = StdioPeer([*SERVER, "stdio"])
    proxied = StdioPeer(
        [ELICITGUARD, "proxy", "stdio", "--policy", "builtin:default", "--", *SERVER, "stdio"]
    )
    peer_argv, why = _peer_argv()
    peer: StdioPeer | None = None
    if peer_argv is not None:
        try:
            peer = StdioPeer(peer_argv, cwd=PEER_VENV.parent)  # its kill-switch file is relative
        except (RuntimeError, OSError) as exc:
            why = f"mcp-firewall wrap did not answer initialize: {type(exc).__name__}"
    subjects = {
        "direct": direct,
        "elicitguard": proxied,
        **({"mcp-firewall": peer} if peer else {}),
    }
    times: dict[str, list[float]] = {name: [] for name in subjects}
    for endpoint in subjects.values():  # warm-up
        endpoint.block(20, [])
    cpu_before = {name: _cpu_seconds(e.process.pid) for name, e in subjects.items()}
    done = 0
    order = list(subjects.items())
    while done < total:
        for name, endpoint in order:
            endpoint.block(block, times[name])
        done += block
        order = order[1:] + order[:1]  # who goes first rotates: no subject always follows another
    cpu = {
        name: (_cpu_seconds(e.process.pid) - cpu_before[name]) / done * 1e6
        for name, e in subjects.items()
    }
    d, g = times["direct"], times["elicitguard"]
    added_med = statistics.median(g) - statistics.median(d)
    added_p99 = _p99(g) - _p99(d)
    foreign = {name: e.foreign for name, e in subjects.items()}
    extra = {
        "added_median_us": round(added_med, 1),
        "added_p99_us": round(added_p99, 1),
        "proxy_cpu_us_per_request": round(cpu["elicitguard"], 1),
        "server_cpu_us_per_request": round(cpu["direct"], 1),
        "answers_not_from_server": foreign,
    }
    if any(foreign.values()):
        print(f"  answers that were not the server's own result: {foreign}")
    print(
        f"  stdio proxy adds {added_med:,.0f} µs median, {added_p99:,.0f} µs p99; proxy CPU {cpu['elicitguard']:,.0f} µs/request (server alone {cpu['direct']:,.0f} µs)"
    )
    rows = [
        _row(
            "stdio proxy: tools/call median",
            done,
            g,
            d,
            1.10,
            "<= +10% median",
            "MISS" if foreign["elicitguard"] else None,
            extra,
        ),
        _row(
            "stdio proxy: tools/call p99 added",
            done,
            g,
            d,
            None,
            "<= +1 ms p99",
            "PASS" if added_p99 <= 1000 else "MISS",
            extra,
        ),
    ]
    if peer is not None:
        f = times["mcp-firewall"]
        print(
            f"  mcp-firewall wrap adds {statistics.median(f) - statistics.median(d):,.0f} µs median; its CPU {cpu['mcp-firewall']:,.0f} µs/request"
        )
        # A peer that answered anything itself did not do the same work: no verdict but MISS.
        unfair = foreign["mcp-firewall"] or foreign["elicitguard"]
        rows.append(
            _row(
                "stdio: elicitguard vs mcp-firewall",
                done,
                g,
                f,
                1.0,
                "faster than mcp-firewall",
                "MISS" if unfair else None,
                {
                    "mcp_firewall_cpu_us_per_request": round(cpu["mcp-firewall"], 1),
                    "mcp_firewall_added_median_us": round(
                        statistics.median(f) - statistics.median(d), 1
                    ),
                    "answers_not_from_server": foreign,
                },
                "mcp-firewall wrap",
            )
        )
    else:
        print(f"  MISS stdio: elicitguard vs mcp-firewall: {why}")
        rows.append(
            Result(
                "stdio: elicitguard vs mcp-firewall",
                0,
                0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                1.0,
                "MISS",
                "faster than mcp-firewall",
                "mcp-firewall wrap",
                {"skipped": why},
            )
        )
    return rows


async def _http_load(url: str, clients: int, total: int) -> tuple[float, list[float]]:
    """``clients`` keep-alive connections, each sending ``total // clients`` requests in turn.

    The load generator is a bare HTTP/1.1 loop over asyncio streams (one prepared request,
    responses read by ``Content-Length``), like wrk: on a 2-core machine an httpx client cost
    1-3 ms of CPU per request, more than the server or the proxy, and starved both.
    """
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "noop", "arguments": {}},
        }
    ).encode()
    request = (
        f"POST {parts.path} HTTP/1.1\r\nhost: {parts.netloc}\r\n"
        "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
        f"mcp-protocol-version: {MODERN_INIT}\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body
    times: list[float] = []
    per = total // clients

    async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        if head[9:12] != b"200":
            raise RuntimeError(f"HTTP {head[9:12].decode()} from {url}")
        lower = head.lower()
        at = lower.find(b"\r\ncontent-length:")
        if at < 0:
            raise RuntimeError("the benchmark expects JSON responses with Content-Length")
        length = int(lower[at + 17 : lower.index(b"\r\n", at + 2)])
        await reader.readexactly(length)

    async def worker(stream: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
        for _ in range(per):
            started = time.perf_counter_ns()
            await exchange(*stream)
            times.append((time.perf_counter_ns() - started) / 1000)

    assert parts.hostname is not None
    assert parts.port is not None
    streams = [await asyncio.open_connection(parts.hostname, parts.port) for _ in range(clients)]
    try:
        for stream in streams:  # warm-up: every connection used once before timing
            await exchange(*stream)
        started = time.perf_counter()
        await asyncio.gather(*(worker(stream) for stream in streams))
        return len(times) / (time.perf_counter() - started), times
    finally:
        for _, writer in streams:
            writer.close()


def http_results(quick: bool) -> list[Result]:
    total = 64 if _tiny() else (960 if quick else 3_328)
    upstream = spawn([*SERVER, "http"])
    assert upstream.stdout is not None
    port = int(upstream.stdout.readline().decode().split()[1])
    direct_url = f"http://127.0.0.1:{port}/mcp"
    proxy, proxy_url = spawn_http_proxy(direct_url)
    rows: list[Result] = []
    for clients in (1, 32):
        # One client in --quick: fewer requests keep the suite within its time budget.
        # (A separate name: reassigning ``total`` here once left 32 clients one request each.)
        count = max(clients * 2, total // 4) if clients == 1 and quick else total
        rates: dict[str, list[float]] = {"direct": [], "proxy": []}
        lat: dict[str, list[float]] = {"direct": [], "proxy": []}
        cpu_before = _cpu_seconds(proxy.pid)
        for _ in range(3):  # interleaved rounds
            for name, url in (("direct", direct_url), ("proxy", proxy_url)):
                rate, times = asyncio.run(_http_load(url, clients, count))
                rates[name].append(rate)
                lat[name].extend(times)
        cpu = (_cpu_seconds(proxy.pid) - cpu_before) / (3 * count) * 1e6
        keep = statistics.median(rates["proxy"]) / statistics.median(rates["direct"])
        added = statistics.median(lat["proxy"]) - statistics.median(lat["direct"])
        print(
            f"  HTTP proxy, {clients} client(s): {statistics.median(rates['proxy']):,.0f} req/s vs direct {statistics.median(rates['direct']):,.0f} ({keep:.0%}); adds {added:,.0f} µs median; proxy CPU {cpu:,.0f} µs/request"
        )
        extra = {
            "proxy_rps": round(statistics.median(rates["proxy"]), 1),
            "direct_rps": round(statistics.median(rates["direct"]), 1),
            "kept": round(keep, 3),
            "added_median_us": round(added, 1),
            "proxy_cpu_us_per_request": round(cpu, 1),
        }
        verdict = None if clients == 1 else ("PASS" if keep >= 0.95 else "MISS")
        rows.append(
            _row(
                f"HTTP proxy: {clients} client(s), latency",
                len(lat["proxy"]),
                lat["proxy"],
                lat["direct"],
                None,
                ">= 95% rps" if clients == 32 else "",
                verdict,
                extra,
            )
        )
    return rows


def results(quick: bool) -> list[Result]:
    """stdio then HTTP; ``ELICITGUARD_BENCH_NO_HTTP=1`` (the smoke test) leaves HTTP out."""
    if os.environ.get("ELICITGUARD_BENCH_NO_HTTP"):
        return stdio_results(quick)
    return [*stdio_results(quick), *http_results(quick)]


def pairs(quick: bool) -> list:
    """No harness pairs: round trips are timed one by one here (see :func:`results`)."""
    return []


if __name__ == "__main__":
    from harness import print_table

    print_table(results("--quick" in sys.argv))
