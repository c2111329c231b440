"""Reusing pure checks' hits (engine/verdicts.py) never changes a decision.

Every rule case message (with its setup) and every example capture is fed, twice in a row
so that the second time is answered from the cache, through two engines on the same policy
and keys: one reusing hits, one judging everything afresh. Their decisions must be the same
finding for finding.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from tests.corpus import capture_envelopes, case_envelopes

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.decision import Decision
from elicitguard.base.keys import KeyRing
from elicitguard.engine.context import is_pure, registered_checks
from elicitguard.engine.verdicts import VerdictCache, item_key
from elicitguard.protocol.items import ABSENT, Item, ItemKind
from elicitguard.testing import quiet_engine

ROOT = Path(__file__).resolve().parents[2]


def _summary(decision: Decision) -> tuple[Any, ...]:
    return (
        decision.action,
        tuple(
            (
                f.code,
                f.pointer,
                f.action,
                f.severity,
                f.message,
                f.value_fingerprint,
                f.field,
                f.fingerprint,
            )
            for f in decision.findings
        ),
        tuple((s.code, s.pointer) for s in decision.suppressed),
    )


def _engines(preset: str) -> tuple[Engine, Engine]:
    keys = KeyRing.random()
    cached = quiet_engine(f"builtin:{preset}", keys=keys)
    fresh = quiet_engine(f"builtin:{preset}", keys=keys)
    fresh.verdicts = None
    return cached, fresh


@pytest.mark.parametrize("preset", ["default", "strict", "dev"])
def test_reused_hits_decide_like_fresh_ones(preset: str) -> None:
    """Same decisions, finding for finding, with and without reuse, on every case message."""
    cached, fresh = _engines(preset)
    compared = 0
    for envelope in [*case_envelopes(), *capture_envelopes()]:
        for _ in range(2):
            copy_a = Envelope(**{f: getattr(envelope, f) for f in envelope.__slots__})  # type: ignore[attr-defined]
            copy_b = Envelope(**{f: getattr(envelope, f) for f in envelope.__slots__})  # type: ignore[attr-defined]
            assert _summary(cached.evaluate(copy_a)) == _summary(fresh.evaluate(copy_b))
            compared += 1
    assert cached.verdicts is not None
    assert cached.verdicts.hits > 100, "the second pass must be answered from the cache"
    assert compared > 2000


def test_only_declared_checks_are_pure() -> None:
    """Checks that read the session, principal or services never promise purity."""
    stateful = {
        "conformance.asked_again_after_refusal",
        "conformance.completion_known",
        "conformance.request_state_echo",
        "conformance.retry_new_id",
        "conformance.input_responses_match",
        "rate.elicitations_per_minute",
        "identity.unverified_elicitation",
        "identity.request_state_misuse",
        "identity.url_binding",
        "token.foreign_audience",
        "token.credential_to_client",
        "token.passthrough",
    }
    names = set(registered_checks())
    assert stateful <= names
    assert not any(is_pure(name) for name in stateful)
    assert any(is_pure(name) for name in names)


def _item(**changes: Any) -> Item:
    base: dict[str, Any] = {
        "kind": ItemKind.URL_REQUEST,
        "pointer": "/params",
        "era": "2025-11-25",
        "data": {"mode": "url", "url": "https://a.example/x", "message": "m"},
        "mode": "url",
        "capabilities": {"url": {}},
    }
    base.update(changes)
    return Item(**base)


def test_key_separates_everything_a_pure_check_reads() -> None:
    """Items a pure check could tell apart never share a key; identical ones do."""
    key = item_key(_item(), "srv", Side.PROXY, Direction.SERVER_TO_CLIENT)
    assert key == item_key(_item(), "srv", Side.PROXY, Direction.SERVER_TO_CLIENT)
    variants = [
        item_key(
            _item(data={"mode": "url", "url": "https://b.example/x", "message": "m"}),
            "srv",
            Side.PROXY,
            Direction.SERVER_TO_CLIENT,
        ),
        item_key(_item(era="2026-07-28"), "srv", Side.PROXY, Direction.SERVER_TO_CLIENT),
        item_key(
            _item(pointer="/result/inputRequests/a/params"),
            "srv",
            Side.PROXY,
            Direction.SERVER_TO_CLIENT,
        ),
        item_key(_item(capabilities=ABSENT), "srv", Side.PROXY, Direction.SERVER_TO_CLIENT),
        item_key(_item(capabilities=None), "srv", Side.PROXY, Direction.SERVER_TO_CLIENT),
        item_key(_item(facts={"in_error": True}), "srv", Side.PROXY, Direction.SERVER_TO_CLIENT),
        item_key(_item(), "other", Side.PROXY, Direction.SERVER_TO_CLIENT),
        item_key(_item(), "srv", Side.CLIENT, Direction.SERVER_TO_CLIENT),
        item_key(_item(schema={"type": "object"}), "srv", Side.PROXY, Direction.SERVER_TO_CLIENT),
    ]
    assert key not in variants
    assert len(set(variants)) == len(variants)


def test_a_fresh_elicitation_id_shares_the_key_but_its_shape_does_not() -> None:
    """URL requests differing only in a non-empty string id share hits; other ids do not."""

    def key(eid: Any) -> Any:
        data = {"mode": "url", "url": "https://a.example/x", "message": "m", "elicitationId": eid}
        return item_key(_item(data=data), None, Side.PROXY, Direction.SERVER_TO_CLIENT)

    assert key("e-1") == key("e-2")
    assert len({key("e-1"), key(""), key(7), key(None)}) == 4


def test_uncacheable_items_have_no_key() -> None:
    """Data JSON cannot encode (a lone surrogate) and oversized items are judged afresh."""
    assert (
        item_key(_item(data={"url": "\ud800"}), None, Side.PROXY, Direction.SERVER_TO_CLIENT)
        is None
    )
    big = {"url": "https://a.example/" + "x" * 70_000}
    assert item_key(_item(data=big), None, Side.PROXY, Direction.SERVER_TO_CLIENT) is None


def test_cache_is_bounded() -> None:
    """The oldest keys go first once the limit is reached."""
    cache = VerdictCache(limit=3)
    for index in range(5):
        cache.put(index, {})
    assert len(cache) == 3
    assert cache.get(0) is None
    assert cache.get(4) == {}


def test_a_raising_pure_check_is_not_remembered() -> None:
    """A check that raised is run again on the next identical item (EG901 each time)."""
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    rule = engine.policy.rules["EG301"]
    assert rule.pure

    def boom(*_: Any) -> Any:
        raise RuntimeError("boom")

    original = rule.check
    rule.check = boom
    try:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "url": "https://a.example/",
                "message": "m",
                "elicitationId": "e",
            },
        }
        for _ in range(2):
            decision = engine.evaluate(
                Envelope(dict(message), Direction.SERVER_TO_CLIENT, side=Side.PROXY)
            )
            assert "EG901" in {f.code for f in decision.findings}
    finally:
        rule.check = original
