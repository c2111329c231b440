"""A hit may lower its rule's action, never raise it (EG303's OAuth ``code`` warns)."""

from __future__ import annotations

import io
from typing import Any

from elicitguard.audit.sink import AuditSink
from elicitguard.base.decision import Action, Severity
from elicitguard.base.keys import KeyRing
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import load_policy
from elicitguard.protocol.envelope import Direction, Envelope, Side

CODE_URL = "https://app.example.com/oauth/callback?code=Xb7Lq2Wn9Rt4Vm8Kc3Zp6Yd1&state=Hj5Gf0Ds9Ak2"
KEY_URL = "https://api.example.com/connect?api_key=eMkVpizrisHe87FLK5U6MPXPaoRI0Z8L"


def _eg303(url: str, policy: dict[str, Any] | None = None) -> tuple[Action, Severity]:
    engine = Engine(
        load_policy(extra_layers=[policy] if policy else None, environ={}),
        audit=AuditSink(io.StringIO()),
        keys=KeyRing.random(),
        default_era="2026-07-28",
    )
    params = {"mode": "url", "message": "Continue", "url": url}
    message = {"jsonrpc": "2.0", "id": 5, "result": {"resultType": "input_required", "inputRequests": {"a": {"method": "elicitation/create", "params": params}}}}
    decision = engine.evaluate(Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.CAPTURE, session="s"))
    (finding,) = [f for f in decision.findings if f.code == "EG303"]
    return finding.action, finding.severity


def test_oauth_code_warns_where_a_credential_blocks() -> None:
    """The default policy blocks EG303; its OAuth-code hits warn with medium severity."""
    assert _eg303(KEY_URL) == (Action.BLOCK, Severity.HIGH)
    assert _eg303(CODE_URL) == (Action.WARN, Severity.MEDIUM)


def test_the_param_sets_the_oauth_code_action() -> None:
    """A policy can make OAuth codes block like any credential."""
    policy = {"rules": {"EG303": {"params": {"oauth_code_action": "block"}}}}
    assert _eg303(CODE_URL, policy)[0] == Action.BLOCK


def test_a_hit_never_raises_the_rules_action() -> None:
    """With EG303 set to log, the OAuth-code hit's block does not raise it."""
    policy = {"rules": {"EG303": {"action": "log", "params": {"oauth_code_action": "block"}}}}
    assert _eg303(CODE_URL, policy)[0] == Action.LOG
