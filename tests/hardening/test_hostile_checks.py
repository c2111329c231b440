"""Hostile input for every registered check and for the extractor: nothing a peer sends raises.

A check that raises fails closed (EG901, block), which is safe but refuses harmless traffic
and hides what the check would have found. So every check must answer for any JSON value in
any field. The messages are the rule cases of every era (their setup replayed first, so that
answers meet their requests and retries their rounds), each mutated at one random place: a
value replaced by a lone surrogate, a huge integer, NaN or infinity, a wrong type, ``null``,
deep nesting, a very long string, or an object where a string belongs; or a key added.

Each mutated message goes through :func:`elicitguard.protocol.extract.extract`, then every
item it yields through every registered check (with the params and item kinds of the rules
that name it; checks no rule names get every item), then through the engine, whose decision
must carry no EG901. Checks get the message as the engine hands it to them, with lone
surrogates shown as U+FFFD (:mod:`elicitguard.protocol.surrogates`); the extractor gets it
both ways. ``ELICITGUARD_HYPOTHESIS_EXAMPLES`` raises the number of examples.
"""

from __future__ import annotations

import copy
import io
import math
import os
from collections.abc import Mapping
from functools import cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.corpus import case_envelopes

from elicitguard import Engine, Envelope, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.engine.context import CheckContext, registered_checks
from elicitguard.engine.rules import builtin_rules
from elicitguard.protocol.envelope import Side
from elicitguard.protocol.extract import extract
from elicitguard.protocol.items import ItemKind
from elicitguard.protocol.session import SessionState
from elicitguard.protocol.surrogates import without_lone_surrogates

