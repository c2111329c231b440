"""The ``elicitguard`` command line.

Exit codes: 0 when nothing at or above ``--fail-on`` was found (or the command succeeded),
1 when something was, 2 for usage errors, policy errors and input that cannot be opened.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import io
import json
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson
import yaml

from elicitguard._version import __version__
from elicitguard.errors import ElicitguardError, PolicyError

__all__ = ["main"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
PROGRESS_MIN_BYTES = 16 * 1024 * 1024


def _codes(text: str | None) -> list[str]:
    return [c.strip() for c in (text or "").split(",") if c.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="elicitguard",
        description="A security policy engine for MCP elicitation.",
    )
    parser.add_argument("--version", action="version", version=f"elicitguard {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    lint = sub.add_parser("lint", help="lint captured MCP traffic (JSONL or HAR)")
    lint.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="capture files or folders"
    )
    _policy_args(lint)
    lint.add_argument("--protocol-version", help="era for messages whose version is unknown")
    lint.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    lint.add_argument(
        "--input-format",
        choices=("auto", "envelope", "jsonrpc", "har"),
        default="auto",
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
        choices=("info", "low", "medium", "high", "critical", "never"),
        default="low",
        help="exit 1 when a finding is at or above this severity (default: low)",
    )
    lint.add_argument("--select", help="only these rule codes (comma-separated globs)")
    lint.add_argument("--ignore", help="skip these rule codes (comma-separated globs)")
    lint.add_argument("--audit-log", type=Path, help="write one audit record per decision here")
    lint.add_argument("--color", choices=("auto", "always", "never"), default="auto")

    rules = sub.add_parser("rules", help="list, explain and test rules")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True)
    rl = rules_sub.add_parser("list", help="list the rules")
    rl.add_argument("--format", choices=("text", "json"), default="text")
    rl.add_argument("--pack", type=Path, action="append", default=[], help="also load this pack")
    re_ = rules_sub.add_parser("explain", help="show a rule's documentation")
    re_.add_argument("code")
    re_.add_argument("--pack", type=Path, action="append", default=[])
    rt = rules_sub.add_parser("test", help="run the cases of a rule pack (built-in when no PATH)")
    rt.add_argument("path", nargs="?", type=Path)
    rd = rules_sub.add_parser("docs", help="generate docs/rules pages from the rule files")
    rd.add_argument("--output", type=Path, default=Path("docs/rules"))
    rd.add_argument("--check", action="store_true", help="fail when a page is stale")

    policy = sub.add_parser("policy", help="validate, show and describe policies")
    policy_sub = policy.add_subparsers(dest="policy_command", required=True)
    pv = policy_sub.add_parser("validate", help="load a policy and report every error in it")
    pv.add_argument("file")
    pv.add_argument("--env", choices=("dev", "test", "prod"))
    ps = policy_sub.add_parser("show", help="show the resolved policy")
    ps.add_argument("file", nargs="?", default="builtin:default")
    ps.add_argument("--env", choices=("dev", "test", "prod"))
    psc = policy_sub.add_parser("schema", help="write the JSON Schemas of rule and policy files")
    psc.add_argument("--output", type=Path, default=Path("schema"))
    psc.add_argument("--check", action="store_true", help="fail when a schema is stale")
    _register_extensions(sub)
    return parser


def _register_extensions(sub: Any) -> None:
    """Commands that live in their own modules under :mod:`elicitguard.commands`.

    Each module has ``register(subparsers)``, which adds its parser and sets a ``handler``
    default: ``handler(args) -> int``.
    """
    from elicitguard import commands

    for module in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"{commands.__name__}.{module.name}").register(sub)


def _policy_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default=None, help="policy file or builtin:NAME")
    parser.add_argument("--env", choices=("dev", "test", "prod"), help="environment")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = _parser().parse_args(argv)
    try:
        handler = getattr(args, "handler", None)
        if handler is not None:
            return int(handler(args))
        if args.command == "lint":
            return _lint(args)
        if args.command == "rules":
            return _rules(args)
        return _policy(args)
    except PolicyError as exc:
        print(f"elicitguard: policy error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ElicitguardError as exc:
        print(f"elicitguard: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


# --- lint -----------------------------------------------------------------------------------


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


def _lint(args: argparse.Namespace) -> int:
    from elicitguard.audit.sink import AuditSink, open_sink
    from elicitguard.engine.engine import Engine
    from elicitguard.engine.policy import load_policy
    from elicitguard.lint.reporters import render_json, render_text
    from elicitguard.lint.runner import Linter

    files = _capture_files(args.paths)
    for path in files:
        if not path.is_file():
            print(f"elicitguard: cannot open {path}: no such file", file=sys.stderr)
            return EXIT_ERROR
    if not files:
        print("elicitguard: no capture files (*.jsonl, *.har) found", file=sys.stderr)
        return EXIT_ERROR
    policy = load_policy(
        args.policy, env=args.env, select=_codes(args.select), ignore=_codes(args.ignore)
    )
    sink = open_sink("file", str(args.audit_log)) if args.audit_log else AuditSink(None)
    engine = Engine(policy, audit=sink, default_era=args.protocol_version)
    progress, finish = _progress(files)
    try:
        linter = Linter(engine, input_format=args.input_format, server_name=args.server_name)
        result = linter.lint_paths(files, progress)
    except OSError as exc:
        print(f"elicitguard: cannot read input: {exc.strerror}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        finish()
        engine.close()
    out: IO[str]
    if args.format in ("json", "sarif"):
        if args.format == "sarif":
            from elicitguard.lint.sarif import render_sarif

            data = render_sarif(result, engine.policy, category=args.sarif_category)
        else:
            data = render_json(result)
        if args.output:
            args.output.write_bytes(data)
        else:
            sys.stdout.write(data.decode("utf-8"))
    else:
        color = {"always": True, "never": False}.get(args.color)
        if args.output:
            buffer = io.StringIO()
            render_text(result, buffer, color=False if color is None else color)
            args.output.write_text(buffer.getvalue(), encoding="utf-8")
        else:
            out = sys.stdout
            render_text(result, out, color=color)
    return EXIT_FINDINGS if result.fails(args.fail_on) else EXIT_OK


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


# --- rules ----------------------------------------------------------------------------------


def _all_rules(packs: list[Path]) -> list[Any]:
    from elicitguard.engine.rules import builtin_rules, load_pack

    rules = builtin_rules()
    for pack in packs:
        rules.extend(load_pack(pack))
    return rules


def _rules(args: argparse.Namespace) -> int:
    if args.rules_command == "list":
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
        else:
            for r in sorted(rules, key=lambda r: r.spec.code):
                print(
                    f"{r.spec.code}  {r.spec.name:<40} {r.spec.severity.value:<8} {r.spec.action:<6} {r.spec.summary}"
                )
        return EXIT_OK
    if args.rules_command == "explain":
        from elicitguard.engine.docs import render_rule_page

        by_code = {r.spec.code: r for r in _all_rules(args.pack)}
        code = args.code.upper()
        if code not in by_code:
            close = difflib.get_close_matches(code, list(by_code), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            print(f"elicitguard: unknown rule {args.code}{hint}", file=sys.stderr)
            return EXIT_ERROR
        print(render_rule_page(by_code[code]))
        return EXIT_OK
    if args.rules_command == "test":
        return _rules_test(args.path)
    from elicitguard.engine.docs import write_docs
    from elicitguard.engine.rules import builtin_rules

    changed = write_docs(builtin_rules(), args.output, check=args.check)
    if args.check and changed:
        for path in changed:
            print(f"stale: {path}", file=sys.stderr)
        print("run `elicitguard rules docs` to regenerate", file=sys.stderr)
        return EXIT_FINDINGS
    for path in changed:
        print(f"wrote {path}")
    return EXIT_OK


def _rules_test(path: Path | None) -> int:
    from elicitguard.engine.cases import run_pack

    rules, results = run_pack(path)
    failed = [r for r in results if not r.passed and not r.todo]
    promoted = [r for r in results if r.todo and r.passed]
    for result in [*failed, *promoted]:
        state = "PROMOTE" if result.todo else "FAIL"
        wanted = "fire" if result.expect == "ruleid" else "not fire"
        if result.todo:
            wanted = "stay a known " + ("miss" if result.expect == "todoruleid" else "false alarm")
        print(f"{state} {result.label} (expected the rule to {wanted}) [{result.file}]")
    todo = sum(1 for r in results if r.todo)
    print(
        f"{len(results) - failed.__len__() - promoted.__len__()} passed, "
        f"{len(failed) + len(promoted)} failed, {todo} todo ({len(rules)} rules)"
    )
    return EXIT_FINDINGS if failed or promoted else EXIT_OK


# --- policy ---------------------------------------------------------------------------------


def _policy(args: argparse.Namespace) -> int:
    from elicitguard.engine.policy import load_policy

    if args.policy_command == "validate":
        policy = load_policy(args.file, env=args.env)
        print(
            f"ok: {policy.name} (revision {policy.revision}, {len(policy.rules)} rules, env {policy.environment})"
        )
        return EXIT_OK
    if args.policy_command == "show":
        policy = load_policy(args.file, env=args.env)
        print(yaml.safe_dump(_policy_view(policy), sort_keys=False, allow_unicode=True), end="")
        return EXIT_OK
    return _schemas(args.output, check=args.check)


def _policy_view(policy: Any) -> dict[str, Any]:
    return {
        "name": policy.name,
        "revision": policy.revision,
        "environment": policy.environment,
        "mode": policy.mode,
        "on_error": policy.on_error,
        "on_block": {"client": policy.on_block_client, "push_error_code": policy.push_error_code},
        "limits": {k: getattr(policy.limits, k) for k in policy.limits.__dataclass_fields__},
        "lists": {k: list(v) for k, v in policy.lists.items()},
        "exceptions": [
            {
                "rules": e.spec.rules,
                "where": e.spec.where.model_dump(exclude_none=True),
                "reason": e.spec.reason,
                "expires": str(e.spec.expires) if e.spec.expires else None,
            }
            for e in policy.exceptions
        ],
        "rules": {
            code: {
                "severity": rule.severity.value,
                "actions": {
                    side.value: (a.value if a else "off") for side, a in rule.actions.items()
                },
                **({"params": rule.params} if rule.params else {}),
            }
            for code, rule in policy.rules.items()
        },
        "sources": [layer.file for layer in policy.layers],
    }


def schema_documents() -> dict[str, dict[str, Any]]:
    """The JSON Schemas of the file formats, generated from the models."""
    from elicitguard.engine.models import CaseFile, PolicySpec, RuleSpec

    return {
        "policy.schema.json": PolicySpec.model_json_schema(by_alias=True),
        "rule.schema.json": RuleSpec.model_json_schema(by_alias=True),
        "cases.schema.json": CaseFile.model_json_schema(by_alias=True),
    }


def _schemas(folder: Path, *, check: bool) -> int:
    stale: list[Path] = []
    for name, document in schema_documents().items():
        path = folder / name
        text = json.dumps(document, indent=2, sort_keys=True) + "\n"
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            stale.append(path)
            if not check:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if check and stale:
        for path in stale:
            print(f"stale: {path}", file=sys.stderr)
        print("run `elicitguard policy schema` to regenerate", file=sys.stderr)
        return EXIT_FINDINGS
    for path in stale:
        print(f"wrote {path}")
    return EXIT_OK
