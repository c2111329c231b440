"""Warming up loads lazy data without touching the caller's engine."""

from __future__ import annotations

import io
import subprocess
import sys

from elicitguard import Engine, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing


def test_warm_up_leaves_the_engine_as_it_was() -> None:
    """No session, counter, audit line or cached verdict of this engine changes."""
    stream = io.StringIO()
    engine = Engine(load_policy(environ={}), audit=AuditSink(stream), keys=KeyRing.random())
    counters = dict(engine.audit.counters)
    engine.warm_up()
    assert engine.audit.counters == counters
    assert len(engine.store) == 0  # type: ignore[arg-type]
    assert engine.verdicts is not None
    assert len(engine.verdicts) == 0
    assert stream.getvalue() == ""


def test_warm_up_loads_the_public_suffix_list() -> None:
    """In a fresh process, warming up is what loads the list (not the first URL request)."""
    code = (
        "from elicitguard import Engine, load_policy\n"
        "from elicitguard.audit.sink import AuditSink\n"
        "from elicitguard.checks.domains import _psl\n"
        "engine = Engine(load_policy(environ={}), audit=AuditSink(None))\n"
        "assert _psl._psl.cache_info().currsize == 0\n"
        "engine.warm_up()\n"
        "assert _psl._psl.cache_info().currsize == 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_warm_up_never_raises() -> None:
    """A check that fails during warm-up only means the first real message pays."""
    engine = Engine(load_policy(environ={}), audit=AuditSink(None), keys=KeyRing.random())
    rule = engine.policy.rules["EG301"]
    original = rule.check

    def boom(*_: object) -> object:
        raise RuntimeError("boom")

    rule.check = boom
    try:
        engine.warm_up()
    finally:
        rule.check = original
