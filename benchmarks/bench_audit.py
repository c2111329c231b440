"""The audit record's cost on the request path: ``python benchmarks/bench_audit.py [--quick]``.

Why: a decision on elicitation traffic writes one record, and that record was measured at
40-55 % of a form or URL decision. The target is the time the caller waits for
``AuditLog.record`` (build the record, hand it to the sink): under 5 µs. The sink writes to
a real file under a temporary directory, as ``audit.sink: file`` does; the writer's own CPU
time (the whole process's CPU per record, the sink closed and flushed) is printed beside
it, since a background writer moves work off the request path but does not make it free.

Each case is a real decision (the default policy on a ten-field form request and on a URL
request) recorded ``repeat`` times, inline (``audit.queue: 0``, the caller does everything)
and through the background writer (``audit.queue: 8192``, the default); medians of five
rounds. A round's records all fit in the queue and the writer is parked until the caller's
loop ends, so the caller's figure is the cost of queueing alone (no thread competing for the
GIL; the caller thread's own CPU time is printed beside its wall time, the steadier figure
on a loaded machine); the process CPU figure is what the whole record costs, writer included.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import form_request, url_request

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.records import AuditLog
from elicitguard.audit.sink import AuditSink, open_sink
from elicitguard.base.keys import KeyRing

TARGET_US = 5.0


def _decision(message: dict[str, object]) -> tuple[object, Envelope]:
    engine = Engine(load_policy(environ={}), audit=AuditSink(None), keys=KeyRing.random())
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}, "url": {}}}}}
    engine.evaluate(Envelope(init, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="b"))
    envelope = Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="b")
    return engine.evaluate(envelope), envelope


def _parked_job(parked: threading.Event) -> dict[str, object]:
    parked.wait()
    return {"event": "bench.start"}


def measure(name: str, message: dict[str, object], repeat: int, queue: int, rounds: int = 5) -> dict[str, float | str]:
    decision, envelope = _decision(message)
    keys = KeyRing.random()
    caller: list[float] = []
    caller_cpu: list[float] = []
    total: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for n in range(rounds + 1):
            target = str(Path(folder) / f"audit{n}.jsonl")
            sink = open_sink("file", target, queue=queue) if queue else open_sink("file", target)
            log = AuditLog(sink, keys)
            record = log.record
            parked = threading.Event()
            if queue:  # park the writer on a first job, so the caller's loop times queueing alone
                sink.submit_record(_parked_job, (parked,))
            cpu, started, own = time.process_time(), time.perf_counter(), time.thread_time()
            for _ in range(repeat):
                record(decision, envelope)  # type: ignore[arg-type]
            waited, own = time.perf_counter() - started, time.thread_time() - own
            parked.set()
            sink.close()  # flushes whatever is still queued
            spent = time.process_time() - cpu
            if n:  # the first round warms caches
                caller.append(waited / repeat * 1e6)
                caller_cpu.append(own / repeat * 1e6)
                total.append(spent / repeat * 1e6)
            lines = (Path(folder) / f"audit{n}.jsonl").read_bytes().count(b"\n")
            lines -= 1 if queue else 0
            if lines != repeat:
                raise SystemExit(f"{name}: wrote {lines} records of {repeat}")
    median = statistics.median(caller)
    return {
        "name": f"{name}, {'queue ' + str(queue) if queue else 'inline'}",
        "caller_us": round(median, 2),
        "caller_cpu_us": round(statistics.median(caller_cpu), 2),
        "process_cpu_us": round(statistics.median(total), 2),
        "verdict": "PASS" if median <= TARGET_US else "MISS",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 200 if os.environ.get("ELICITGUARD_BENCH_TINY") else 5_000 if args.quick else 20_000
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; records per round: {repeat}")
    cases = (("form request, 10 fields", form_request(10)), ("URL request, ASCII host", url_request()))
    queues = (0, 8192) if "queue" in inspect.signature(open_sink).parameters else (0,)
    for (name, message), queue in itertools.product(cases, queues):
        row = measure(name, message, repeat, queue)
        print(f"{row['name']:<40} caller {row['caller_us']:>6} µs (CPU {row['caller_cpu_us']:>6})  process CPU {row['process_cpu_us']:>6} µs  target <= {TARGET_US} µs  {row['verdict']}")


if __name__ == "__main__":
    main()
