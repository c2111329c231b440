"""Shared pieces of the example tests: paths, and running a process until it prints a URL."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PY = sys.executable
ELICITGUARD = str(Path(sys.executable).with_name("elicitguard"))


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without ELICITGUARD_* settings (a user's shell would have none)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELICITGUARD_")}
    env.update(extra)
    return env


@contextlib.contextmanager
def serving(args: list[str], *, cwd: Path | None = None, timeout: float = 30.0) -> Iterator[str]:
    """Start ``args``; yield the first stdout line starting with ``http``; stop it after."""
    process = subprocess.Popen(
        args, cwd=cwd, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None
    try:
        deadline = time.monotonic() + timeout
        line = b""
        while not line.startswith(b"http"):
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([process.stdout], [], [], max(remaining, 0))
            if not ready or process.poll() is not None:
                raise AssertionError(f"{args[:3]} did not print its URL")
            line = process.stdout.readline()
        yield line.decode().strip()
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
