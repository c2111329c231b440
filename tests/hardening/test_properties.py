"""Property tests for the engine and its pure libraries (hypothesis).

Whatever arrives, the guard must answer: ``evaluate()`` returns a Decision for any JSON value
and any (mutated) elicitation message of any era under every preset; combining findings never
lowers the action; redaction is total and idempotent; URL parsing never raises and IDNA
round-trips; evaluation is deterministic. ``ELICITGUARD_HYPOTHESIS_EXAMPLES`` raises the
number of examples (scripts/hardening_full.sh sets it).
"""

from __future__ import annotations

import copy
import io
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elicitguard import Action, Decision, Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.redact import REDACTED, Redactor, redact_value
from elicitguard.audit.sink import AuditSink
from elicitguard.base.decision import Confidence, Finding, Severity
from elicitguard.base.keys import KeyRing
from elicitguard.checks.urls import parse_url
from elicitguard.engine.policy import PRESETS
from elicitguard.lint.envelopes import envelope_from_dict
from elicitguard.testing import quiet_engine

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("ELICITGUARD_HYPOTHESIS_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ERAS = ("2025-06-18", "2025-11-25", "2026-07-28")

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=30,
)


@cache
def _engine(preset: str) -> Engine:
    return quiet_engine(f"builtin:{preset}", audit=io.StringIO())


@cache
def _samples() -> tuple[dict[str, Any], ...]:
    """Every envelope of the example traffic (all eras, benign and violating)."""
    out: list[dict[str, Any]] = []
    for path in sorted((ROOT / "examples" / "traffic").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
    return tuple(out)


def _mutate(value: Any, path: list[Any], replacement: Any, delete: bool) -> Any:
    """Replace (or delete) the node that ``path`` leads to, as far as it leads."""
    value = copy.deepcopy(value)
    node = value
    for step in path[:-1]:
        if isinstance(node, dict) and node:
            node = node[sorted(node, key=str)[step % len(node)]]
        elif isinstance(node, list) and node:
            node = node[step % len(node)]
    if path and isinstance(node, dict) and node:
        key = sorted(node, key=str)[path[-1] % len(node)]
        if delete:
            del node[key]
        else:
            node[key] = replacement
    elif path and isinstance(node, list) and node:
        node[path[-1] % len(node)] = replacement
    return value


mutated_sample = st.builds(
    _mutate,
    st.sampled_from(range(10_000)).map(lambda i: _samples()[i % len(_samples())]),
    st.lists(st.integers(min_value=0, max_value=50), min_size=0, max_size=6),
    json_value,
    st.booleans(),
)


def _evaluate(preset: str, envelope: Envelope) -> Decision:
    decision = _engine(preset).evaluate(envelope)
    assert isinstance(decision, Decision)
    assert isinstance(decision.action, Action)
    return decision


@SETTINGS
@given(
    message=json_value,
    preset=st.sampled_from(sorted(PRESETS)),
    direction=st.sampled_from(list(Direction)),
    session=st.sampled_from(["p1", "p2"]),
)
def test_any_json_value_gets_a_decision(
    message: Any, preset: str, direction: Direction, session: str
) -> None:
    """Arbitrary JSON (not even an object) is judged, never raises out of evaluate()."""
    _evaluate(preset, Envelope(message, direction, side=Side.PROXY, session=session))


@SETTINGS
@given(sample=mutated_sample, preset=st.sampled_from(sorted(PRESETS)))
def test_mutated_elicitation_messages_of_every_era_get_a_decision(sample: Any, preset: str) -> None:
    """Example traffic of every era, with any node replaced or deleted, is judged."""
    if not isinstance(sample, dict) or not isinstance(sample.get("message"), (dict, list)):
        sample = {"direction": "server_to_client", "message": sample}
    try:
        envelope = envelope_from_dict(sample)
    except Exception:
        envelope = Envelope(sample.get("message"), Direction.SERVER_TO_CLIENT, side=Side.PROXY)
    _evaluate(preset, envelope)


def _finding(action: Action, code: str = "EG999") -> Finding:
    return Finding(
        code=code,
        name="x",
        severity=Severity.MEDIUM,
        confidence=Confidence.HIGH,
        action=action,
        message="m",
        pointer="",
    )


@SETTINGS
@given(
    actions=st.lists(st.sampled_from(list(Action)), max_size=6),
    extra=st.sampled_from(list(Action)),
)
def test_an_extra_finding_never_lowers_the_action(actions: list[Action], extra: Action) -> None:
    """The decision's action is monotone in its findings."""
    engine = _engine("default")
    base = engine._decision([_finding(a) for a in actions], [], [], [], 0)
    more = engine._decision([_finding(a) for a in [*actions, extra]], [], [], [], 0)
    assert more.action.rank >= base.action.rank
    assert more.action.rank >= extra.rank


SECRETISH = st.sampled_from(
    [
        "ghp_" + "R" * 36,
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
        "xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
        "password=hunter2hunter2",
    ]
)


@SETTINGS
@given(
    value=st.recursive(
        json_leaf | SECRETISH,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(["password", "token", "value", "name", "note", "x"])
                | st.text(max_size=8),
                inner,
                max_size=4,
            )
        ),
        max_leaves=20,
    )
)
def test_redaction_is_total_and_idempotent(value: Any) -> None:
    """Redacting never raises, keeps JSON-serialisable output, and a second pass changes nothing."""
    redactor = Redactor()
    once = redactor(value)
    json.dumps(once)
    assert redactor(once) == once
    assert redact_value(once) == redact_value(redact_value(once))
    if isinstance(value, dict):
        for key, inner in value.items():
            if str(key).lower() == "password" and inner is not None:
                assert once[key] == REDACTED


