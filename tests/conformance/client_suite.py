"""Run the conformance suite's client scenarios against an ``mcp`` SDK client, bare or guarded.

``python client_suite.py SETUP SPEC_VERSION OUT_DIR`` runs every scenario of
:data:`SCENARIOS` for that version with ``client.py SETUP`` as the client under test and
prints one JSON object: per scenario, the harness's exit status and the sorted ``[check id,
status]`` pairs of its ``checks.json``. Like the server suite, the harness runs with the
``loopback.cjs`` preload (every mock server binds 127.0.0.1) and, when the machine allows,
inside ``unshare -rn``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conformance.suite import HARNESS, NODE, PRELOAD, ROOT, loopback_up

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "client.py"
SETUPS = ("bare", "guard", "proxy")
#: The client scenarios an elicitation guard can affect, per protocol version (the
#: ``auth/*`` scenarios exercise OAuth flows that no elicitation passes through).
SCENARIOS: dict[str, tuple[str, ...]] = {
    "2025-11-25": (
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "json-schema-2020-12-preservation",
    ),
    "2026-07-28": (
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
    ),
}
SCENARIO_TIMEOUT_S = 120
#: How long the harness gives the client (its default is 30 s; a loaded machine needs more).
CLIENT_TIMEOUT_MS = 90_000


def read_checks(results: Path) -> list[list[str]]:
    """The sorted ``[check id, status]`` pairs of the one run under ``results``."""
    pairs: list[list[str]] = []
    for checks in sorted(results.glob("*/checks.json")):
        pairs += [[c["id"], c["status"]] for c in json.loads(checks.read_text())]
    return sorted(pairs)


def run_scenario(setup: str, spec: str, scenario: str, out: Path) -> dict[str, Any]:
    results = out / scenario.replace("/", "_")
    command = [
        str(NODE),
        "--require",
        str(PRELOAD),
        str(HARNESS),
        "client",
        "--command",
        f"{sys.executable} {CLIENT} {setup}",
        "--scenario",
        scenario,
        "--spec-version",
        spec,
        "--timeout",
        str(CLIENT_TIMEOUT_MS),
        "-o",
        str(results),
    ]
    done = subprocess.run(
        command, capture_output=True, timeout=SCENARIO_TIMEOUT_S, cwd=ROOT, check=False
    )
    (out / f"{scenario.replace('/', '_')}.log").write_bytes(done.stdout + done.stderr)
    return {"returncode": done.returncode, "checks": read_checks(results)}


def run(setup: str, spec: str, out: Path) -> dict[str, Any]:
    """Every scenario of ``spec`` against ``client.py SETUP``; see the module docstring."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    names = SCENARIOS[spec]
    runs = [run_scenario(setup, spec, name, out) for name in names]
    return {
        "setup": setup,
        "spec": spec,
        "seconds": round(time.monotonic() - started, 1),
        "scenarios": dict(zip(names, runs, strict=True)),
        "out": str(out),
    }


def main() -> None:
    setup, spec, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    loopback_up()
    print(json.dumps(run(setup, spec, out)))


if __name__ == "__main__":
    main()
