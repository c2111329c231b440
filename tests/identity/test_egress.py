"""The egress guard in real httpx calls to a local server, and the vault behind EG603."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import httpx
import pytest
from tests.identity.asgi_server import serve_asgi
from tests.identity.jwt_support import AUDIENCE, Signer
from tests.integration_support import require_module

from elicitguard import Direction, Engine, Envelope, Side
from elicitguard.errors import PassthroughBlocked
from elicitguard.identity.egress import AsyncGuardedTransport, EgressGuard, GuardedTransport
from elicitguard.identity.principal import Principal, use_principal
from elicitguard.identity.tokens import token_fingerprint
from elicitguard.identity.vault import CredentialVault
from elicitguard.testing import quiet_engine

CLIENT_TOKEN = "mcp-client-token-0123456789abcdef"
OUR_AS = Signer("ours")
GITHUB_AS = Signer("github")


class ThirdParty:
    """An API on loopback that records the Authorization headers it receives."""

    def __init__(self) -> None:
        self.seen: list[str | None] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope["headers"])
        auth = headers.get(b"authorization")
        self.seen.append(auth.decode() if auth is not None else None)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b'{"ok": true}'})


@pytest.fixture
def api() -> Any:
    """The third party's API, served by uvicorn on 127.0.0.1."""
    require_module("uvicorn")
    app = ThirdParty()
    with serve_asgi(app) as url:
        yield url, app


def _engine(out: io.StringIO, *, mode: str = "enforce") -> Engine:
    return quiet_engine(layers=[{"identity": {"audience": AUDIENCE}, "mode": mode}], audit=out)


def _alice(engine: Engine) -> Principal:
    return Principal(
        "https://auth.example.com",
        "alice",
        audience=(AUDIENCE,),
        token_fingerprint=token_fingerprint(engine.keys, CLIENT_TOKEN),
    )


def test_passthrough_is_blocked_before_the_call_leaves(api: Any) -> None:
    """The client's own token never reaches the third party (EG601)."""
    url, app = api
    out = io.StringIO()
    engine = _engine(out)
    guard = EgressGuard(engine)
    client = httpx.Client(transport=GuardedTransport(guard))
    with use_principal(_alice(engine)), client, pytest.raises(PassthroughBlocked) as info:
        client.get(url + "/user", headers={"Authorization": f"Bearer {CLIENT_TOKEN}"})
    assert info.value.code == "EG601"
    assert CLIENT_TOKEN not in str(info.value)
    assert app.seen == []
    record = json.loads(out.getvalue().strip().splitlines()[-1])
    assert [f["code"] for f in record["findings"]] == ["EG601"]
    assert CLIENT_TOKEN not in out.getvalue()


def test_a_token_from_the_third_partys_own_server_goes_through(api: Any) -> None:
    """A token the third party's authorization server issued is what should be used."""
    url, app = api
    engine = _engine(io.StringIO())
    guard = EgressGuard(engine)
    github_token = GITHUB_AS.token(aud="https://api.github.example", iss="https://github.example")
    with use_principal(_alice(engine)), httpx.Client(transport=GuardedTransport(guard)) as client:
        response = client.get(url + "/user", headers={"Authorization": f"Bearer {github_token}"})
    assert response.status_code == 200
    assert [f"Bearer {github_token}"] == app.seen


def test_any_token_issued_for_this_server_is_blocked(api: Any) -> None:
    """Bob's token for this server is refused too, with or without a current principal."""
    url, app = api
    guard = EgressGuard(_engine(io.StringIO()))
    bobs = OUR_AS.token(sub="bob", aud=AUDIENCE)
    with (
        httpx.Client(transport=GuardedTransport(guard)) as client,
        pytest.raises(PassthroughBlocked),
    ):
        client.post(url + "/jobs", headers={"X-Access-Token": bobs}, json={})
    assert app.seen == []


def test_token_in_the_query_string_is_blocked(api: Any) -> None:
    """AU-07 holds for egress calls too (EG604)."""
    url, app = api
    guard = EgressGuard(_engine(io.StringIO()))
    client = httpx.Client(transport=GuardedTransport(guard))
    with client, pytest.raises(PassthroughBlocked) as info:
        client.get(url + "/me", params={"access_token": "EAACEdEose0cBA1234567890"})
    assert info.value.code == "EG604"
    assert app.seen == []


def test_async_transport(api: Any) -> None:
    """The async transport checks the same way."""
    url, app = api
    engine = _engine(io.StringIO())
    guard = EgressGuard(engine)

    async def run() -> int:
        transport = AsyncGuardedTransport(guard)
        async with httpx.AsyncClient(transport=transport) as client:
            with use_principal(_alice(engine)):
                with pytest.raises(PassthroughBlocked):
                    await client.get(
                        url + "/u", headers={"Authorization": f"Bearer {CLIENT_TOKEN}"}
                    )
                ok = await client.get(
                    url + "/u", headers={"Authorization": "Bearer third-party-key-xyz1"}
                )
        return ok.status_code

    assert asyncio.run(run()) == 200
    assert app.seen == ["Bearer third-party-key-xyz1"]


def test_monitor_mode_records_but_lets_the_call_through(api: Any) -> None:
    """In monitor mode the decision is recorded and nothing is refused."""
    url, app = api
    out = io.StringIO()
    engine = _engine(out, mode="monitor")
    with (
        use_principal(_alice(engine)),
        httpx.Client(transport=GuardedTransport(EgressGuard(engine))) as client,
    ):
        assert (
            client.get(url, headers={"Authorization": f"Bearer {CLIENT_TOKEN}"}).status_code == 200
        )
    assert len(app.seen) == 1
    assert "EG601" in out.getvalue()


def _result(text: str) -> Envelope:
    return Envelope(
        {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": text}]}},
        Direction.SERVER_TO_CLIENT,
        side=Side.SERVER,
    )


def test_vault_tokens_never_reach_the_client() -> None:
    """Results stay on the fast path until a token is registered; then EG603 blocks a leak."""
    engine = _engine(io.StringIO())
    guard = EgressGuard(engine)
    token = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
    assert engine.evaluate(_result(f"token={token}")).fast_path
    guard.vault.register(token, label="GitHub token")
    leak = engine.evaluate(_result(f"here: {token}"))
    assert leak.codes == ("EG603",)
    assert leak.blocked
    assert leak.findings[0].pointer == "/result/content/0/text"
    assert "GitHub token" in leak.findings[0].message
    clean = engine.evaluate(_result("connected as @alice"))
    assert not clean.fast_path
    assert not clean.findings
    guard.vault.forget(token)
    assert engine.evaluate(_result(token)).fast_path


def test_vault_one_pass_over_many_tokens() -> None:
    """Hundreds of tokens, one search; regex metacharacters are literals."""
    vault = CredentialVault()
    tokens = [f"tok-{i:04d}-a.b*c+d?(e)[f]{{g}}|h^$" for i in range(500)]
    for token in tokens:
        vault.register(token)
    text = "x" * 1000 + tokens[123] + "y" + tokens[456]
    found = vault.search(text)
    assert [tokens[123], tokens[456]] == [text[m.start : m.end] for m in found]
    assert vault.search("tok-0123-aXb*c+d?(e)[f]{g}|h^$") == []
    with pytest.raises(ValueError, match="at least 8"):
        vault.register("short")
    assert "tok-" not in repr(vault)
