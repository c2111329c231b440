"""Run every benchmark, print one table, and write JSON: ``python benchmarks/run.py [--quick] [--json PATH]``.

Each benchmark pairs a subject with its baseline measured in the same run (ratios hold on
noisy machines where absolute times drift) and prints PASS or MISS against the targets of
the performance issue. Nothing here is a test: targets are never asserted in CI.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Pair, Result, measure_pair, print_table
from workloads import form_request, ordinary_messages, url_request

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing


def _engine() -> Engine:
    return Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())


def bench_fast_path(quick: bool) -> Pair:
    """Ordinary traffic through parse + evaluate, versus parse alone (target: 1.2x)."""
    frames = ordinary_messages(50 if os.environ.get("ELICITGUARD_BENCH_TINY") else 2_000 if quick else 10_000)
    engine = _engine()
    directions = {"client_to_server": Direction.CLIENT_TO_SERVER, "server_to_client": Direction.SERVER_TO_CLIENT}
    prepared = [(directions[d], f) for d, f in frames]

    def subject() -> None:  # what the linter and the proxies call per parsed frame
        evaluate = engine.evaluate
        for direction, frame in prepared:
            evaluate(orjson.loads(frame), direction, side=Side.PROXY, session="bench")

    def baseline() -> None:
        loads = orjson.loads
        for _, frame in prepared:
            loads(frame)

    return Pair("fast path: ordinary traffic", subject, baseline, len(prepared), 1.2, "<= 1.2x orjson.loads", "orjson.loads")


def bench_fast_path_bytes(quick: bool) -> Pair:
    """The same traffic handed over as frame bytes (the relay's form): the fast route reads
    the top-level keys only, never the whole message (stretch target: below one parse)."""
    frames = ordinary_messages(50 if os.environ.get("ELICITGUARD_BENCH_TINY") else 2_000 if quick else 10_000)
    engine = _engine()
    directions = {"client_to_server": Direction.CLIENT_TO_SERVER, "server_to_client": Direction.SERVER_TO_CLIENT}
    prepared = [(directions[d], f) for d, f in frames]

    def subject() -> None:
        evaluate = engine.evaluate
        for direction, frame in prepared:
            evaluate(frame, direction, side=Side.PROXY, session="bench")

    def baseline() -> None:
        loads = orjson.loads
        for _, frame in prepared:
            loads(frame)

    return Pair("fast path: ordinary traffic, from bytes", subject, baseline, len(prepared), 1.2, "<= 1.2x orjson.loads", "orjson.loads")


def bench_elicitation(quick: bool) -> list[Pair]:
    """One elicitation message per kind, evaluated with the default policy."""
    pairs: list[Pair] = []
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}, "url": {}}}}}
    cases = {
        "form request, 1 field": form_request(1),
        "form request, 10 fields": form_request(10),
        "form request, 50 fields": form_request(50),
        "URL request, ASCII host": url_request(),
        "URL request, IDN host": url_request("bücher.example.de"),
    }
    repeat = 200 if quick else 1_000
    if os.environ.get("ELICITGUARD_BENCH_TINY"):
        repeat = 5
    for name, message in cases.items():
        frame = orjson.dumps(message)
        engine = _engine()
        engine.evaluate(Envelope(init, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="b"))

        def subject(frame: bytes = frame, engine: Engine = engine) -> None:
            for _ in range(repeat):
                engine.evaluate(Envelope(orjson.loads(frame), Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="b"))

        def baseline(frame: bytes = frame) -> None:
            for _ in range(repeat):
                orjson.loads(frame)

        target = {"form request, 10 fields": 10.0, "URL request, ASCII host": 20.0}.get(name)
        pairs.append(Pair(f"evaluate: {name}", subject, baseline, repeat, target, f"<= {target:g}x orjson.loads" if target else "", "orjson.loads"))
        if target:  # the same without an audit sink: how much of the cost is the record
            quiet = Engine(load_policy(environ={}), audit=AuditSink(None), keys=KeyRing.random())
            quiet.evaluate(Envelope(init, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="b"))

            def unrecorded(frame: bytes = frame, engine: Engine = quiet) -> None:
                for _ in range(repeat):
                    engine.evaluate(Envelope(orjson.loads(frame), Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="b"))

            pairs.append(Pair(f"evaluate: {name}, no audit sink", unrecorded, baseline, repeat, None, "", "orjson.loads"))
            # A sink a policy opens writes from a background writer (audit.queue, default
            # 8192): the caller pays for queueing; the writer thread renders under the same GIL.
            queued = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO(), queue=8192), keys=KeyRing.random())
            queued.evaluate(Envelope(init, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="b"))

            def backgrounded(frame: bytes = frame, engine: Engine = queued) -> None:
                for _ in range(repeat):
                    engine.evaluate(Envelope(orjson.loads(frame), Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="b"))

            pairs.append(Pair(f"evaluate: {name}, queued audit sink", backgrounded, baseline, repeat, None, "", "orjson.loads"))
    return [*pairs, *bench_conversations(repeat)]


MODERN = "2026-07-28"


def _conversation(kind: str, base: int) -> list[tuple[Direction, dict[str, Any]]]:
    """The messages of one exchange whose last message is the measured item kind."""
    c2s, s2c = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
    call = {"jsonrpc": "2.0", "id": base, "method": "tools/call", "params": {"name": "book", "arguments": {}}}
    form = form_request(3, base)["params"]
    if kind == "result":
        answer = {"action": "accept", "content": {"field_0": "Ada", "field_1": 2, "field_2": True}}
        return [(s2c, form_request(3, base)), (c2s, {"jsonrpc": "2.0", "id": base, "result": answer})]
    if kind.startswith("input-required"):
        entries = int(kind.split(", ")[1].split()[0])
        requests = {f"q{i}": {"method": "elicitation/create", "params": form} for i in range(entries)}
        result = {"resultType": "input_required", "inputRequests": requests, "requestState": f"S{base}"}
        return [(c2s, call), (s2c, {"jsonrpc": "2.0", "id": base, "result": result})]
    requests = {"q0": {"method": "elicitation/create", "params": form}}
    result = {"resultType": "input_required", "inputRequests": requests, "requestState": f"S{base}"}
    responses = {"q0": {"action": "accept", "content": {"field_0": "Ada", "field_1": 2, "field_2": True}}}
    retry = {**call, "id": base + 1, "params": {**call["params"], "inputResponses": responses, "requestState": f"S{base}"}}
    return [(c2s, call), (s2c, {"jsonrpc": "2.0", "id": base, "result": result}), (c2s, retry)]


def bench_conversations(repeat: int) -> list[Pair]:
    """Result, input-required (1 and 8 entries) and retry: they need the messages before them.

    Each round evaluates whole exchanges (fresh ids per exchange) versus ``orjson.loads`` of
    the same frames; the per-item time is per exchange, so the ratio covers the exchange.
    """
    pairs: list[Pair] = []
    for kind in ("result", "input-required, 1 entry", "input-required, 8 entries", "retry"):
        engine = _engine()
        era = "2025-11-25" if kind == "result" else MODERN
        if kind == "result":
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": era, "capabilities": {"elicitation": {"form": {}, "url": {}}}}}
            engine.evaluate(Envelope(init, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="b"))
        counter = iter(range(10**9))

        def frames(kind: str = kind, counter: Any = counter) -> list[tuple[Direction, bytes]]:
            base = 1_000 + 10 * next(counter)
            return [(d, orjson.dumps(m)) for d, m in _conversation(kind, base)]

        pool = [frames() for _ in range(repeat * 48)]  # no id reused within a run
        cursor = {"at": 0}

        def subject(
            engine: Engine = engine, era: str = era, pool: list[Any] = pool, cursor: dict[str, int] = cursor
        ) -> None:
            start = cursor["at"]
            cursor["at"] = (start + repeat) % (len(pool) - repeat)
            for exchange in pool[start : start + repeat]:
                for direction, frame in exchange:
                    engine.evaluate(Envelope(orjson.loads(frame), direction, side=Side.PROXY, session="b", protocol_version=era))

        def baseline(pool: list[Any] = pool) -> None:
            for exchange in pool[:repeat]:
                for _, frame in exchange:
                    orjson.loads(frame)

        pairs.append(Pair(f"evaluate: {kind} (whole exchange)", subject, baseline, repeat, None, "", "orjson.loads"))
    return pairs


def _measure(pairs: list[Pair], rounds: int) -> list[Result]:
    """Each pair in turn; one broken benchmark must not lose the run (it becomes a row)."""
    results: list[Result] = []
    for pair in pairs:
        try:
            results.append(measure_pair(pair, rounds=rounds))
        except Exception as exc:
            print(f"  {pair.name}: failed ({type(exc).__name__}: {exc})", file=sys.stderr)
            # A peer that is not installed counts as a MISS, never as a silent gap.
            missing = isinstance(exc, ImportError)
            verdict = "MISS" if pair.target_ratio is not None or missing else "-"
            results.append(Result(pair.name, pair.items, 0, 0.0, 0.0, 0.0, 0.0, 0.0, pair.target_ratio, verdict, pair.target_text, pair.baseline_name, {"error": type(exc).__name__}))
    return results


#: The peers the ``bench`` extra installs (import names); any other missing module comes
#: from another extra, and the note must not send the reader to the wrong one.
BENCH_PEERS = frozenset({"detect_secrets", "confusable_homoglyphs", "betterleaks"})


def _module_rows(module: Any, build: str, quick: bool, rounds: int) -> list[Result]:
    """A module's rows; a peer that is not installed (the ``bench`` extra) or a module that
    breaks while it sets up costs its own rows only, printed as a MISS with the reason."""
    try:
        if build == "pairs":
            return _measure(module.pairs(quick), rounds)
        rows: list[Result] = module.results(quick)
        return rows
    except ImportError as exc:
        hint = "pip install -e '.[bench]'" if exc.name in BENCH_PEERS else "not installed"
        reason = f"needs {exc.name or 'a peer'}: {hint}"
        kind = "ImportError"
    except Exception as exc:
        reason, kind = f"{type(exc).__name__}: {exc}", type(exc).__name__
    print(f"  {module.__name__}.{build}: skipped ({reason})", file=sys.stderr)
    name = f"{module.__name__}: {build} (not run: {reason})"
    return [Result(name, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, None, "MISS", "", "", {"error": kind})]


def _bench_modules() -> list[Any]:
    """Every ``benchmarks/bench_*.py`` module; each defines ``pairs(quick) -> list[Pair]``."""
    folder = Path(__file__).resolve().parent
    return [importlib.import_module(p.stem) for p in sorted(folder.glob("bench_*.py"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="every target at reduced size (under 2 minutes)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--only",
        help="comma-separated subset: `core` (fast path, elicitation) and bench_* module names",
    )
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    rounds = 15 if args.quick else 21  # 21: the whole suite within 10 minutes
    if os.environ.get("ELICITGUARD_BENCH_TINY"):
        rounds = 3
    started = time.perf_counter()
    modules = [m for m in _bench_modules() if only is None or m.__name__ in only]
    results: list[Result] = []
    elapsed: list[tuple[str, float]] = []
    if only is None or "core" in only:
        at = time.perf_counter()
        core = [bench_fast_path(args.quick), bench_fast_path_bytes(args.quick), *bench_elicitation(args.quick)]
        results.extend(_measure(core, rounds))
        elapsed.append(("core", time.perf_counter() - at))
        print(f"  [core: {elapsed[-1][1]:,.1f} s]", file=sys.stderr, flush=True)
    for module in modules:  # a module may offer pairs, whole-run results, or both
        at = time.perf_counter()
        try:
            for build in ("pairs", "results"):
                if hasattr(module, build):
                    results.extend(_module_rows(module, build, args.quick, rounds))
        finally:
            elapsed.append((module.__name__, time.perf_counter() - at))
            print(f"  [{module.__name__}: {elapsed[-1][1]:,.1f} s]", file=sys.stderr, flush=True)
    print_table(results)
    targets = [r for r in results if r.verdict in ("PASS", "MISS")]
    print(f"targets: {sum(r.verdict == 'PASS' for r in targets)} PASS, {sum(r.verdict == 'MISS' for r in targets)} MISS")
    for result in results:
        if result.name.startswith("evaluate:"):
            per_second = 1_000_000 / result.subject_median_us if result.subject_median_us else 0
            print(f"  {result.name}: {per_second:,.0f} messages/s on one core")
    total = time.perf_counter() - started
    print("elapsed: " + ", ".join(f"{name} {seconds:,.1f} s" for name, seconds in elapsed))
    print(f"total run time: {total:,.1f} s ({'--quick' if args.quick else 'full'})")
    if args.json:
        args.json.write_text(json.dumps([r.to_dict() for r in results], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
