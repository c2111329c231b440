"""Lint reporters: one table, :data:`REPORTERS`, from ``--format`` to the function that writes it.

Why a table: the command line, the documentation and the tests name the formats from one
place, and a new format is one entry. Every reporter takes the result and a
:class:`ReportOptions` and returns the report's bytes. The text report groups findings by
file, in line order, coloured when asked, and ends with what the exit code means and what
to do next; the JSON report is the stable format documented in the README; SARIF 2.1.0 for
code scanning is written by :mod:`elicitguard.lint.sarif`.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import orjson
from rich.console import Console
from rich.markup import escape

from elicitguard.lint.runner import LintResult

__all__ = ["REPORTERS", "ReportOptions", "render_json", "render_text"]

_SEVERITY_STYLE = {
    "critical": "bold red",
    "high": "red",
    "medium": "yellow",
    "low": "cyan",
    "info": "dim",
}


def _where(file: str, line: int | None, entry: int | None, event: int | None) -> str:
    """``file:12`` for a line, ``file entry 3 event 1`` for a HAR location."""
    if entry is not None:
        return f"{file} entry {entry}" + (f" event {event}" if event is not None else "")
    return f"{file}:{line}" if line is not None else file


def _order(line: int | None, entry: int | None) -> int:
    return line if line is not None else (entry if entry is not None else 0)


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """What a reporter may need besides the result.

    ``policy`` is the compiled policy (SARIF lists its rules); ``color`` colours the text
    report; ``fail_on`` and ``failed`` let the text report say what the exit code means;
    ``baselined`` counts the findings a baseline left out; ``quiet`` keeps the text report
    to the findings and the summary line.
    """

    policy: Any = None
    sarif_category: str = "elicitguard"
    color: bool = False
    fail_on: str = "low"
    failed: bool = False
    baselined: int = 0
    quiet: bool = False


def render_json(result: LintResult) -> bytes:
    """The ``--format json`` document."""
    document = {
        "findings": [f.to_dict() for f in result.findings],
        "errors": [e.to_dict() for e in result.errors],
        "summary": result.summary(),
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def render_text(
    result: LintResult,
    stream: IO[str],
    *,
    color: bool | None = None,
    options: ReportOptions | None = None,
) -> None:
    """The ``--format text`` report: grouped by file, then a summary and what to do next."""
    console = Console(
        file=stream,
        force_terminal=color,
        no_color=color is False,
        highlight=False,
        soft_wrap=True,
    )
    _findings_by_file(result, console)
    _summary(result, console, options or ReportOptions())


def _findings_by_file(result: LintResult, console: Console) -> None:
    by_file: dict[str, list[tuple[int, str]]] = {}
    for item in result.findings:
        f = item.finding
        style = _SEVERITY_STYLE.get(f.severity.value, "")
        where = _where(item.file, item.line, item.entry, item.event)
        text = (
            f"  [bold]{escape(where)}[/bold] [{style}]{f.code} {f.severity.value}[/{style}]"
            f" ({f.action.value}) {escape(f.message)}"
        )
        if f.pointer:
            text += f" [dim]at {escape(f.pointer)}[/dim]"
        if item.method:
            text += f" [dim]in {escape(item.method)}[/dim]"
        by_file.setdefault(item.file, []).append((_order(item.line, item.entry), text))
    for error in result.errors:
        where = _where(error.file, error.line, error.entry, error.event)
        text = f"  [bold]{escape(where)}[/bold] [magenta]error[/magenta] {escape(error.message)}"
        by_file.setdefault(error.file, []).append((_order(error.line, error.entry), text))
    for file in sorted(by_file):
        console.print(f"[underline]{escape(file)}[/underline]")
        for _, text in sorted(by_file[file], key=lambda pair: pair[0]):
            console.print(text)


def _summary(result: LintResult, console: Console, options: ReportOptions) -> None:
    summary = result.summary()
    codes = Counter(f.finding.code for f in result.findings)
    by_code = ", ".join(f"{code} x{count}" for code, count in sorted(codes.items()))
    severities = ", ".join(f"{k}: {v}" for k, v in summary["by_severity"].items() if v)
    console.print(
        f"[bold]{summary['messages']} messages, {summary['findings']} findings"
        f"{' (' + severities + ')' if severities else ''}, {len(result.errors)} errors[/bold]"
    )
    if by_code:
        console.print(f"by rule: {by_code}")
    if summary["unknown_era"]:
        console.print(
            f"[yellow]{summary['unknown_era']} messages had an unknown protocol era: "
            "version-specific rules skipped them (pass --protocol-version)[/yellow]"
        )
    if options.baselined:
        console.print(f"{options.baselined} known findings left out by the baseline")
    if not options.quiet:
        _next_steps(result, console, options)


def _next_steps(result: LintResult, console: Console, options: ReportOptions) -> None:
    """What the exit code means and what to try next: a newcomer's first run ends here."""
    if options.failed:
        first = min(result.findings, key=lambda f: -f.finding.severity.rank).finding.code
        console.print(
            f"[bold]exit 1[/bold]: findings at or above --fail-on {options.fail_on} "
            "(expected when a capture plants violations, as the bundled *-violations "
            "captures do)."
        )
        console.print(
            f"next: `elicitguard rules explain {first}` says why a rule fires and how to fix "
            "it; `--format sarif --output elicitguard.sarif` for code scanning; "
            "`--baseline FILE` to accept today's findings; `--fail-on never` to report only."
        )
    if result.errors:
        console.print(
            "[magenta]errors[/magenta] are lines that could not be judged (the rest of the "
            "file still was); they do not change the exit code."
        )


def _text(result: LintResult, options: ReportOptions) -> bytes:
    buffer = io.StringIO()
    render_text(result, buffer, color=options.color, options=options)
    return buffer.getvalue().encode("utf-8")


def _json(result: LintResult, options: ReportOptions) -> bytes:
    return render_json(result)


def _sarif(result: LintResult, options: ReportOptions) -> bytes:
    from elicitguard.lint.sarif import render_sarif

    return render_sarif(result, options.policy, category=options.sarif_category)


#: ``--format`` name to reporter: ``reporter(result, options) -> bytes``.
REPORTERS: dict[str, Callable[[LintResult, ReportOptions], bytes]] = {
    "text": _text,
    "json": _json,
    "sarif": _sarif,
}
