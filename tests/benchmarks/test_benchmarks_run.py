"""The benchmark scripts run end to end on tiny sizes, so they cannot rot.

Never a timing assertion: the numbers of a tiny run mean nothing; what is checked is that
every benchmark still builds its workload, runs, prints a verdict for each target and writes
its JSON. The slow parts (HTTP through the SDK server, the mcp-firewall peer) are skipped
by the tiny mode or left to the real run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_tiny_run_prints_verdicts_and_writes_json(tmp_path: Path) -> None:
    """Core, lint, identity and stdio-proxy benchmarks run on tiny sizes and report rows."""
    out = tmp_path / "bench.json"
    env = {**os.environ, "ELICITGUARD_BENCH_TINY": "1", "ELICITGUARD_BENCH_NO_HTTP": "1"}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--quick",
            "--only",
            "core,bench_lint,bench_proxy_sdk,bench_identity",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())
    names = {row["name"] for row in rows}
    assert "fast path: ordinary traffic" in names
    assert "evaluate: retry (whole exchange)" in names
    assert "lint: peak RSS large/small" in names
    assert "stdio proxy: tools/call median" in names
    assert all(row["verdict"] in ("PASS", "MISS", "-") for row in rows)
    # A skipped target counts as MISS, never as a silent gap.
    peer = next(row for row in rows if row["name"] == "stdio: elicitguard vs mcp-firewall")
    assert peer["verdict"] == "MISS"
    assert "targets:" in done.stdout
    assert "total run time:" in done.stdout
    # Single-use requestState: every round and warm-up gets a fresh sealed batch.
    opened = next(row for row in rows if row["name"] == "open requestState (memory store)")
    assert opened["rounds"] > 0
    assert "error" not in opened["extra"]
    # Every stdio answer came from the server itself, none from a proxy.
    stdio = next(row for row in rows if row["name"] == "stdio proxy: tools/call median")
    assert not any(stdio["extra"]["answers_not_from_server"].values())


def test_audit_benchmark_runs_and_writes_every_record() -> None:
    """bench_audit.py checks itself that every record reached the file; rows for both modes."""
    env = {**os.environ, "ELICITGUARD_BENCH_TINY": "1"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_audit.py"), "--quick"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("inline") == 2
    assert done.stdout.count("queue 8192") == 2


#: Runs ``benchmarks/run.py`` as if the ``bench`` extra were not installed: its peers'
#: imports fail as a missing package's do.
_WITHOUT_BENCH_EXTRA = """
import runpy, sys
from importlib.abc import MetaPathFinder

class _Missing(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"detect_secrets", "confusable_homoglyphs", "betterleaks"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name.split(".")[0])
        return None

sys.meta_path.insert(0, _Missing())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_run_without_the_bench_extra_counts_peer_rows_as_miss(tmp_path: Path) -> None:
    """Without the ``bench`` extra the run completes; each peer row is a MISS with a note."""
    out = tmp_path / "bench.json"
    env = {**os.environ, "ELICITGUARD_BENCH_TINY": "1", "ELICITGUARD_BENCH_NO_HTTP": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _WITHOUT_BENCH_EXTRA,
            str(ROOT / "benchmarks" / "run.py"),
            "--quick",
            "--only",
            "bench_forms,bench_domains",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())
    peers = [r for r in rows if r["extra"].get("error") == "ImportError"]
    assert peers, [r["name"] for r in rows]
    assert all(r["verdict"] == "MISS" for r in peers)
    assert "[bench]" in done.stderr
    assert "targets:" in done.stdout
