"""Colour and verbosity for every command: one ``--color`` flag, ``NO_COLOR``, ``FORCE_COLOR``.

Why one place: ``lint``, ``check-url`` and ``rules explain`` colour their output, and users
expect the conventions of other linters (ruff, pytest) to hold for all of them. ``--color
always|never`` wins; with ``auto`` (the default) a non-empty ``NO_COLOR`` turns colour off
(https://no-color.org), a non-empty ``FORCE_COLOR`` turns it on, and otherwise colour follows
whether the stream is a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

__all__ = ["use_color", "verbosity"]


def use_color(args: argparse.Namespace, stream: IO[str]) -> bool:
    """Whether output written to ``stream`` should be coloured."""
    choice = getattr(args, "color", None) or "auto"
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def verbosity(args: argparse.Namespace) -> int:
    """``-v`` counts up, ``-q`` counts down: 0 is the default, below 0 is quiet."""
    return int(getattr(args, "verbose", 0) or 0) - int(getattr(args, "quiet", 0) or 0)


def report_generated(args: argparse.Namespace, written: Sequence[Path], regenerate: str) -> int:
    """The end of a command that writes generated files: with ``--check``, name the stale ones
    and exit 1; otherwise say what was written (unless ``-q``) and exit 0."""
    if args.check and written:
        for path in written:
            print(f"stale: {path}", file=sys.stderr)
        print(f"run `{regenerate}` to regenerate", file=sys.stderr)
        return 1
    if verbosity(args) >= 0:
        for path in written:
            print(f"wrote {path}")
    return 0
