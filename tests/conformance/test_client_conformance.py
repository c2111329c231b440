"""The conformance suite's client scenarios against an ``mcp`` SDK client, three ways.

``client_suite.py`` runs each scenario an elicitation guard can affect (both eras:
``elicitation-sep1034-client-defaults``, ``sep-2322-client-request-state``,
``request-metadata``, ``sse-retry`` and the tool and header scenarios) against the plain
``mcp.Client`` (``bare``), the same client wrapped in :class:`ClientGuard` (``guard``) and
the plain client talking through ``elicitguard proxy http`` (``proxy``), both under
``builtin:default``. The bare run must pass every check outside the client baseline in
``expected-failures.yml`` and every check in :data:`MUST_PASS`; the guarded and proxied runs
must pass, warn and fail exactly the checks the bare run does.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conformance import suite
from tests.conformance.client_suite import SCENARIO_TIMEOUT_S, SCENARIOS, SETUPS
from tests.conformance.test_conformance import run_sandboxed
from tests.integration_support import require_file, require_module

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HERE = Path(__file__).resolve().parent

#: Checks that elicitguard's own behaviour depends on: the bare client passes them, and so
#: must every guarded run (the equality below then holds them for guard and proxy too).
MUST_PASS = {
    "2025-11-25": {
        "client-elicitation-sep1034-string-default",
        "client-elicitation-sep1034-integer-default",
        "client-elicitation-sep1034-number-default",
        "client-elicitation-sep1034-enum-default",
        "client-elicitation-sep1034-boolean-default",
        "client-sse-graceful-reconnect",
        "client-sse-retry-timing",
        "client-sse-last-event-id",
        "tool-add-numbers",
    },
    "2026-07-28": {
        "sep-2322-client-request-state-echoed",
        "sep-2322-client-jsonrpc-id-different",
        "sep-2322-client-no-state-omitted",
        "sep-2322-client-parallel-isolation",
        "sep-2322-default-result-type-complete",
        "sep-2575-client-populates-meta",
        "sep-2575-http-client-sends-version-header",
        "sep-2575-http-version-header-matches-meta",
        "tool-add-numbers",
    },
}


def run_client_suite(setup: str, spec: str, out: Path) -> dict[str, Any]:
    timeout = SCENARIO_TIMEOUT_S * len(SCENARIOS[spec])
    return run_sandboxed(HERE / "client_suite.py", [setup, spec, str(out)], timeout)


def verdicts(run: dict[str, Any]) -> Counter[tuple[str, str, str]]:
    """Every judged check of a run, as (scenario, check id, status); INFO and SKIPPED aside."""
    return Counter(
        (scenario, check, status)
        for scenario, result in run["scenarios"].items()
        for check, status in result["checks"]
        if status in ("SUCCESS", "WARNING", "FAILURE")
    )


@pytest.mark.parametrize("spec", sorted(SCENARIOS))
def test_guarded_clients_match_the_bare_client(spec: str, tmp_path: Path) -> None:
    require_module("mcp")
    require_file(suite.NODE, "node from .ci/node")
    require_file(suite.HARNESS, "the conformance harness")
    with ThreadPoolExecutor(max_workers=len(SETUPS)) as pool:
        runs = dict(
            zip(
                SETUPS,
                pool.map(lambda s: run_client_suite(s, spec, tmp_path / s), SETUPS),
                strict=True,
            )
        )
    tallies = {s: Counter(status for *_, status in verdicts(r).elements()) for s, r in runs.items()}
    print(f"client conformance {spec}: {tallies}")

    bare = verdicts(runs["bare"])
    assert sum(bare.values()) > 15, "the suite really ran"
    baseline = set(yaml.safe_load(suite.EXPECTED_FAILURES.read_text()).get("client") or [])
    failing = {f"{scenario}/{check}" for scenario, check, status in bare if status == "FAILURE"}
    assert failing <= baseline, sorted(failing - baseline)
    passed = {check for _scenario, check, status in bare if status == "SUCCESS"}
    assert MUST_PASS[spec] <= passed, sorted(MUST_PASS[spec] - passed)

    for setup in ("guard", "proxy"):
        other = verdicts(runs[setup])
        assert other == bare, {
            "only bare": sorted((bare - other).elements()),
            f"only {setup}": sorted((other - bare).elements()),
        }
