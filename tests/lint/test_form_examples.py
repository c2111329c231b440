"""The form-mode example captures are generated from their definition and never stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_form_example_captures_are_current() -> None:
    """`make_example_traffic.py --check --definition examples/traffic/form-scenarios.yaml` passes."""
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "make_example_traffic.py"),
            "--check",
            "--definition",
            str(ROOT / "examples" / "traffic" / "form-scenarios.yaml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
