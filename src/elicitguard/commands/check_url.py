"""``elicitguard check-url URL``: the consent view and the findings for one URL.

For people (``--format text``: the screen a client should show) and for scripts
(``--format json``: the :class:`~elicitguard.consent.UrlView` as JSON). The URL is parsed and
judged under the policy (``--policy``, else the project's configuration), never fetched.
``--color auto|always|never`` as for every command. Exit codes: ``0`` nothing at ``warn`` or above,
``1`` a warning or a block, ``2`` a usage or policy error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from elicitguard.commands._project_config import config_for
from elicitguard.commands._terminal import use_color
from elicitguard.consent import describe_url, render_html, render_text

__all__ = ["register"]

EXIT_OK = 0
EXIT_FOUND = 1


def register(subparsers: Any) -> None:
    """Add ``check-url`` to the command line."""
    parser = subparsers.add_parser(
        "check-url",
        help="show the consent view and findings for one URL (never fetches it)",
        description=__doc__,
    )
    parser.add_argument("url", help="the URL a server would send the user to")
    parser.add_argument("--policy", default=None, help="policy file or builtin:NAME")
    parser.add_argument("--env", choices=("dev", "test", "prod"), help="environment")
    parser.add_argument(
        "--server",
        default=None,
        help="the operator's name for the asking server (a host name protects its domain)",
    )
    parser.add_argument("--message", default=None, help="the server's message to show")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Describe the URL and print it; the exit code says whether anything was found."""
    settings = config_for(args).settings
    view = describe_url(
        args.url,
        args.policy or settings.get("policy"),
        server=args.server,
        message=args.message,
        env=args.env or settings.get("env"),
    )
    if args.format == "json":
        sys.stdout.write(json.dumps(view.to_dict(), indent=2, ensure_ascii=False) + "\n")
    elif args.format == "html":
        sys.stdout.write(render_html(view))
    else:
        sys.stdout.write(render_text(view, color=use_color(args, sys.stdout)))
    found = view.blocked or any(w.level in ("danger", "warning") for w in view.warnings)
    return EXIT_FOUND if found else EXIT_OK
