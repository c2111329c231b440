"""Integration tests need outside tools (node, redis-server, chromium).

On a laptop a missing tool skips the test; in CI (`ELICITGUARD_REQUIRE_INTEGRATION=1`,
set by `.ci/run`) a missing tool fails it, so a green CI never hides a skipped check.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

__all__ = ["integration_required", "require", "require_file", "require_module"]


def integration_required() -> bool:
    """True when a missing tool must fail the test instead of skipping it."""
    return os.environ.get("ELICITGUARD_REQUIRE_INTEGRATION", "") not in ("", "0", "false")


def _missing(reason: str) -> None:
    if integration_required():
        pytest.fail(f"{reason} (ELICITGUARD_REQUIRE_INTEGRATION is set, so this fails)")
    pytest.skip(reason)


def require(tool: str) -> str:
    """The path of ``tool`` on PATH; skip (or fail in CI) when it is missing."""
    path = shutil.which(tool)
    if path is None:
        _missing(f"{tool} is not installed")
        raise AssertionError  # unreachable: _missing raised
    return path


def require_module(name: str) -> None:
    """Skip (or fail in CI) when a Python module cannot be imported."""
    try:
        __import__(name)
    except ImportError:
        _missing(f"Python module {name} is not installed")


def require_file(path: Path, what: str) -> Path:
    """``path`` when it exists (a tool installed by ``.ci/run``); skip or fail otherwise."""
    if not path.exists():
        _missing(f"{what} is not installed at {path} (.ci/run installs it)")
    return path
