"""Unicode normalisation tricks on rule inputs: each must still be caught.

An attacker who knows the rules hides a word or a token behind full-width letters,
zero-width or bidi characters, soft hyphens or combining marks, or swaps a letter for a
look-alike from another script. Each trick below is refused (blocked) by the default
policy, and the decision is audited.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing

S2C = Direction.SERVER_TO_CLIENT
C2S = Direction.CLIENT_TO_SERVER
BIND = "?eg_bind=Zx8Qm2Lp9Vt4Rk7Wn3Yc6Hd1"
TOKEN = "ghp_" + "Zq8bX2vN4kL7mP1sR6tY9wA3cE5gH0jK2dF4"


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def form(key: str, title: str | None = None) -> tuple[Direction, dict[str, Any]]:
    prop: dict[str, Any] = {"type": "string"}
    if title is not None:
        prop["title"] = title
    schema = {"type": "object", "properties": {key: prop}}
    return S2C, {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Details", "requestedSchema": schema},
    }


def url(target: str) -> tuple[Direction, dict[str, Any]]:
    return S2C, {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Connect", "url": target, "elicitationId": "e1"},
    }


def answer(note: str) -> list[tuple[Direction, dict[str, Any]]]:
    return [
        form("note", "Notes"),
        (
            C2S,
            {"jsonrpc": "2.0", "id": 5, "result": {"action": "accept", "content": {"note": note}}},
        ),
    ]


def evaluate(
    messages: list[tuple[Direction, dict[str, Any]]],
) -> tuple[tuple[str, ...], str, list[dict[str, Any]]]:
    stream = io.StringIO()
    engine = Engine(load_policy(environ={}), audit=AuditSink(stream), keys=KeyRing.random())
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
        },
    }
    engine.evaluate(Envelope(init, C2S, side=Side.PROXY, session="s"))
    engine.evaluate(
        Envelope(
            {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}},
            S2C,
            side=Side.PROXY,
            session="s",
        )
    )
    decision = None
    for direction, message in messages:
        decision = engine.evaluate(Envelope(message, direction, side=Side.PROXY, session="s"))
    assert decision is not None
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    return decision.codes, decision.action.value, records


@pytest.mark.parametrize(
    ("messages", "code"),
    [
        ([form(fullwidth("password"))], "EG201"),  # full-width field name
        ([form("pass\u200bword")], "EG201"),  # zero-width space inside the key
        ([form("f1", "Pass\u00adword")], "EG201"),  # soft hyphen inside the title
        ([form("f1", "API ke\u0301y")], "EG201"),  # combining accent on a letter
        ([url("https://p\u0430ypal.com/login" + BIND)], "EG404"),  # Cyrillic а in a brand
        ([url("https://paypal\uff0ecom.evil.example/" + BIND)], "EG405"),  # full-width dot
        ([url("https://example.com/\u202egnp.exe" + BIND)], "EG405"),  # right-to-left override
        ([url(fullwidth("http") + "://example.com/" + BIND)], "EG302"),  # full-width scheme
        (answer(TOKEN[:10] + "\u200b" + TOKEN[10:]), "EG204"),  # token split by a zero-width space
        (answer(fullwidth(TOKEN)), "EG204"),  # token in full-width letters
    ],
)
def test_unicode_trick_is_refused_and_audited(
    messages: list[tuple[Direction, dict[str, Any]]], code: str
) -> None:
    """The trick does not hide the violation: the rule fires, the message is blocked, a record says so."""
    codes, action, records = evaluate(messages)
    assert code in codes
    assert action == "block"
    assert any(f["code"] == code for f in records[-1]["findings"])
    assert TOKEN[6:20] not in json.dumps(records)
