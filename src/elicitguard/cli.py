"""The ``elicitguard`` command line: one parser, built from the command modules.

Every command lives in a module of :mod:`elicitguard.commands` with
``register(subparsers)``, which adds its parser and sets ``handler`` (``handler(args) ->
int``, the exit code). :data:`COMMANDS` lists them in the order ``--help`` shows them: a new
command is one module and one line there. A module that adds a subcommand to a command
group (``rules``, ``policy``) is one line in :data:`SUBCOMMANDS`: its ``register`` receives
the group's subparsers (the group's own ``register`` returns them).

Every command also takes the shared options ``-q/--quiet``, ``-v/--verbose``, ``--color
auto|always|never`` (``NO_COLOR`` and ``FORCE_COLOR`` are honoured under ``auto``),
``--config FILE`` and ``--isolated``, before or after its name.

Exit codes: 0 when nothing at or above ``--fail-on`` was found (or the command succeeded),
1 when something was, 2 for usage errors, policy errors and input that cannot be opened.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from elicitguard._version import __version__
from elicitguard.commands._help import PlainHelpFormatter
from elicitguard.commands.policy import schema_documents
from elicitguard.errors import ElicitguardError, PolicyError

__all__ = ["COMMANDS", "SUBCOMMANDS", "build_parser", "entry", "main", "schema_documents"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

#: Modules of :mod:`elicitguard.commands` that add a top-level command, in ``--help`` order.
COMMANDS: tuple[str, ...] = (
    "lint",
    "check_url",
    "rules",
    "policy",
    "proxy",
    "serve",
    "audit",
    "keys",
    "init",
    "completion",
)
#: ``(group, module)``: modules that add a subcommand to a group's subparsers.
SUBCOMMANDS: tuple[tuple[str, str], ...] = (("rules", "rules_new"),)

FIRST_STEPS = """\
first steps:
  elicitguard init                     write a starter .elicitguard.yaml policy, a
                                       pre-commit hook and a CI workflow here
  elicitguard lint captures/           lint your captured traffic (exit 1: findings)
  elicitguard rules explain EG306      why a rule fires and how to fix it
  elicitguard check-url URL            what a user would see for one URL
  elicitguard COMMAND --help           the options of one command
"""


def _shared_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """The options every command takes, at the top level and after a command's name.

    Below the top level their default is ``SUPPRESS``: a subcommand's parser then never
    overwrites what was given before the command (``elicitguard --color always lint``).
    """

    def default(value: Any) -> Any:
        return value if top else argparse.SUPPRESS

    group = parser.add_argument_group("shared options")
    group.add_argument(
        "-q", "--quiet", action="count", default=default(0), help="say less (repeatable)"
    )
    group.add_argument(
        "-v", "--verbose", action="count", default=default(0), help="say more (repeatable)"
    )
    group.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default=default("auto"),
        help="colour the output (auto: on a terminal, unless NO_COLOR is set or FORCE_COLOR is)",
    )
    group.add_argument(
        "--no-color",
        dest="color",
        action="store_const",
        const="never",
        default=default("auto"),
        help="same as --color never",
    )
    group.add_argument(
        "--config",
        metavar="FILE",
        default=default(None),
        help="configuration file (pyproject.toml, .elicitguard.toml or a policy YAML) "
        "instead of the one found from the working directory upward",
    )
    group.add_argument(
        "--isolated",
        action="store_true",
        default=default(False),
        help="ignore every configuration file",
    )


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser: plain-words help and the shared options.

    A command group named without its subcommand (``elicitguard rules``) prints its help,
    which lists the subcommands, instead of only "the following arguments are required".
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", PlainHelpFormatter)
        super().__init__(*args, **kwargs)
        _shared_options(self, top=False)

    def error(self, message: str) -> NoReturn:
        subcommands = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
        if subcommands and message.startswith("the following arguments are required"):
            names = {str(a.metavar or a.dest) for a in subcommands}
            if any(name in message for name in names):
                self.print_help(sys.stderr)
                self.exit(EXIT_ERROR, f"\n{self.prog}: name a command (see above)\n")
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line (``elicitguard completion`` also generates scripts from it)."""
    parser = argparse.ArgumentParser(
        prog="elicitguard",
        description="A security policy engine for MCP elicitation.",
        epilog=FIRST_STEPS,
        formatter_class=PlainHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"elicitguard {__version__}")
    _shared_options(parser, top=True)
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", title="commands", parser_class=CommandParser
    )
    groups: dict[str, Any] = {}
    for name in COMMANDS:
        module = importlib.import_module(f"elicitguard.commands.{name}")
        returned = module.register(sub)
        if returned is not None:
            groups[name] = returned
    for group, name in SUBCOMMANDS:
        importlib.import_module(f"elicitguard.commands.{name}").register(groups[group])
    return parser


#: How long a serving process's exit waits for a background load of the community
#: catalogue before it leaves without the interpreter's teardown.
SERVING_EXIT_WAIT = 1.0


def entry() -> NoReturn:
    """The console script: :func:`main`, then exit with its code.

    A proxy told to stop loads the community catalogue at the lowest CPU priority, which a
    busy machine starves: the exit would wait for it (see ``wait_for_community_load``)
    for up to a minute. When that load is still running :data:`SERVING_EXIT_WAIT` after
    the command returns, the audit records still held are written and the process leaves
    at once, without the teardown that could crash under the native thread. Only the
    console script does this: a program that embeds elicitguard keeps the full wait.
    """
    from elicitguard.audit.sink import close_open_sinks
    from elicitguard.checks.secrets._community import polite_load_still_running

    code = main()
    if polite_load_still_running(SERVING_EXIT_WAIT):
        close_open_sinks()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        sys.stdout.write(parser.format_help())
        return EXIT_ERROR
    args.root_parser = parser
    try:
        return int(handler(args))
    except PolicyError as exc:
        print(f"elicitguard: policy error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ElicitguardError as exc:
        print(f"elicitguard: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
