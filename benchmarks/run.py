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
import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Pair, Result, measure_pair, print_table
from workloads import form_request, ordinary_messages, url_request

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.identity.keys import KeyRing


def _engine() -> Engine:
    return Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())


def bench_fast_path(quick: bool) -> Pair:
    """Ordinary traffic through parse + evaluate, versus parse alone."""
    frames = ordinary_messages(2_000 if quick else 10_000)
    engine = _engine()
    directions = {"client_to_server": Direction.CLIENT_TO_SERVER, "server_to_client": Direction.SERVER_TO_CLIENT}
    prepared = [(directions[d], f) for d, f in frames]

    def subject() -> None:
        evaluate = engine.evaluate
        for direction, frame in prepared:
            evaluate(Envelope(orjson.loads(frame), direction, side=Side.PROXY, session="bench"))

    def baseline() -> None:
        loads = orjson.loads
        for _, frame in prepared:
            loads(frame)

    return Pair("fast path: ordinary traffic", subject, baseline, len(prepared), 1.5, "<= 1.5x orjson.loads", "orjson.loads")


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

        target = 20.0 if name in ("form request, 10 fields", "URL request, ASCII host") else None
        pairs.append(Pair(f"evaluate: {name}", subject, baseline, repeat, target, "<= 20x orjson.loads" if target else "", "orjson.loads"))
    return pairs


def _bench_modules() -> list[Any]:
    """Every ``benchmarks/bench_*.py`` module; each defines ``pairs(quick) -> list[Pair]``."""
    folder = Path(__file__).resolve().parent
    return [importlib.import_module(p.stem) for p in sorted(folder.glob("bench_*.py"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="every target at reduced size (under 2 minutes)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    rounds = 15 if args.quick else 41
    pairs = [bench_fast_path(args.quick), *bench_elicitation(args.quick)]
    for module in _bench_modules():
        pairs.extend(module.pairs(args.quick))
    results: list[Result] = [measure_pair(pair, rounds=rounds) for pair in pairs]
    print_table(results)
    for result in results:
        if result.name.startswith("evaluate:"):
            per_second = 1_000_000 / result.subject_median_us if result.subject_median_us else 0
            print(f"  {result.name}: {per_second:,.0f} messages/s on one core")
    if args.json:
        args.json.write_text(json.dumps([r.to_dict() for r in results], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
