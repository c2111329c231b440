"""The form rules (EG201, EG203-EG206): presets, params, both eras, and values kept out of findings.

The rules' behaviour per language is specified by their ``.cases.yaml`` files (run by
``test_rule_cases.py``); this file checks what cases cannot: the actions each side takes under
the default preset, the policy knobs, invalid params, and that no finding carries a value.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from typing import Any

import pytest

from elicitguard import Action, Direction, Engine, Envelope, Side, load_policy
from elicitguard.base.decision import Decision
from elicitguard.checks.forms import ALL_LANGUAGES, FULL_LANGUAGES
from elicitguard.engine.builtin.form_rules import settings_of
from elicitguard.engine.cases import evaluate_case
from elicitguard.engine.rules import builtin_rules, load_cases
from elicitguard.errors import RuleSpecError
from elicitguard.testing import quiet_engine

C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT
FORM_RULES = ("EG201", "EG203", "EG204", "EG205", "EG206")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
TOKEN = "ghp_" + "Zq8bX2vN4kL7mP1sR6tY9wA3cE5gH0jK2dF4"
RANDOM_KEY = "Qm7" + "xT2vL9pK4sW8nB3cR6yH1dF5gJ0aZ2eU"


def make_engine(policy: dict[str, Any] | None = None) -> Engine:
    return quiet_engine(layers=[policy] if policy else None, audit=io.StringIO())


def form_params(props: dict[str, Any], message: str = "Please fill in the form") -> dict[str, Any]:
    return {
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": props},
    }


def push_request(
    engine: Engine,
    side: Side,
    props: dict[str, Any],
    message: str = "Please fill in the form",
    rid: int = 1,
) -> Decision:
    """Handshake (2025-11-25, form capability) and one elicitation/create."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}},
    }
    engine.evaluate(Envelope(init, C2S, side=side, session="s"))
    engine.evaluate(
        Envelope(
            {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}},
            S2C,
            side=side,
            session="s",
        )
    )
    request = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "elicitation/create",
        "params": form_params(props, message),
    }
    return engine.evaluate(Envelope(request, S2C, side=side, session="s"))


def push_answer(engine: Engine, side: Side, content: dict[str, Any], rid: int = 1) -> Decision:
    answer = {"jsonrpc": "2.0", "id": rid, "result": {"action": "accept", "content": content}}
    return engine.evaluate(Envelope(answer, C2S, side=side, session="s"))


def modern_round(
    engine: Engine, side: Side, props: dict[str, Any], content: dict[str, Any]
) -> tuple[Decision, Decision]:
    """A 2026-07-28 input_required round: the result with one form, then the retry."""
    call = {"name": "configure", "arguments": {}}
    engine.evaluate(
        Envelope(
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {**call, "_meta": META}},
            C2S,
            side=side,
            session="m",
        )
    )
    result = {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {
            "resultType": "input_required",
            "inputRequests": {
                "ask": {"method": "elicitation/create", "params": form_params(props)}
            },
            "requestState": "st-opaque-5",
        },
    }
    first = engine.evaluate(Envelope(result, S2C, side=side, session="m"))
    retry = {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "tools/call",
        "params": {
            **call,
            "inputResponses": {"ask": {"action": "accept", "content": content}},
            "requestState": "st-opaque-5",
            "_meta": META,
        },
    }
    return first, engine.evaluate(Envelope(retry, C2S, side=side, session="m"))


def codes(decision: Decision) -> set[str]:
    return set(decision.codes)


# --------------------------------------------------------------------------- presets


def test_default_preset_blocks_secret_forms_and_answers_on_the_client() -> None:
    """EG201 blocks on every side; EG204 blocks on the client and redacts on the server."""
    rules = load_policy(environ={}).rules
    assert dict.fromkeys(Side, Action.BLOCK) == rules["EG201"].actions
    assert rules["EG204"].action_for(Side.CLIENT) == Action.BLOCK
    assert rules["EG204"].action_for(Side.SERVER) == Action.REDACT
    assert rules["EG203"].action_for(Side.CLIENT) == Action.WARN


