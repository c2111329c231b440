"""``elicitguard lint PATH...``: judge captured MCP traffic (JSONL or HAR) under a policy.

Findings go to stdout as text (grouped by file), JSON or SARIF 2.1.0. Options not given on
the command line come from the project's configuration (``[tool.elicitguard]`` in
pyproject.toml, ``.elicitguard.toml`` or ``.elicitguard.yaml``, found upward from the working
directory). Exit codes: 0 nothing at or above ``--fail-on``, 1 something was, 2 a usage
error (an unknown ``--select`` code among them), a policy error or an unreadable input.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import sys
from pathlib import Path
from typing import Any

from elicitguard.commands._project_config import ProjectConfig, config_for
from elicitguard.commands._terminal import use_color, verbosity
from elicitguard.errors import ElicitguardError
from elicitguard.lint.reporters import REPORTERS

__all__ = ["register", "run"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
PROGRESS_MIN_BYTES = 16 * 1024 * 1024
FAIL_ON = ("info", "low", "medium", "high", "critical", "never")
#: Hard defaults, used when neither a flag nor the project configuration gives a value.
DEFAULTS: dict[str, Any] = {
    "policy": None,
    "env": None,
    "protocol_version": None,
    "format": "text",
    "input_format": "auto",
    "server_name": None,
    "fail_on": "low",
    "select": None,
    "ignore": None,
    "baseline": None,
}
_CHOICES = {
    "format": tuple(REPORTERS),
    "fail_on": FAIL_ON,
    "input_format": ("auto", "envelope", "jsonrpc", "har"),
    "env": ("dev", "test", "prod"),
}


def register(subparsers: Any) -> None:
    """Add ``lint``."""
    lint = subparsers.add_parser(
        "lint", help="lint captured MCP traffic (JSONL or HAR)", description=__doc__
    )
    lint.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="capture files or folders"
    )
    lint.add_argument("--policy", help="policy file or builtin:NAME (default: builtin:default)")
    lint.add_argument("--env", choices=_CHOICES["env"], help="environment")
    lint.add_argument("--protocol-version", help="era for messages whose version is unknown")
    lint.add_argument("--format", choices=_CHOICES["format"], help="report format (default: text)")
    lint.add_argument(
        "--input-format",
        choices=_CHOICES["input_format"],
        help="capture format (auto: .har by extension, else sniff the first line)",
    )
    lint.add_argument(
        "--server-name", help="the server's name for captures that do not name it (raw, HAR)"
    )
    lint.add_argument(
        "--sarif-category",
        default="elicitguard",
        help="SARIF automationDetails.id prefix: one category per capture set",
    )
    lint.add_argument("--output", type=Path, help="write the report here instead of stdout")
    lint.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        help="exit 1 when a finding is at or above this severity (default: low)",
    )
    lint.add_argument("--select", help="only these rule codes (comma-separated globs)")
    lint.add_argument("--ignore", help="skip these rule codes (comma-separated globs)")
    lint.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="a previous JSON or SARIF report: its findings (by fingerprint) stay quiet",
    )
    lint.add_argument(
        "--write-baseline",
        type=Path,
        metavar="FILE",
        help="write today's findings as a baseline (a JSON report) and exit 0",
    )
    lint.add_argument("--audit-log", type=Path, help="write one audit record per decision here")
    lint.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="spread sessions over N processes (a session is never split; same report)",
    )
    lint.set_defaults(handler=run)


def _jobs(text: str) -> int:
    """``--jobs``: a whole number from 1 up."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"must be a whole number of processes, 1 or more (got {text!r})"
        raise argparse.ArgumentTypeError(msg)
    return value


def _codes(text: str | None) -> list[str]:
    return [c.strip().upper() for c in (text or "").split(",") if c.strip()]


def _resolved(args: argparse.Namespace, config: ProjectConfig) -> dict[str, Any]:
    """Each option from its flag, else the configuration, else the default; checked."""
    values: dict[str, Any] = {}
    for name, default in DEFAULTS.items():
        given = getattr(args, name, None)
        value = given if given is not None else config.settings.get(name, default)
        choices = _CHOICES.get(name)
        if value is not None and choices and value not in choices:
            msg = f"{config.source}: {name.replace('_', '-')} must be one of: {', '.join(choices)}"
            raise ElicitguardError(msg)
        values[name] = value
    if values["baseline"] is not None:
        values["baseline"] = Path(values["baseline"])
    return values


def unmatched_selectors(selectors: list[str], codes: list[str]) -> list[str]:
    """The ``--select``/``--ignore`` globs that match no rule code."""
    return [s for s in selectors if not any(fnmatch.fnmatchcase(c, s.upper()) for c in codes)]


def _suggestion(selector: str, codes: list[str]) -> list[str]:
    """The family glob of the longest prefix some codes share (``EG3X``: ``EG3*``), else
    the nearest codes."""
    prefix = selector.upper().rstrip("*?")
    while len(prefix) > 2:
        if any(code.startswith(prefix) for code in codes):
            return [f"{prefix}*"] if prefix not in codes else [prefix]
        prefix = prefix[:-1]
    return difflib.get_close_matches(selector.upper(), codes, n=3)


