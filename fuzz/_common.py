"""Shared by the fuzz targets: the expected (documented) refusals, and the runner glue.

A target calls the code under test with fuzzer bytes; an exception from ``EXPECTED`` is a
clean refusal (a frame error, a policy error with a message), anything else is a finding.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import atheris

with atheris.instrument_imports():
    import elicitguard  # noqa: F401 - instrument the package before the targets import it
    from elicitguard.errors import ElicitguardError

EXPECTED: tuple[type[BaseException], ...] = (ElicitguardError,)


def main(test_one_input: Callable[[bytes], None]) -> None:
    """Run one target under libFuzzer (arguments as libFuzzer takes them)."""
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