@pytest.mark.parametrize("side", [Side.CLIENT, Side.SERVER])
def test_push_era_secret_form_blocks_and_answer_is_blocked_or_redacted(side: Side) -> None:
    """2025-11-25: a form asking for a token blocks; the token in the answer blocks (client) or is redacted (server)."""
    engine = make_engine()
    props = {
        "github_token": {"type": "string", "title": "GitHub token"},
        "note": {"type": "string"},
    }
    request = push_request(engine, side, props)
    assert request.action == Action.BLOCK
    assert {"EG201"} <= codes(request)
    answer = push_answer(engine, side, {"github_token": TOKEN, "note": "thanks"})
    expected = Action.BLOCK if side is Side.CLIENT else Action.REDACT
    assert expected == answer.action
    (finding,) = [f for f in answer.findings if f.code == "EG204"]
    assert finding.field == "github_token"
    assert finding.pointer == "/result/content/github_token"


@pytest.mark.parametrize("side", [Side.CLIENT, Side.SERVER])
def test_modern_era_entry_blocks_and_retry_answer_is_blocked_or_redacted(side: Side) -> None:
    """2026-07-28: the inputRequests entry blocks; the retry's answer blocks or is redacted."""
    engine = make_engine()
    props = {"schluessel": {"type": "string", "title": "API-Schlüssel"}}
    first, retry = modern_round(engine, side, props, {"schluessel": RANDOM_KEY})
    assert first.action == Action.BLOCK
    (eg201,) = [f for f in first.findings if f.code == "EG201"]
    assert eg201.pointer == "/result/inputRequests/ask/params/requestedSchema/properties/schluessel"
    expected = Action.BLOCK if side is Side.CLIENT else Action.REDACT
    assert expected == retry.action
    (eg204,) = [f for f in retry.findings if f.code == "EG204"]
    assert eg204.field == "schluessel"
    assert eg204.pointer == "/params/inputResponses/ask/content/schluessel"


# --------------------------------------------------------------------------- params


def test_languages_param_limits_the_lexicons() -> None:
    """With only English in use, a German-only field is not recognised."""
    props = {"feld": {"type": "string", "title": "Kennwort"}}
    assert "EG201" in codes(push_request(make_engine(), Side.CLIENT, props))
    english = {"rules": {"EG2*": {"params": {"languages": ["en"]}}}}
    assert "EG201" not in codes(push_request(make_engine(english), Side.CLIENT, props))


def test_extra_words_teach_a_word_and_a_harmless_phrase() -> None:
    """extra_words adds a secret word for a language, and a negative phrase hides one."""
    props = {"losung": {"type": "string", "title": "Losung"}}
    assert "EG201" not in codes(push_request(make_engine(), Side.CLIENT, props))
    taught = {"rules": {"EG201": {"params": {"extra_words": {"de": {"password": ["Losung"]}}}}}}
    assert "EG201" in codes(push_request(make_engine(taught), Side.CLIENT, props))
    ring = {"ring": {"type": "string", "title": "Token ring segment"}}
    hidden = {"rules": {"EG201": {"params": {"extra_words": {"en": {"negative": ["token ring"]}}}}}}
    assert "EG201" not in codes(push_request(make_engine(hidden), Side.CLIENT, ring))


def test_allowed_fields_silence_a_field_but_not_a_catalogue_secret() -> None:
    """An allowed field is no longer reported, and loses key-name support in answers, but a real token still counts."""
    policy = {"rules": {"EG2*": {"params": {"allowed_fields": ["session_token"]}}}}
    props = {"session_token": {"type": "string", "title": "Session token"}}
    engine = make_engine(policy)
    assert not codes(push_request(engine, Side.CLIENT, props)) & {"EG201", "EG206"}
    assert "EG204" not in codes(push_answer(engine, Side.CLIENT, {"session_token": RANDOM_KEY}))
    engine = make_engine(policy)
    push_request(engine, Side.CLIENT, props)
    assert "EG204" in codes(push_answer(engine, Side.CLIENT, {"session_token": TOKEN}))


