"""Shared fixtures: the repository root, and an environment free of elicitguard settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up a developer's ELICITGUARD_* variables."""
    for name in list(os.environ):
        if name.startswith("ELICITGUARD_") and name != "ELICITGUARD_REQUIRE_INTEGRATION":
            monkeypatch.delenv(name)


@pytest.fixture
def root() -> Path:
    """The repository root."""
    return ROOT
