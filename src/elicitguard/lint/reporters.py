"""Lint reporters: text for people, JSON for machines.

The text report groups findings by file, in line order, coloured when the output is a
terminal; the JSON report is the stable format documented in the README. SARIF lives in
its own module (the lint issue for real captures adds it).
"""

from __future__ import annotations

from collections import Counter
from typing import IO

import orjson
from rich.console import Console
from rich.markup import escape

from elicitguard.lint.runner import LintResult

__all__ = ["render_json", "render_text"]

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


def render_json(result: LintResult) -> bytes:
    """The ``--format json`` document."""
    document = {
        "findings": [f.to_dict() for f in result.findings],
        "errors": [e.to_dict() for e in result.errors],
        "summary": result.summary(),
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def render_text(result: LintResult, stream: IO[str], *, color: bool | None = None) -> None:
    """The ``--format text`` report: grouped by file, then a summary."""
    console = Console(
        file=stream,
        force_terminal=color,
        no_color=color is False,
        highlight=False,
        soft_wrap=True,
    )
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
