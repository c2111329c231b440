"""Helpers for testing code that uses elicitguard, and for testing rule packs.

As :mod:`structlog.testing` does for logging, this module gives tests the three things they
build by hand otherwise:

* :func:`quiet_engine`: an engine that reads nothing from the environment (no
  ``ELICITGUARD_ENV``, no key file), keys of its own, and an audit log that goes nowhere;
* :func:`capture_records`: the audit records an engine writes, parsed, while a block runs
  (they went through the redaction boundary and the renderer, exactly as a sink writes them);
* :func:`run_cases`: a rule pack's cases, as ``elicitguard rules test`` runs them.

Example::

    from elicitguard.testing import capture_records, quiet_engine

    engine = quiet_engine(layers=[{"rules": {"EG306": {"action": "off"}}}])
    with capture_records(engine) as records:
        engine.evaluate(envelope)
    assert [f["code"] for f in records[0]["findings"]] == ["EG301"]
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import orjson

from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.engine.cases import CaseResult, run_pack
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy, load_policy

__all__ = ["capture_records", "quiet_engine", "run_cases"]


def quiet_engine(
    policy: Policy | str | os.PathLike[str] | None = None,
    *,
    layers: list[dict[str, Any]] | None = None,
    env: str | None = None,
    keys: KeyRing | None = None,
    audit: IO[str] | None = None,
    **engine_options: Any,
) -> Engine:
    """An engine for tests: isolated from the process environment, quiet unless asked.

    ``policy`` is a compiled :class:`Policy`, a preset (``"builtin:strict"``) or a path
    (default: ``builtin:default``); ``layers`` are policy documents merged on top, as a
    user's file would be. Records go to ``audit`` when given (a ``StringIO``), else
    nowhere; use :func:`capture_records` to look at them. Other keyword arguments go to
    :class:`Engine` (``store``, ``default_era``).
    """
    if not isinstance(policy, Policy):
        policy = load_policy(policy, env=env, extra_layers=layers, environ={})
    elif layers or env:
        msg = "layers and env apply when quiet_engine loads the policy, not to a compiled one"
        raise TypeError(msg)
    return Engine(
        policy,
        audit=AuditSink(audit),
        keys=keys if keys is not None else KeyRing.random(),
        **engine_options,
    )


class _ParsedLines(io.TextIOBase):
    """A text stream that parses each complete JSON line written to it into ``records``."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        super().__init__()
        self._records = records
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            if line.strip():
                self._records.append(orjson.loads(line))
        return len(text)


@contextlib.contextmanager
def capture_records(engine: Engine) -> Iterator[list[dict[str, Any]]]:
    """The audit records ``engine`` writes inside the block, as dicts, in order.

    The engine's sink is swapped for one that parses what it renders (after redaction),
    and put back afterwards; records written before or after the block are not captured.
    """
    records: list[dict[str, Any]] = []
    previous = engine.audit.sink
    engine.audit.sink = AuditSink(cast(IO[str], _ParsedLines(records)))
    try:
        yield records
    finally:
        engine.audit.sink = previous


def run_cases(pack: str | os.PathLike[str] | None = None) -> list[CaseResult]:
    """Run a rule pack's cases (the built-in rules when ``pack`` is ``None``).

    Every result has ``passed``; a test asserts ``[r.label for r in results if not
    r.passed] == []`` to see which case failed.
    """
    _, results = run_pack(Path(pack) if pack is not None else None)
    return results
