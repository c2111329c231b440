"""``elicitguard rules list|explain|test|docs``: the rules, their documentation and their cases.

``explain CODE`` renders the rule's page for a terminal (headings, lists and code through
rich) and writes it as plain Markdown when the output is not a terminal, so that
``elicitguard rules explain EG306 > EG306.md`` gives a Markdown file. ``test`` runs every
case of the built-in rules (or of the pack at PATH); ``docs`` regenerates docs/rules.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path
from typing import Any

import orjson

from elicitguard.commands._terminal import report_generated, use_color, verbosity

__all__ = ["register"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


def register(subparsers: Any) -> Any:
    """Add ``rules`` and its subcommands; return its subparsers for modules that add more."""
    rules = subparsers.add_parser("rules", help="list, explain and test rules", description=__doc__)
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, metavar="COMMAND")
    rl = rules_sub.add_parser("list", help="list the rules")
    rl.add_argument("--format", choices=("text", "json"), default="text")
    rl.add_argument("--pack", type=Path, action="append", default=[], help="also load this pack")
    rl.set_defaults(handler=_list)
    re_ = rules_sub.add_parser("explain", help="show a rule's documentation")
    re_.add_argument("code")
    re_.add_argument("--pack", type=Path, action="append", default=[], help="also load this pack")
    re_.set_defaults(handler=_explain)
    rt = rules_sub.add_parser("test", help="run the cases of a rule pack (built-in when no PATH)")
    rt.add_argument("path", nargs="?", type=Path)
    rt.set_defaults(handler=_test)
    rd = rules_sub.add_parser("docs", help="generate docs/rules pages from the rule files")
    rd.add_argument("--output", type=Path, default=Path("docs/rules"))
    rd.add_argument("--check", action="store_true", help="fail when a page is stale")
    rd.set_defaults(handler=_docs)
    return rules_sub


def _all_rules(packs: list[Path]) -> list[Any]:
    from elicitguard.engine.rules import builtin_rules, load_pack

    rules = builtin_rules()
    for pack in packs:
        rules.extend(load_pack(pack))
    return rules


def _list(args: argparse.Namespace) -> int:
    rules = _all_rules(args.pack)
    if args.format == "json":
        listing: list[dict[str, Any]] = [
            {
                "code": r.spec.code,
                "name": r.spec.name,
                "severity": r.spec.severity.value,
                "action": r.spec.action,
                "summary": r.spec.summary,
                "requirements": r.spec.requirements,
            }
            for r in rules
        ]
        sys.stdout.write(orjson.dumps(listing, option=orjson.OPT_INDENT_2).decode() + "\n")
        return EXIT_OK
    for r in sorted(rules, key=lambda r: r.spec.code):
        print(
            f"{r.spec.code}  {r.spec.name:<40} {r.spec.severity.value:<8} {r.spec.action:<6} {r.spec.summary}"
        )
    return EXIT_OK


def _is_terminal(args: argparse.Namespace) -> bool:
    """Render for a terminal: stdout is one, or colour was forced."""
    if getattr(args, "color", None) == "always" or os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _explain(args: argparse.Namespace) -> int:
    from elicitguard.engine.docs import render_rule_page

    by_code = {r.spec.code: r for r in _all_rules(args.pack)}
    code = args.code.upper()
    if code not in by_code:
        close = difflib.get_close_matches(code, list(by_code), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        print(f"elicitguard: unknown rule {args.code}{hint}", file=sys.stderr)
        return EXIT_ERROR
    page = render_rule_page(by_code[code])
    if not _is_terminal(args):
        sys.stdout.write(page if page.endswith("\n") else page + "\n")
        return EXIT_OK
    from rich.console import Console
    from rich.markdown import Markdown

    color = use_color(args, sys.stdout)
    console = Console(
        force_terminal=True if color else None,
        color_system="auto" if color else None,
        highlight=False,
    )
    console.print(Markdown(page, code_theme="ansi_dark" if color else "bw"))
    return EXIT_OK


def _test(args: argparse.Namespace) -> int:
    from elicitguard.engine.cases import run_pack

    rules, results = run_pack(args.path)
    failed = [r for r in results if not r.passed and not r.todo]
    promoted = [r for r in results if r.todo and r.passed]
    for result in [*failed, *promoted]:
        state = "PROMOTE" if result.todo else "FAIL"
        wanted = "fire" if result.expect == "ruleid" else "not fire"
        if result.todo:
            wanted = "stay a known " + ("miss" if result.expect == "todoruleid" else "false alarm")
        print(f"{state} {result.label} (expected the rule to {wanted}) [{result.file}]")
    todo = sum(1 for r in results if r.todo)
    bad = len(failed) + len(promoted)
    if verbosity(args) >= 0 or bad:
        print(f"{len(results) - bad} passed, {bad} failed, {todo} todo ({len(rules)} rules)")
    return EXIT_FINDINGS if bad else EXIT_OK


def _docs(args: argparse.Namespace) -> int:
    from elicitguard.engine.docs import write_docs
    from elicitguard.engine.rules import builtin_rules

    changed = write_docs(builtin_rules(), args.output, check=args.check)
    return report_generated(args, changed, "elicitguard rules docs")