@SETTINGS
@given(url=st.text(max_size=200) | st.from_regex(r"\Ahttps?://[^\s]{0,80}\Z", fullmatch=True))
def test_parse_url_never_raises_and_is_deterministic(url: str) -> None:
    """Any text parses (problems are recorded, not raised) and twice gives the same result."""
    first = parse_url(url)
    assert first.raw == url
    again = parse_url(url)
    assert tuple(first) == tuple(again)
    repr(first)


labels = st.text(
    alphabet=st.characters(categories=["Ll"], max_codepoint=0x2FFF), min_size=1, max_size=12
)


@SETTINGS
@given(parts=st.lists(labels, min_size=1, max_size=3))
def test_idna_round_trip(parts: list[str]) -> None:
    """A host that IDNA-encodes decodes back to itself; parse_url sees the same host either way."""
    host = ".".join(parts) + ".com"
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return  # not a valid IDNA label: nothing to round-trip
    decoded = ascii_host.encode("ascii").decode("idna")
    # nameprep folds (ϰ -> κ): the decoded form is the fixed point of the round trip
    assert decoded.encode("idna").decode("ascii") == ascii_host
    assert decoded.encode("idna").decode("idna") == decoded
    unicode_parsed = parse_url(f"https://{host}/p")
    ascii_parsed = parse_url(f"https://{ascii_host}/p")
    assert _to_ascii(unicode_parsed.host) == _to_ascii(ascii_parsed.host)


def _to_ascii(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


@SETTINGS
@given(index=st.integers(min_value=0), preset=st.sampled_from(sorted(PRESETS)))
def test_rule_evaluation_is_deterministic(index: int, preset: str) -> None:
    """Two fresh engines judge the same traffic the same way: same action, codes and pointers."""
    samples = _samples()
    start = index % len(samples)
    window = [envelope_from_dict(s) for s in samples[start : start + 4]]

    def run() -> list[tuple[str, tuple[tuple[str, str], ...]]]:
        engine = Engine(
            load_policy(f"builtin:{preset}", environ={}),
            audit=AuditSink(io.StringIO()),
            keys=KEYS,
        )
        out = []
        for envelope in window:
            d = engine.evaluate(envelope)
            out.append((d.action.value, tuple((f.code, f.pointer) for f in d.findings)))
        return out

    assert run() == run()


KEYS = KeyRing.random()
