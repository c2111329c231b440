"""The gateway load test, full size: ``python benchmarks/gateway_load.py [--messages N] [--streams S]``.

Two ``serve ext-proc`` replicas share one redis-server (started here on loopback); 64
concurrent Process streams (by default) drive 100,000 exchanges of benign and violating
traffic (both eras, JSON and SSE). Every answer must arrive and match what
``elicitguard proxy http`` sends the client for the same message. Prints one JSON line.
tests/gateway/test_load.py runs a CI-sized share.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.gateway.conftest import replica  # noqa: E402
from tests.gateway.load import prepare, run_load  # noqa: E402
from tests.identity.conftest import key_json  # noqa: E402
from tests.integrations.support import http_proxy  # noqa: E402
from tests.integrations.test_http_proxy import scripted  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def redis_server(folder: Path):
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is needed (apt-get install redis-server)")
    port = _free_port()
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.3)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--streams", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        keys = folder / "keys.json"
        keys.write_text(key_json("k1"))
        keys.chmod(0o600)
        with (
            redis_server(folder) as redis,
            scripted() as upstream,
            http_proxy(upstream + "/mcp") as reference,
            replica("ext-proc", redis, keys) as one,
            replica("ext-proc", redis, keys) as two,
        ):
            cases = prepare(upstream, reference)
            result = asyncio.run(
                run_load([one[0], two[0]], cases, messages=args.messages, streams=args.streams)
            )
    report = {
        "messages": args.messages,
        "streams": args.streams,
        "answered": result.answered,
        "lost": result.sent - result.answered + (args.messages - result.sent),
        "errors": len(result.errors),
        "mismatches": len(result.mismatches),
        "seconds": round(result.seconds, 1),
        "per_second": round(result.answered / result.seconds, 1) if result.seconds else None,
        "first_problem": (result.errors + result.mismatches)[:1],
    }
    print(json.dumps(report))
    return 0 if report["lost"] == 0 and not result.mismatches and not result.errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
