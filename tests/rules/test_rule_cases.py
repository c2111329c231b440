"""Every built-in rule is specified by its examples (semgrep's ruleid/ok, ruff's docs headings).

One test per case, ids ``<CODE>::<note>``. A rule without cases, with too few cases for an
era it applies to, or whose docs example does not trigger it, fails; a ``todo`` case that
starts passing fails too, so that it gets promoted.
"""

from __future__ import annotations

from collections import Counter

import pytest

from elicitguard.engine.cases import run_case
from elicitguard.engine.models import CaseSpec
from elicitguard.engine.rules import ENGINE_CHECK, LoadedRule, builtin_rules, load_cases
from elicitguard.protocol.requirements import REQUIREMENTS

RULES = builtin_rules()
#: Engine rules no message can trigger, and the engine test that covers each instead.
ENGINE_TESTED = {
    "EG901": "tests/engine/test_engine.py::test_a_crashing_check_fails_closed_by_default",
    "EG902": "tests/engine/test_engine.py::test_expired_exception_does_not_apply and tests/lint",
}
ALL_ERAS = ("2025-06-18", "2025-11-25", "2026-07-28")
ERA_GROUPS = {"push": ("2025-06-18", "2025-11-25"), "modern": ("2026-07-28",)}


def _cases() -> list[tuple[LoadedRule, CaseSpec]]:
    pairs: list[tuple[LoadedRule, CaseSpec]] = []
    for rule in RULES:
        cases = load_cases(rule)
        for case in cases.cases if cases else []:
            pairs.append((rule, case))
    return pairs


CASES = _cases()


@pytest.mark.parametrize(
    ("rule", "case"), CASES, ids=[f"{r.spec.code}::{c.note}" for r, c in CASES]
)
def test_case(rule: LoadedRule, case: CaseSpec) -> None:
    """The case's expectation holds (todo cases must still be failing)."""
    result = run_case(case, rule)
    if case.expect.startswith("todo"):
        assert not result.passed, f"todo case now passes: promote it to {case.expect[4:]}"
    else:
        assert result.passed, (
            f"{rule.spec.code} {'did not fire' if case.expect == 'ruleid' else 'fired'}: {case.note}"
        )


EXAMPLE_RULES = [r for r in RULES if r.spec.code not in ENGINE_TESTED]


@pytest.mark.parametrize("rule", EXAMPLE_RULES, ids=[r.spec.code for r in EXAMPLE_RULES])
def test_docs_example_triggers_the_rule(rule: LoadedRule) -> None:
    """The example on the rule's docs page really triggers it."""
    example = rule.spec.docs.example
    if example.expect.startswith("todo"):
        pytest.fail("a docs example must be a ruleid case")
    assert run_case(example, rule).fired


def _eras_of(rule: LoadedRule) -> tuple[str, ...]:
    eras: list[str] = []
    for name in rule.spec.applies_to.eras:
        if name == "all":
            return ALL_ERAS
        eras.extend(ERA_GROUPS.get(name, (name,)))
    return tuple(eras)


@pytest.mark.parametrize("rule", RULES, ids=[r.spec.code for r in RULES])
def test_enough_cases_per_era(rule: LoadedRule) -> None:
    """At least two ruleid and two ok cases for each era the rule applies to."""
    cases = load_cases(rule)
    assert cases is not None, f"{rule.spec.code} has no {rule.cases_path.name}"
    if rule.spec.check == ENGINE_CHECK:
        counts = Counter(c.expect for c in cases.cases)
        assert counts["ok"] >= 2
        return
    for era in _eras_of(rule):
        counts = Counter(c.expect for c in cases.cases if (c.protocol_version or "") == era)
        assert counts["ruleid"] >= 2, f"{rule.spec.code}: fewer than two ruleid cases for {era}"
        assert counts["ok"] >= 2, f"{rule.spec.code}: fewer than two ok cases for {era}"


def test_case_notes_are_unique_per_rule() -> None:
    """The note is the test id."""
    for rule in RULES:
        cases = load_cases(rule)
        notes = Counter(c.note for c in cases.cases) if cases else Counter()
        assert [n for n, k in notes.items() if k > 1] == [], rule.spec.code


def test_cited_requirements_exist() -> None:
    """Every requirement id a rule cites is in the requirements table."""
    missing = {
        (r.spec.code, rid) for r in RULES for rid in r.spec.requirements if rid not in REQUIREMENTS
    }
    assert set() == missing


def test_codes_and_names_are_unique() -> None:
    """Codes are never reused; names too."""
    assert len(RULES) == len({r.spec.code for r in RULES})
    assert len(RULES) == len({r.spec.name for r in RULES})