def _check_selectors(option: str, selectors: list[str], codes: list[str]) -> None:
    for selector in unmatched_selectors(selectors, codes):
        close = _suggestion(selector, codes)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        msg = (
            f"{option} {selector} matches no rule{hint} (codes look like EG301; "
            "a glob such as 'EG3*' selects a family; `elicitguard rules list` lists them)"
        )
        raise ElicitguardError(msg)


def _capture_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.suffix in (".jsonl", ".har") and p.is_file())
            )
        else:
            files.append(path)
    return files


def run(args: argparse.Namespace) -> int:
    """Lint the captures; the exit code says whether anything at ``--fail-on`` was found."""
    from elicitguard.audit.sink import AuditSink, open_sink
    from elicitguard.engine.engine import Engine
    from elicitguard.engine.policy import load_policy
    from elicitguard.lint.baseline import apply_baseline, read_baseline
    from elicitguard.lint.reporters import ReportOptions
    from elicitguard.lint.runner import Linter

    config = config_for(args)
    options = _resolved(args, config)
    if verbosity(args) > 0 and config.source is not None:
        print(f"elicitguard: configuration from {config.source}", file=sys.stderr)
    files = _capture_files(args.paths)
    for path in files:
        if not path.is_file():
            print(f"elicitguard: cannot open {path}: no such file", file=sys.stderr)
            return EXIT_ERROR
    if not files:
        print("elicitguard: no capture files (*.jsonl, *.har) found", file=sys.stderr)
        return EXIT_ERROR
    select, ignore = _codes(options["select"]), _codes(options["ignore"])
    policy = load_policy(options["policy"], env=options["env"], select=select, ignore=ignore)
    codes = sorted(policy.rules)
    _check_selectors("--select", select, codes)
    _check_selectors("--ignore", ignore, codes)
    baseline = read_baseline(options["baseline"]) if options["baseline"] else None
    jobs = _job_count(args, policy)
    if jobs > 1:
        try:
            result, engine = _lint_spread(policy, files, options, jobs)
        except OSError as exc:
            print(f"elicitguard: cannot read input: {exc.strerror}", file=sys.stderr)
            return EXIT_ERROR
    else:
        sink = open_sink("file", str(args.audit_log)) if args.audit_log else AuditSink(None)
        engine = Engine(policy, audit=sink, default_era=options["protocol_version"])
        progress, finish = _progress(files)
        try:
            linter = Linter(
                engine, input_format=options["input_format"], server_name=options["server_name"]
            )
            result = linter.lint_paths(files, progress)
        except OSError as exc:
            print(f"elicitguard: cannot read input: {exc.strerror}", file=sys.stderr)
            return EXIT_ERROR
        finally:
            finish()
            engine.close()
    if args.write_baseline is not None:
        args.write_baseline.write_bytes(REPORTERS["json"](result, ReportOptions()))
        if verbosity(args) >= 0:
            print(
                f"wrote {args.write_baseline}: {len(result.findings)} known findings",
                file=sys.stderr,
            )
        return EXIT_OK
    baselined = 0
    if baseline is not None:
        result, baselined = apply_baseline(result, baseline)
    failed = result.fails(options["fail_on"])
    report = REPORTERS[options["format"]](
        result,
        ReportOptions(
            policy=engine.policy,
            sarif_category=args.sarif_category,
            color=args.output is None and use_color(args, sys.stdout),
            fail_on=options["fail_on"],
            failed=failed,
            baselined=baselined,
            quiet=verbosity(args) < 0,
        ),
    )
    if args.output:
        args.output.write_bytes(report)
    else:
        sys.stdout.write(report.decode("utf-8"))
    return EXIT_FINDINGS if failed else EXIT_OK


def _job_count(args: argparse.Namespace, policy: Any) -> int:
    """``--jobs``, or 1 (said on stderr) when the run cannot be spread over processes."""
    from elicitguard.lint.parallel import note_single_job, single_job_reason

    jobs: int = args.jobs
    if jobs > 1:
        reason = single_job_reason(policy, audit_log=args.audit_log is not None)
        if reason is not None:
            note_single_job(reason)
            return 1
    return jobs


def _lint_spread(
    policy: Any, files: list[Path], options: dict[str, Any], jobs: int
) -> tuple[Any, Any]:
    """Lint with ``jobs`` worker processes (:mod:`elicitguard.lint.parallel`)."""
    from elicitguard.audit.sink import AuditSink
    from elicitguard.engine.engine import Engine
    from elicitguard.lint.parallel import Partition, lint_in_processes
    from elicitguard.lint.runner import Linter

    def make_linter(partition: Partition | None) -> Linter:
        engine = Engine(policy, audit=AuditSink(None), default_era=options["protocol_version"])
        return Linter(
            engine,
            input_format=options["input_format"],
            server_name=options["server_name"],
            partition=partition,
        )

    result, linter = lint_in_processes(make_linter, files, jobs)
    linter.engine.close()
    return result, linter.engine


def _progress(files: list[Path]) -> tuple[Any, Any]:
    """A progress bar on stderr for large inputs on a terminal; otherwise nothing."""
    total = sum(p.stat().st_size for p in files)
    if total < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TransferSpeedColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        TransferSpeedColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    )
    task = bar.add_task("linting", total=total)
    done = {"base": 0, "last": 0}
    bar.start()

    def advance(position: int) -> None:
        if position < done["last"]:
            done["base"] += done["last"]
        done["last"] = position
        bar.update(task, completed=done["base"] + position)

    return advance, bar.stop
