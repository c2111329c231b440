"""mypy --strict and ruff are part of the test suite, so CI cannot skip them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    assert path is not None, (
        f"{name} is not installed next to {sys.executable}; pip install -e '.[test]'"
    )
    return path


def test_mypy_strict_is_clean() -> None:
    """The package type-checks under mypy --strict."""
    result = subprocess.run(
        [_tool("mypy"), "--strict", "src"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-4000:]


def test_ruff_is_clean() -> None:
    """ruff check and ruff format --check pass."""
    check = subprocess.run([_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout[-4000:]
    fmt = subprocess.run(
        [_tool("ruff"), "format", "--check", "src"], cwd=ROOT, capture_output=True, text=True
    )
    assert fmt.returncode == 0, fmt.stdout[-4000:]
