"""The MCP conformance suite (``@modelcontextprotocol/conformance`` 0.2.0-alpha.12, server
mode, ``--suite all``) against our fixture, for ``--spec-version`` 2025-11-25 and 2026-07-28.

The direct run must pass every scenario that ``expected-failures.yml`` does not list, and
every ``input-required-result-*`` and elicitation scenario whatever the file says. Runs
through ``elicitguard proxy http`` and through the ASGI middleware, both under the
passthrough preset, must pass and fail exactly the checks the direct run does: elicitguard
in front of a server must not cost it conformance.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conformance import suite
from tests.integration_support import require, require_module

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Scenarios elicitguard's own behaviour depends on: they must pass, baseline or not.
MUST_PASS = {
    "2025-11-25": {
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
    },
    "2026-07-28": {
        f"input-required-result-{name}"
        for name in (
            "basic-elicitation",
            "basic-sampling",
            "basic-list-roots",
            "request-state",
            "multiple-input-requests",
            "multi-round",
            "missing-input-response",
            "non-tool-request",
            "result-type",
            "unsupported-methods",
            "tampered-state",
            "capability-check",
            "ignore-extra-params",
            "validate-input",
        )
    },
}


@cache
def netns_prefix() -> tuple[str, ...]:
    """``unshare -rn`` when this machine can make a network namespace, else nothing.

    The harness is pinned to 127.0.0.1 by a preload either way; the namespace also takes
    away every other interface.
    """
    try:
        done = subprocess.run(
            ["unshare", "-rn", "ip", "link", "set", "lo", "up"], capture_output=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return ("unshare", "-rn") if done.returncode == 0 else ()


def run_sandboxed(script: Path, args: list[str], timeout: float) -> dict[str, Any]:
    """``python SCRIPT ARGS...`` in the namespace when there is one; its stdout as JSON."""
    prefix = netns_prefix()
    env = dict(os.environ, ELICITGUARD_NETNS="1" if prefix else "0")
    env["PYTHONPATH"] = os.pathsep.join([str(suite.ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [*prefix, sys.executable, str(script), *args],
        capture_output=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run_suite(setup: str, spec: str, out: Path) -> dict[str, Any]:
    """One run of :mod:`tests.conformance.suite`, in the namespace when there is one."""
    script = Path(suite.__file__)
    return run_sandboxed(script, [setup, spec, str(out)], suite.HARNESS_TIMEOUT_S + 60)


def verdicts(run: dict[str, Any]) -> Counter[tuple[str, str, str]]:
    """Every passed and failed check of a run, as (scenario, check id, status)."""
    return Counter(
        (scenario, check, status)
        for scenario, checks in run["scenarios"].items()
        for check, status in checks
        if status in ("SUCCESS", "FAILURE")
    )


def counts(run: dict[str, Any]) -> str:
    tally = Counter(status for _s, _c, status in verdicts(run).elements())
    return (
        f"{run['setup']}: {tally['SUCCESS']} passed, {tally['FAILURE']} failed ({run['seconds']} s)"
    )


@pytest.mark.parametrize("spec", ["2025-11-25", "2026-07-28"])
def test_elicitguard_in_front_keeps_the_fixture_conformant(spec: str, tmp_path: Path) -> None:
    """Direct: everything outside the baseline passes; proxy and ASGI: exactly the same."""
    require(str(suite.NODE))
    require_module("mcp")
    if not suite.HARNESS.exists():
        require("conformance harness in .ci/node (run .ci/run)")
    baseline = set(yaml.safe_load(suite.EXPECTED_FAILURES.read_text()).get("server") or [])
    runs = {setup: run_suite(setup, spec, tmp_path / setup) for setup in suite.SETUPS}
    print(f"conformance {spec}: " + "; ".join(counts(r) for r in runs.values()))

    direct = runs["direct"]
    log = Path(direct["log"]).read_text(errors="replace")[-3000:]
    assert direct["returncode"] == 0, f"unexpected failures or a stale baseline:\n{log}"
    failing = {
        s for s, checks in direct["scenarios"].items() if any(c[1] == "FAILURE" for c in checks)
    }
    assert failing <= baseline, failing - baseline
    missing = MUST_PASS[spec] - direct["scenarios"].keys()
    assert not missing, f"scenarios the suite no longer runs: {sorted(missing)}"
    assert not (MUST_PASS[spec] & failing), sorted(MUST_PASS[spec] & failing)
    assert sum(verdicts(direct).values()) > 50  # the suite really ran

    for setup in ("proxy", "asgi"):
        other = verdicts(runs[setup])
        assert other == verdicts(direct), {
            "only direct": sorted((verdicts(direct) - other).elements()),
            f"only {setup}": sorted((other - verdicts(direct)).elements()),
        }
