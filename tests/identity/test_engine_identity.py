"""The identity rules inside the engine: ordinary traffic stays on the fast path."""

from __future__ import annotations

import io

from elicitguard import Direction, Engine, Envelope, Side, Transport
from elicitguard.identity.principal import Principal
from elicitguard.identity.vault import CredentialVault
from elicitguard.testing import quiet_engine

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _engine(*layers: dict[str, object]) -> Engine:
    return quiet_engine(layers=list(layers), audit=io.StringIO())


def _request(
    headers: dict[str, str] | None = None, meta: dict[str, object] | None = None
) -> Envelope:
    params: dict[str, object] = {"name": "orders", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return Envelope(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
        Direction.CLIENT_TO_SERVER,
        side=Side.PROXY,
        transport=Transport.HTTP,
        headers=headers or {},
    )


def test_ordinary_requests_take_the_fast_path() -> None:
    """A plain request with ordinary headers builds no item under the default policy."""
    engine = _engine()
    decision = engine.evaluate(_request({"content-type": "application/json", ":path": "/mcp"}))
    assert decision.fast_path
    assert engine.evaluate(_request(meta={"progressToken": 3})).fast_path


def test_identity_claims_leave_the_fast_path() -> None:
    """An X-User-Id header or an identity _meta key is judged (EG502)."""
    engine = _engine()
    decision = engine.evaluate(_request({"x-user-id": "alice"}))
    assert decision.codes == ("EG502",)
    assert engine.evaluate(_request(meta={"user": "bob"})).codes == ("EG502",)


def test_verified_principal_that_agrees_is_not_reported() -> None:
    """A _meta user that equals the verified subject is harmless."""
    engine = _engine()
    envelope = _request(meta={"user_id": "alice"})
    envelope.principal = Principal("https://auth.example.com", "alice")
    assert engine.evaluate(envelope).codes == ()


def test_rules_off_means_no_ordinary_extraction() -> None:
    """With the ordinary-traffic rules off the plan is inactive: nothing is even looked at."""
    engine = _engine(
        {"rules": {c: {"action": "off"} for c in ("EG502", "EG602", "EG603", "EG604")}}
    )
    assert not engine._needs.active
    assert engine.evaluate(_request({"x-user-id": "alice"})).fast_path


def test_server_messages_need_a_vault_or_the_catalogue() -> None:
    """EG603 looks at results only with a non-empty vault, or when asked to scan all."""
    result = Envelope(
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ok"}]}},
        Direction.SERVER_TO_CLIENT,
        side=Side.SERVER,
    )
    engine = _engine()
    assert engine.evaluate(result).fast_path
    vault = CredentialVault()
    engine.services["vault"] = vault
    assert engine.evaluate(result).fast_path
    vault.register("third-party-token-123")
    assert not engine.evaluate(result).fast_path
    scanning = _engine({"rules": {"EG603": {"params": {"catalogue": True}}}})
    assert not scanning.evaluate(result).fast_path
