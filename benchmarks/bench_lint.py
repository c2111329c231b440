"""Lint throughput (MB/s, messages/s) on a realistic capture, next to parse-only; peak RSS.

Why: a linter is judged by how fast it gets through a day of captured traffic, and by
whether its memory stays flat as the capture grows. The capture is generated on the fly
and streamed to a temporary file (90 % ordinary traffic, 10 % elicitation: form requests,
URL requests and their answers), seeded so runs are comparable. Each size is linted in a
fresh subprocess (``Linter.lint_paths`` with the default policy and no audit sink) which
reports its own wall time, CPU time and peak RSS (``VmHWM``; ``resource.getrusage`` where /proc is missing); the baseline is
the same file read line by line and parsed with ``orjson.loads``, also in a subprocess.

Targets: lint >= 0.25x parse-only throughput on the larger size; peak RSS of the larger
size within 20 % of the smaller one; ``lint --jobs 2`` >= 1.8x the speed of ``--jobs 1`` on the
larger size (wall time; both sides fork their workers, warm their engines and merge, as
the command does; needs two idle cores). For the ``--jobs`` rows the same traffic is spread over 64 sessions (runs of about 250
lines take turns, switching only where a request starts, so every answer is in its
request's session), since ``--jobs`` spreads sessions and never splits one; the other
rows keep one session, as they always had (64 sessions' bounded per-session state makes
the 1 GB run's RSS grow by itself). Each ``--jobs`` row also prints the workers' CPU
seconds: on a loaded machine, one job's CPU time over the busier worker's estimates the
speed-up two idle cores would give. Sizes: 10 MB and 1 GB (``--quick``: 10 MB and
100 MB; ``ELICITGUARD_BENCH_TINY=1``: 200 kB and 1 MB, for the smoke test only).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
from harness import Result
from workloads import form_request, ordinary_messages, url_request

MB = 1024 * 1024

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
path, mode = Path(sys.argv[1]), sys.argv[2]
messages = 0
if mode == "parse":
    import orjson
    started, cpu = time.perf_counter(), time.process_time()
    with path.open("rb") as stream:
        for line in stream:
            orjson.loads(line)
            messages += 1
elif mode == "lint":
    from elicitguard import Engine, load_policy
    from elicitguard.audit.sink import AuditSink
    from elicitguard.lint.runner import Linter
    engine = Engine(load_policy(environ={}), audit=AuditSink(None))
    linter = Linter(engine, input_format="envelope")  # loads lexicons, tables, lists
    # The community catalogue loads on a background thread; wait for it, so that a short
    # run's peak RSS is not taken before the load ends (it is setup, like the lexicons).
    from elicitguard.checks.secrets import load_community
    load_community()
    started, cpu = time.perf_counter(), time.process_time()  # imports and setup excluded
    result = linter.lint_paths([path])
    messages = result.messages
else:  # "jobsN": lint --jobs N (forking, the workers' setup and the merge included)
    from elicitguard import Engine, load_policy
    from elicitguard.audit.sink import AuditSink
    from elicitguard.lint.parallel import lint_in_processes
    from elicitguard.lint.runner import Linter
    policy = load_policy(environ={})
    from elicitguard.checks.secrets import load_community
    load_community()  # setup, before the workers fork (see above)
    def make(partition):
        return Linter(Engine(policy, audit=AuditSink(None)), input_format="envelope", partition=partition)
    started, cpu = time.perf_counter(), time.process_time()
    result, _ = lint_in_processes(make, [path], int(mode[4:]))
    messages = result.messages
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers_cpu = children.ru_utime + children.ru_stime
# ru_maxrss keeps the high-water mark of the pre-exec copy of the (large) parent, so the
# kernel's VmHWM of this process image is preferred; getrusage is the fallback.
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    for row in Path("/proc/self/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            rss_kb = int(row.split()[1])
except OSError:
    pass
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
    "messages": messages, "rss_kb": rss_kb, "workers_cpu": globals().get("workers_cpu")}))
"""


def sizes(quick: bool) -> tuple[int, int]:
    if os.environ.get("ELICITGUARD_BENCH_TINY"):
        return 200 * 1024, 1 * MB
    return (10 * MB, 100 * MB) if quick else (10 * MB, 1024 * MB)


SESSIONS = 64


def _elicitation_lines(rng: random.Random, request_id: int, session: bytes = b"s1") -> list[bytes]:
    """A form or URL request (server to client) and its answer (client to server)."""
    if rng.random() < 0.5:
        request = form_request(rng.choice((1, 3, 10)), request_id)
        answer = {"action": "accept", "content": {"field_0": "Ada Lovelace"}}
    else:
        request = url_request("auth.example.com", request_id)
        answer = {"action": "accept"}
    reply = {"jsonrpc": "2.0", "id": request_id, "result": answer}
    label = session.decode()
    return [
        orjson.dumps({"direction": "server_to_client", "session": label, "message": request}),
        orjson.dumps({"direction": "client_to_server", "session": label, "message": reply}),
    ]


def write_capture(path: Path, size: int, seed: int = 11, sessions: int = 1) -> int:
    """Stream an envelope JSONL capture of about ``size`` bytes; returns the message count.

    Memory stays flat: a block of ordinary traffic is generated once per 2,000 lines with
    fresh ids, and lines are written as they are made.
    """
    rng = random.Random(seed)
    written = lines = 0
    request_id = 10_000
    ordinary = ordinary_messages(2_000, seed)
    turn = switched = 0
    session = b"s1" if sessions == 1 else b"s0"
    with path.open("wb", buffering=1 << 20) as out:
        while written < size:
            for direction, frame in ordinary:
                if written >= size:
                    break
                if direction == "client_to_server" and lines - switched >= 250:
                    # a request starts here: its response follows it into the same session
                    turn, switched = turn + 1, lines
                    session = b"s%d" % (turn % sessions)
                if rng.random() < 0.05:  # two lines per elicitation: about 10 % of messages
                    request_id += 1
                    batch = _elicitation_lines(rng, request_id, session)
                else:
                    batch = [
                        b'{"direction":"'
                        + direction.encode()
                        + b'","session":"'
                        + session
                        + b'","message":'
                        + frame
                        + b"}"
                    ]
                for line in batch:
                    out.write(line + b"\n")
                    written += len(line) + 1
                    lines += 1
    return lines


