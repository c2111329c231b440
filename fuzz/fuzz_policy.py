"""Fuzz target: policy YAML text through the loader (yaml, validation, compilation)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import atheris
from _common import EXPECTED, main

with atheris.instrument_imports():
    from elicitguard.engine.policy import load_policy

FOLDER = Path(tempfile.mkdtemp(prefix="eg-fuzz-policy-"))
FILE = FOLDER / "policy.yaml"


def test_one_input(data: bytes) -> None:
    """Any text loads or is refused with a PolicyError; nothing else escapes."""
    FILE.write_bytes(data)
    try:
        load_policy(os.fspath(FILE), environ={})
    except EXPECTED:
        return


if __name__ == "__main__":
    main(test_one_input)
