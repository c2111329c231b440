"""Finding the data folders (``rules/``, ``policy/``, ``schema/``) in a wheel and a checkout.

A wheel carries them inside the package as ``elicitguard/_data/``; an editable install
leaves them at the top of the source tree. One function looks in both places, so that
code never depends on how it was installed.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

__all__ = ["data_dir"]

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: Literal["rules", "policy", "schema"]) -> Path:
    """The folder holding the built-in ``rules``, ``policy`` or ``schema`` files."""
    inside = _PACKAGE / "_data" / name
    if inside.is_dir():
        return inside
    checkout = _PACKAGE.parent.parent / name
    if checkout.is_dir():
        return checkout
    msg = f"elicitguard's built-in {name}/ folder is missing from this installation"
    raise FileNotFoundError(msg)
