"""``ElicitGuardMiddleware`` built from a policy: it makes its own engine and relay.

Driven in process with ASGI messages (the middleware needs no server to be exercised);
the app behind it is a plain ASGI callable that records what reached it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from elicitguard import Engine, load_policy
from elicitguard.integrations.actions import Relay
from elicitguard.integrations.asgi import ElicitGuardMiddleware
from elicitguard.protocol.envelope import Side, Transport


class _App:
    """Answers every request with an empty JSON-RPC result; remembers the bodies it saw.

    The guard hands the app the body it judged in one ``http.request`` message.
    """

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = (await receive()).get("body", b"")  # _post sends the body in one message
        self.bodies.append(body)
        request = orjson.loads(body)
        data = orjson.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": {}})
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data, "more_body": False})


def _post(guard: ElicitGuardMiddleware, body: bytes) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"content-type", b"application/json"), (b"accept", b"application/json")],
    }
    sent: list[dict[str, Any]] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(guard(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
DUPLICATE = b'{"jsonrpc":"2.0","id":2,"method":"ping","method":"tools/list"}'


def test_policy_builds_its_own_relay() -> None:
    policy = load_policy(environ={})
    app = _App()
    guard = ElicitGuardMiddleware(app, policy=policy, side=Side.SERVER)
    assert guard.relay.policy is policy
    assert guard.relay.side is Side.SERVER
    assert guard.relay.transport is Transport.HTTP
    assert _post(guard, PING)[0] == 200
    assert app.bodies == [PING]
    status, body = _post(guard, DUPLICATE)  # judged by the guard: never reaches the app
    assert app.bodies == [PING]
    assert b"error" in body
    assert status in (200, 400)


def test_policy_file_and_default_policy(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("environment: test\n", "utf-8")
    guard = ElicitGuardMiddleware(_App(), policy=str(path))
    assert guard.relay.policy.environment == "test"
    assert guard.relay.side is Side.SERVER
    assert ElicitGuardMiddleware(_App()).relay.policy.rules  # the default policy


def test_relay_as_before_and_not_both() -> None:
    relay = Relay(Engine(load_policy(environ={})), side=Side.PROXY)
    assert ElicitGuardMiddleware(_App(), relay, path="/mcp").relay is relay
    with pytest.raises(TypeError, match="not both"):
        ElicitGuardMiddleware(_App(), relay, policy=load_policy(environ={}))
