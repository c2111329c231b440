"""Every message the project already has examples of, for tests that replay them all.

The rule cases (each with the setup messages its expectation needs, in its own session)
and the example captures: tests that compare two ways of judging a message (verdict reuse,
the fast route) run both over all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from elicitguard import Envelope, Side
from elicitguard.engine.cases import build_envelopes
from elicitguard.engine.rules import builtin_rules, load_cases
from elicitguard.lint.envelopes import envelope_from_dict

ROOT = Path(__file__).resolve().parents[1]


def case_envelopes() -> Iterator[Envelope]:
    """Each rule case's setup messages and message, one session per case."""
    for rule in builtin_rules():
        cases = load_cases(rule)
        for index, case in enumerate(cases.cases if cases else []):
            if case.message is None:
                continue
            session = f"{rule.spec.code}-{index}"
            for setup in build_envelopes(case):
                yield Envelope(
                    setup.message,
                    setup.direction,
                    side=Side.PROXY,
                    session=session,
                    server=setup.server,
                    protocol_version=setup.protocol_version,
                )
            yield Envelope(
                case.message,
                case.direction,
                side=Side(case.side) if case.side else Side.PROXY,
                session=session,
                protocol_version=case.protocol_version,
            )


def capture_envelopes() -> Iterator[Envelope]:
    """Every line of the example captures in ``examples/traffic/``, in order."""
    for path in sorted((ROOT / "examples" / "traffic").glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            if line.strip():
                yield envelope_from_dict(orjson.loads(line), raw=line)
