"""`elicitguard lint --jobs N`: the same report, byte for byte, and the same exit code as one job.

The bundled captures (envelope, raw JSON-RPC and HAR) and a generated capture that
interleaves many sessions (each bundled envelope capture replayed as its own session, plus
lines that belong to no session) are linted with one and with several processes; text,
JSON and SARIF reports must be identical.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from elicitguard.cli import main

TRAFFIC = Path(__file__).resolve().parents[2] / "examples" / "traffic"


def _interleaved(tmp_path: Path) -> Path:
    """Every bundled envelope capture as sessions of one file, their lines interleaved."""
    sessions: list[list[str]] = []
    for number, capture in enumerate(sorted(TRAFFIC.glob("*.jsonl"))):
        for copy in range(2):  # the same conversation twice, as two sessions
            lines = []
            for line in capture.read_text().splitlines():
                value = json.loads(line)
                value["session"] = f"{capture.stem}-{copy}-{number}"
                lines.append(json.dumps(value))
            sessions.append(lines)
    out: list[str] = []
    while any(sessions):
        for lines in sessions:
            if lines:
                out.append(lines.pop(0))
        out.append("{not json")  # a line that belongs to no session
    out.append(json.dumps({"direction": "client_to_server", "message": {}, "session": 7}))
    path = tmp_path / "interleaved.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


def _lint(paths: list[Path], fmt: str, jobs: int, out: Path, *extra: str) -> tuple[int, bytes]:
    """Lint with ``jobs`` processes; several jobs run the CLI in a fresh process, since
    forking this one (threads of earlier tests included) is not what a user's run does."""
    argv = ["lint", *map(str, paths), "--format", fmt, "--jobs", str(jobs), "--output", str(out)]
    if jobs == 1:
        code = main([*argv, *extra])
    else:
        command = [sys.executable, "-m", "elicitguard", *argv, *extra]
        code = subprocess.run(command, check=False, timeout=600).returncode
    return code, out.read_bytes()


@pytest.mark.parametrize(("fmt", "jobs"), [("text", 2), ("json", 3), ("sarif", 2)])
def test_jobs_give_the_report_of_one_job(tmp_path: Path, fmt: str, jobs: int) -> None:
    paths = [TRAFFIC, _interleaved(tmp_path)]
    one = _lint(paths, fmt, 1, tmp_path / "one")
    many = _lint(paths, fmt, jobs, tmp_path / "many")
    assert one[0] == 1  # the bundled violations fail the default threshold
    assert many == one


def test_jobs_on_clean_traffic_exit_zero_as_one_job(tmp_path: Path) -> None:
    benign = sorted(TRAFFIC.glob("*-benign.jsonl"))
    one = _lint(benign, "json", 1, tmp_path / "one")
    assert _lint(benign, "json", 2, tmp_path / "many") == one
    assert one[0] == 0


def test_an_audit_log_keeps_the_run_in_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = TRAFFIC / "2025-11-25-violations.jsonl"
    one = _lint([capture], "json", 1, tmp_path / "one")
    log = tmp_path / "audit.jsonl"
    argv = ["lint", str(capture), "--format", "json", "--jobs", "2", "--audit-log", str(log)]
    assert main([*argv, "--output", str(tmp_path / "many")]) == one[0]  # stays in-process
    assert (tmp_path / "many").read_bytes() == one[1]
    assert "linting in one process: --audit-log" in capsys.readouterr().err
    assert log.read_text().strip()


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_jobs_must_be_a_positive_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["lint", str(TRAFFIC), "--jobs", value])
    assert stop.value.code == 2
    assert "--jobs" in capsys.readouterr().err


def _disguised(tmp_path: Path) -> Path:
    """Sessions written every way a line's bytes can show or hide its session: first or last
    key, spaced, repeated (the parser keeps the last), spelled with a ``\\u`` escape, only
    nested inside the message, not a string, and lines that fail to parse."""
    lines: list[str] = []
    for capture in sorted(TRAFFIC.glob("*.jsonl")):
        for number, line in enumerate(capture.read_text().splitlines()):
            value = json.loads(line)
            message = json.dumps(value["message"])
            label = capture.stem  # a conversation stays in its session (EG504 spans sessions)
            direction = json.dumps(value["direction"])
            lines += [
                f'{{"direction":{direction},"session":"{label}","message":{message}}}',
                f'{{ "session" : "{label}-spaced" , "direction" : {direction}, "message": {message} }}',
                f'{{"direction":{direction},"message":{message},"ts":"t","session":"{label}-last"}}',
                f'{{"session":"{label}-decoy","direction":{direction},"message":{message},'
                f'"session":"{label}"}}',
                f'{{"direction":{direction},"sess\\u0069on":"{label}","message":{message}}}',
                f'{{"direction":{direction},"session":"{label}","message":{message},'
                f'"sess\\u0069on":"{label}-escaped"}}',
                f'{{"direction":{direction},"message":{{"session":"{label}",'
                f'"inner":{message}}},"ts":"t"}}',
                f'{{"direction":{direction},"session":"{label}-cut","message":{message}',
                f'{{"direction":{direction},"session":{number},"message":{message}}}',
            ]
    path = tmp_path / "disguised.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("jobs", [2, 3])
def test_jobs_read_sessions_from_bytes_as_the_parser_does(tmp_path: Path, jobs: int) -> None:
    """Whether a worker reads a line's session from its bytes or parses it, the report is
    one job's: no session is split, no line is judged twice or lost, each error reported once."""
    paths = [_disguised(tmp_path)]
    one = _lint(paths, "json", 1, tmp_path / "one")
    many = _lint(paths, "json", jobs, tmp_path / "many")
    assert json.loads(one[1])["findings"]  # the disguises are judged, not skipped
    assert many == one


def test_sessions_are_dealt_in_turn_then_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers that see the same sessions in the same order agree on every owner: the first
    ones dealt in turn (an even spread), the rest by hash once the table is full."""
    from elicitguard.lint import parallel

    monkeypatch.setattr(parallel, "DEALT_SESSIONS", 4)
    workers = [parallel.Partition(index, 3) for index in range(3)]
    labels = [f"s{n % 9}" for n in range(40)]
    for label in labels:
        owners = [w for w in workers if w.owns("f\x00", label)]
        assert len(owners) == 1
        assert owners[0].owns_hint(b"f\x00", label.encode())
    assert [workers[0].owns("f\x00", f"s{n}") for n in range(4)] == [True, False, False, True]
    assert all(len(w.dealt) == 4 for w in workers)


_FORK_PROBE = """
import sys, threading
from multiprocessing import context
seen = []
real = context.ForkContext.Pool
def pool(self, *args, **kwargs):
    seen.append(sorted(thread.name for thread in threading.enumerate()))
    return real(self, *args, **kwargs)
context.ForkContext.Pool = pool
from elicitguard.cli import main
code = main(sys.argv[1:])
print("THREADS", seen, "CODE", code)
"""


def test_the_workers_fork_warm_from_a_process_with_one_thread(tmp_path: Path) -> None:
    """The parent warms up before the fork (the workers inherit the loaded data) and does it
    in its own thread: a loader thread alive at the fork would leave its lock held in
    every worker."""
    out = tmp_path / "report.txt"
    argv = ["lint", str(TRAFFIC), "--jobs", "2", "--output", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", _FORK_PROBE, *argv], capture_output=True, check=False, timeout=120
    )
    assert "THREADS [['MainThread']] CODE 1" in done.stdout.decode(), done.stderr.decode()