EXAMPLES = int(os.environ.get("ELICITGUARD_HYPOTHESIS_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for index in range(levels):
        value = [value] if index % 2 else {"k": value}
    return value


#: Values a hostile peer can send that JSON parsers accept.
HOSTILE_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.sampled_from([2**64, -(2**63) - 1, 10**400 // 10**300, 0, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308]),
    st.sampled_from(
        [
            "\ud800",
            "a\udfffb",
            "\udc00\ud800",
            "",
            " ",
            "\x00",
            "\u202e\u2066",
            "ＭＥＴＨＯＤ",
            "x" * 70_000,
            "https://\ud800.example/",
            "mailto:\udfff",
            "%" * 500,
            "\\u0000",
            "😀" * 2000,
        ]
    ),
    st.text(max_size=30),
    st.text(alphabet=st.characters(categories=["Cs", "Co", "Cn", "Zs", "Mn"]), max_size=10),
)
HOSTILE = st.one_of(
    HOSTILE_LEAVES,
    st.lists(HOSTILE_LEAVES, max_size=4),
    st.dictionaries(st.text(max_size=8), HOSTILE_LEAVES, max_size=4),
    st.sampled_from([_deep(40), _deep(63), [[[]]], {"": {"": {}}}, [None] * 50]),
)


@cache
def bases() -> tuple[tuple[tuple[Envelope, ...], Envelope], ...]:
    """(setup envelopes, target envelope) of every rule case, grouped by session."""
    grouped: dict[str | None, list[Envelope]] = {}
    for envelope in case_envelopes():
        grouped.setdefault(envelope.session, []).append(envelope)
    return tuple((tuple(envs[:-1]), envs[-1]) for envs in grouped.values() if envs)


def project_checks() -> dict[str, Any]:
    """The checks elicitguard registers (other tests register throwaway ones that raise)."""
    return {
        name: fn
        for name, fn in registered_checks().items()
        if getattr(fn, "__module__", "").startswith("elicitguard.")
    }


@cache
def check_plan() -> tuple[tuple[str, Any, frozenset[ItemKind] | None, Mapping[str, Any]], ...]:
    """Each registered check with the item kinds and params of each rule that names it."""
    plan: list[tuple[str, Any, frozenset[ItemKind] | None, Mapping[str, Any]]] = []
    checks = project_checks()
    named: set[str] = set()
    for rule in builtin_rules():
        name = rule.spec.check
        if not isinstance(name, str) or name not in checks:
            continue
        named.add(name)
        kinds = frozenset(ItemKind(k) for k in rule.spec.applies_to.items)
        plan.append((name, checks[name], kinds or None, dict(rule.spec.params or {})))
    for name, fn in sorted(checks.items()):
        if name not in named:
            plan.append((name, fn, None, {}))
    return tuple(plan)


@cache
def engine_and_lists() -> tuple[Engine, Mapping[str, tuple[str, ...]]]:
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    return engine, engine.policy.lists


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``value`` a mutation can land (including the root's children)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, child in value.items():
            found.append((*prefix, key))
            found.extend(_paths(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.append((*prefix, index))
            found.extend(_paths(child, (*prefix, index)))
    return found


def _set(document: Any, path: tuple[Any, ...], value: Any) -> None:
    node = document
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    node = document
    for step in path:
        node = node[step]
    return node


@st.composite
def mutated(draw: st.DrawFn) -> tuple[tuple[Envelope, ...], Envelope]:
    setup, target = draw(st.sampled_from(bases()))
    message = copy.deepcopy(target.message)
    paths = _paths(message)
    how = draw(st.sampled_from(["replace", "replace", "add_key", "replace_twice"]))
    if how == "add_key" or not paths:
        containers = [p for p in paths if isinstance(_parent(message, p), dict)]
        where: tuple[Any, ...] = draw(st.sampled_from([(), *containers]))
        key = draw(
            st.sampled_from(["id", "method", "params", "result", "mode", "url", "content"])
            | st.text(max_size=6)
        )
        _parent(message, where)[key] = copy.deepcopy(draw(HOSTILE))
    else:
        for _ in range(2 if how == "replace_twice" else 1):
            paths = _paths(message)
            if not paths:
                break
            _set(message, draw(st.sampled_from(paths)), copy.deepcopy(draw(HOSTILE)))
    return setup, Envelope(
        message,
        target.direction,
        side=target.side,
        session=target.session,
        protocol_version=target.protocol_version,
    )


def _replay(setup: tuple[Envelope, ...], era: str | None) -> SessionState:
    state = SessionState()
    for envelope in setup:
        extract(envelope, state, era)
    return state


@SETTINGS
@given(mutated())
def test_no_check_raises_on_a_mutated_message(case: tuple[tuple[Envelope, ...], Envelope]) -> None:
    """extract() and every registered check answer for any JSON in any field."""
    setup, envelope = case
    era = envelope.protocol_version
    state = _replay(setup, era)
    raw_items = extract(copy.deepcopy(envelope), copy.deepcopy(state), era)  # must not raise
    assert isinstance(raw_items, list)
    # The engine hands checks the message as a client shows it (U+FFFD for a lone
    # surrogate, see protocol/surrogates.py); the engine test below covers that step.
    envelope.message = without_lone_surrogates(envelope.message)
    items = extract(envelope, state, era)
    engine, lists = engine_and_lists()
    for item in items:
        ctx = CheckContext(
            envelope,
            "prod",
            envelope.side or Side.PROXY,
            lists,
            state,
            item.era,
            services=engine.services,
        )
        for name, fn, kinds, params in check_plan():
            if kinds is not None and item.kind not in kinds:
                continue
            try:
                list(fn(item, ctx, params))
            except Exception as exc:  # pragma: no cover - the assertion names the culprit
                raise AssertionError(f"check {name} raised {exc!r} on {item.kind}") from exc


@SETTINGS
@given(mutated())
def test_the_engine_records_no_crash_on_a_mutated_message(
    case: tuple[tuple[Envelope, ...], Envelope],
) -> None:
    """Through the engine: a decision, and never EG901 (a check or the extractor raised)."""
    setup, envelope = case
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    for earlier in setup:
        engine.evaluate(earlier)
    decision = engine.evaluate(envelope)
    crashed = [f.message for f in decision.findings if f.code == "EG901"]
    assert not crashed, crashed


def test_every_registered_check_is_planned() -> None:
    """The plan covers every registered check (a new check cannot escape the property)."""
    planned = {name for name, *_ in check_plan()}
    assert planned == set(project_checks())
    assert len(planned) >= 50


def test_lone_surrogate_title_does_not_crash_a_check() -> None:
    """The held-out finding: a form whose property title is a lone surrogate."""
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {
            "message": "Your details \ud800",
            "requestedSchema": {
                "type": "object",
                "properties": {"n": {"type": "string", "title": "\ud800", "description": "\udfff"}},
            },
        },
    }
    from elicitguard.protocol.envelope import Direction

    decision = engine.evaluate(Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.PROXY))
    assert "EG901" not in [f.code for f in decision.findings]