def _has_jobs() -> bool:
    """True when the elicitguard under test has ``lint --jobs`` (older ones are compared too)."""
    import importlib.util

    return importlib.util.find_spec("elicitguard.lint.parallel") is not None


def _child(path: Path, mode: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), mode],
        capture_output=True,
        check=True,
        timeout=1800,
    )
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def _result(
    name: str,
    items: int,
    subject: float,
    baseline: float,
    target: float | None,
    text: str,
    extra: dict,
) -> Result:
    ratio = subject / baseline if baseline else float("inf")
    verdict = "-" if target is None else ("PASS" if ratio <= target else "MISS")
    return Result(
        name,
        items,
        1,
        round(subject, 3),
        round(subject, 3),
        round(baseline, 3),
        round(baseline, 3),
        round(ratio, 3),
        target,
        verdict,
        text,
        "parse-only",
        extra,
    )


def results(quick: bool) -> list[Result]:
    """Lint vs parse-only per size (µs per message), then the RSS growth between sizes."""
    out: list[Result] = []
    rss: list[int] = []
    with tempfile.TemporaryDirectory(prefix="eg-bench-lint-") as folder:
        for size in sizes(quick):
            path = Path(folder) / f"capture-{size}.jsonl"
            count = write_capture(path, size)
            actual = path.stat().st_size
            parse = _child(path, "parse")
            lint = _child(path, "lint")
            path.unlink()
            jobs1 = jobs2 = None
            if size == sizes(quick)[1] and _has_jobs():
                write_capture(path, size, sessions=SESSIONS)
                jobs1, jobs2 = _child(path, "jobs1"), _child(path, "jobs2")
                path.unlink()
            rss.append(int(lint["rss_kb"]))
            lint_mbs = actual / MB / lint["seconds"]
            parse_mbs = actual / MB / parse["seconds"]
            label = f"{actual / MB:,.0f} MB" if actual >= MB else f"{actual / 1024:,.0f} kB"
            extra = {
                "bytes": actual,
                "messages": count,
                "lint_mb_per_s": round(lint_mbs, 2),
                "parse_mb_per_s": round(parse_mbs, 2),
                "lint_messages_per_s": round(count / lint["seconds"]),
                "parse_messages_per_s": round(count / parse["seconds"]),
                "lint_cpu_s": round(lint["cpu"], 3),
                "lint_peak_rss_kb": int(lint["rss_kb"]),
                "parse_peak_rss_kb": int(parse["rss_kb"]),
            }
            # Throughput >= 0.25x parse-only is per-message time <= 4x parse-only.
            out.append(
                _result(
                    f"lint: {label} mix (90/10), per message",
                    count,
                    lint["seconds"] * 1e6 / count,
                    parse["seconds"] * 1e6 / count,
                    4.0,
                    ">= 0.25x parse-only MB/s",
                    extra,
                )
            )
            if jobs1 is not None and jobs2 is not None:
                speedup = jobs1["seconds"] / jobs2["seconds"]
                out.append(
                    Result(
                        f"lint --jobs 2: {label}, speed-up over one job",
                        count,
                        1,
                        round(jobs2["seconds"], 3),
                        round(jobs2["seconds"], 3),
                        round(jobs1["seconds"], 3),
                        round(jobs1["seconds"], 3),
                        round(speedup, 3),
                        1.8,
                        "PASS" if speedup >= 1.8 else "MISS",
                        ">= 1.8x one job (s, wall)",
                        "one job",
                        {"jobs2_seconds": jobs2["seconds"], "one_job_seconds": jobs1["seconds"]},
                    )
                )
                print(
                    f"  lint --jobs 2 {label}: {speedup:.2f}x --jobs 1 ({jobs2['seconds']:.2f} s vs {jobs1['seconds']:.2f} s); "
                    f"workers' CPU {jobs2['workers_cpu']:.1f} s in 2 vs {jobs1['workers_cpu']:.1f} s in 1: "
                    f"about {2 * jobs1['workers_cpu'] / jobs2['workers_cpu']:.2f}x on two idle cores if evenly split"
                )
            print(
                f"  lint {label}: {lint_mbs:,.1f} MB/s, {count / lint['seconds']:,.0f} messages/s "
                f"(parse-only {parse_mbs:,.1f} MB/s); peak RSS {int(lint['rss_kb']) / 1024:,.1f} MB"
            )
    growth = rss[1] / rss[0] if rss[0] else float("inf")
    out.append(
        Result(
            "lint: peak RSS large/small",
            1,
            1,
            float(rss[1]),
            float(rss[1]),
            float(rss[0]),
            float(rss[0]),
            round(growth, 3),
            1.2,
            "PASS" if growth <= 1.2 else "MISS",
            "RSS within 20% (kB)",
            "small size",
            {"rss_kb": rss},
        )
    )
    return out


def pairs(quick: bool) -> list:
    """No timed pairs: the lint runs are whole-file subprocesses (see :func:`results`)."""
    return []


if __name__ == "__main__":
    from harness import print_table

    print_table(results("--quick" in sys.argv))