def test_min_confidence_decides_which_verdicts_fire() -> None:
    """A weak word in a longer label (low) fires only with min_confidence low (a weak word
    that is the whole label, "Token", names the field and fires by default); a description
    alone fires by default; high drops a title-only field."""
    described = {
        "x": {
            "type": "string",
            "title": "Code",
            "description": "Enter the 6-digit code we sent by SMS",
        }
    }
    assert "EG201" in codes(push_request(make_engine(), Side.CLIENT, described))
    assert "EG201" in codes(
        push_request(make_engine(), Side.CLIENT, {"x": {"type": "string", "title": "Token"}})
    )
    weak = {"x": {"type": "string", "title": "Secret value"}}
    assert "EG201" not in codes(push_request(make_engine(), Side.CLIENT, weak))
    low = {"rules": {"EG201": {"params": {"min_confidence": "low"}}}}
    assert "EG201" in codes(push_request(make_engine(low), Side.CLIENT, weak))
    titled = {"k": {"type": "string", "title": "Clave de API"}}
    assert "EG201" in codes(push_request(make_engine(), Side.CLIENT, titled))
    high = {"rules": {"EG201": {"params": {"min_confidence": "high"}}}}
    assert "EG201" not in codes(push_request(make_engine(high), Side.CLIENT, titled))


@pytest.mark.parametrize(
    ("params", "words", "loaded"),
    [
        ({"langauges": ["en"]}, "unknown form rule param", "unknown key 'langauges'"),  # a typo
        ({"languages": ["xx"]}, "no lexicon", "no lexicon"),  # a language without a lexicon
        ({"languages": "en"}, "list of strings", "valid list"),  # not a list
        ({"extra_words": {"en": {"pasword": ["x"]}}}, "unknown class", "unknown class"),
        ({"min_confidence": "certain"}, "min_confidence", "min_confidence"),  # not a level
    ],
)
def test_invalid_params_are_a_load_error(params: dict[str, Any], words: str, loaded: str) -> None:
    """Bad params are refused when the policy compiles, naming the rule and the problem
    (never an EG901 on every form at run time)."""
    with pytest.raises(ValueError, match=words):
        settings_of(params)
    with pytest.raises(RuleSpecError, match=loaded) as info:
        make_engine({"rules": {"EG201": {"params": params}}})
    assert "EG201" in str(info.value)


def test_params_are_parsed_once_per_rule() -> None:
    """The same params object gives the same (hashable) settings object."""
    params = {"languages": ["en", "de"], "extra_words": {"de": {"password": ["Losung"]}}}
    first = settings_of(params)
    assert first is settings_of(params)
    assert hash(first) == hash(settings_of(dict(params)))


# --------------------------------------------------------------------------- cases and values


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


SECRET_CASES = [
    (rule, case)
    for rule in builtin_rules()
    if rule.spec.code in ("EG204", "EG205")
    for case in (load_cases(rule).cases if load_cases(rule) else [])
    if case.expect == "ruleid"
]


@pytest.mark.parametrize(
    ("rule", "case"), SECRET_CASES, ids=[f"{r.spec.code}::{c.note}" for r, c in SECRET_CASES]
)
def test_findings_never_carry_the_value(rule: Any, case: Any) -> None:
    """No string of the message (12 characters or more) appears in a finding's message."""
    decision = evaluate_case(case, rule.spec.code)
    values = [s for s in _strings(case.message) if len(s) >= 12]
    for finding in decision.findings:
        assert finding.value_fingerprint is None or finding.value_fingerprint not in values
        for value in values:
            assert value not in finding.message
            assert value[:12] not in finding.message or not re.search(r"[0-9]", value[:12])


def test_every_rule_has_cases_in_every_language() -> None:
    """Each form rule has ruleid and ok cases in each of its languages (the note names the
    language): EG201 in all shipped languages, EG206 (request messages) in the languages with
    a full lexicon, the others in the seven with hand-written lexicons."""
    for rule in builtin_rules():
        if rule.spec.code not in FORM_RULES:
            continue
        cases = load_cases(rule)
        assert cases is not None
        seen: Counter[tuple[str, str]] = Counter()
        for case in cases.cases:
            words = case.note.replace(":", " ").split()
            lang = next((w for w in words[:4] if w in ALL_LANGUAGES), words[1])
            seen[(lang, case.expect)] += 1
        languages = {"EG201": ALL_LANGUAGES, "EG206": FULL_LANGUAGES}.get(
            rule.spec.code, FULL_LANGUAGES[:7]
        )
        for lang in languages:
            assert seen[(lang, "ruleid")] >= 1, f"{rule.spec.code}: no ruleid case in {lang}"
            assert seen[(lang, "ok")] >= 1, f"{rule.spec.code}: no ok case in {lang}"
