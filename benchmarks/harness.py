"""A small benchmark harness: pairs measured side by side in one run.

Machines here are noisy, so absolute times drift and ratios hold: each benchmark times its
subject and its baseline in alternating rounds over the same seeded workload, and reports
the median and p99 of the per-item time of both and the ratio of the medians, with PASS or
MISS against a target where the issue sets one.
"""

from __future__ import annotations

import atexit
import gc
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ELICITGUARD", "Pair", "Result", "measure_pair", "print_table", "spawn", "spawn_http_proxy"]


@dataclass
class Pair:
    """A subject and its baseline over the same ``items`` (a batch per round)."""

    name: str
    subject: Callable[[], object]
    baseline: Callable[[], object]
    items: int
    target_ratio: float | None = None
    target_text: str = ""
    baseline_name: str = "baseline"
    #: Called, untimed, before every run of ``subject`` (warm-up included): for work that
    #: cannot be repeated, such as single-use tokens, each run gets a fresh batch.
    prepare: Callable[[], object] | None = None


@dataclass
class Result:
    """What a pair measured; times are per item in microseconds."""

    name: str
    items: int
    rounds: int
    subject_median_us: float
    subject_p99_us: float
    baseline_median_us: float
    baseline_p99_us: float
    ratio: float
    target_ratio: float | None
    verdict: str
    target_text: str
    baseline_name: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def measure_pair(pair: Pair, *, rounds: int, warmup: int = 2) -> Result:
    """Alternate subject and baseline ``rounds`` times; per-item times from batch times."""
    for _ in range(warmup):
        pair.baseline()
        if pair.prepare is not None:
            pair.prepare()
        pair.subject()
    subject: list[float] = []
    baseline: list[float] = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for index in range(rounds):
            order = (
                (pair.baseline, pair.subject) if index % 2 == 0 else (pair.subject, pair.baseline)
            )
            for fn in order:
                if fn is pair.subject and pair.prepare is not None:
                    pair.prepare()
                started = time.perf_counter_ns()
                fn()
                elapsed = (time.perf_counter_ns() - started) / 1000 / pair.items
                (baseline if fn is pair.baseline else subject).append(elapsed)
            if index % 8 == 7:
                gc.collect()
    finally:
        if gc_was:
            gc.enable()
    s_med = statistics.median(subject)
    b_med = statistics.median(baseline)
    ratio = s_med / b_med if b_med else float("inf")
    verdict = "-"
    if pair.target_ratio is not None:
        verdict = "PASS" if ratio <= pair.target_ratio else "MISS"
    return Result(
        pair.name,
        pair.items,
        rounds,
        round(s_med, 3),
        round(_p99(subject), 3),
        round(b_med, 3),
        round(_p99(baseline), 3),
        round(ratio, 3),
        pair.target_ratio,
        verdict,
        pair.target_text,
        pair.baseline_name,
    )


def print_table(results: list[Result]) -> None:
    """One table for the whole run."""
    header = f"{'benchmark':<44} {'subject µs med/p99':>20} {'baseline µs med/p99':>21} {'ratio':>7}  {'target':<24} verdict"
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.name:<44} {r.subject_median_us:>9.2f}/{r.subject_p99_us:<10.2f}"
            f" {r.baseline_median_us:>9.2f}/{r.baseline_p99_us:<11.2f} {r.ratio:>7.2f}  {r.target_text:<24} {r.verdict}"
        )


_PROCESSES: list[subprocess.Popen[bytes]] = []


def spawn(argv: list[str], cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start a benchmark peer with piped stdin/stdout; it is stopped when the run exits."""
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd
    )
    _PROCESSES.append(process)
    return process


#: The ``elicitguard`` console script of the interpreter running the benchmarks.
ELICITGUARD = str(Path(sys.executable).with_name("elicitguard"))


def spawn_http_proxy(upstream_url: str) -> tuple[subprocess.Popen[bytes], str]:
    """``elicitguard proxy http`` (default policy) in front of ``upstream_url``; its URL."""
    proxy = spawn(
        [
            ELICITGUARD,
            "proxy",
            "http",
            "--upstream",
            upstream_url,
            "--listen",
            "127.0.0.1:0",
            "--policy",
            "builtin:default",
        ]
    )
    assert proxy.stdout is not None
    return proxy, proxy.stdout.readline().decode().strip()


@atexit.register
def _stop() -> None:
    for process in _PROCESSES:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
