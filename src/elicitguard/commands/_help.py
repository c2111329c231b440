"""``--help`` in plain words: the command docstrings without their Sphinx markup.

Why: each command module's docstring is both its API documentation (reStructuredText, with
````code```` and ``:class:`~x.Y``` roles) and its ``--help`` description. A terminal should
show ``elicitguard check-url URL``, not the markup around it, so the help formatter strips
roles, literals and the ``::`` that opens a literal block, and keeps the layout.
"""

from __future__ import annotations

import argparse
import re

__all__ = ["PlainHelpFormatter", "plain"]

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``([^`]+)``")
_EMPHASIS = re.compile(r"(?<![\w*])\*\*?([^*\s][^*]*?)\*\*?(?![\w*])")
_LITERAL_BLOCK = re.compile(r"(\S)\s*::$", re.MULTILINE)


def plain(text: str) -> str:
    """``text`` without reStructuredText inline markup."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = _LITERAL.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    return _LITERAL_BLOCK.sub(r"\1:", text)


class PlainHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps descriptions as written (paragraphs, examples) but without the markup."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain(text))

    def _expand_help(self, action: argparse.Action) -> str:
        return plain(super()._expand_help(action))
