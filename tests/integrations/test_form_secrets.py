"""The SDK integrations act on EG201 and EG204 in both eras, under the default preset.

A real ``mcp`` server (``servers/form_secrets_server.py``) asks for an API key under a German
title and for a name plus free-text notes. On the client, ``ClientGuard`` never shows the
API-key form (the server receives ``decline``) and blocks an answer carrying a token before it
leaves. On the server, ``ServerGuard`` blocks the API-key form before it leaves and removes a
pasted token from the answer before the tool reads it; a token in a required field turns the
answer into ``decline``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.integration_support import require_module
from tests.integrations.sdk_peers import ERAS, SERVERS, Host, blocked_by, outcome, server_params

require_module("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from elicitguard.integrations.mcp_client import ClientGuard, GuardNotice  # noqa: E402

SERVER = SERVERS / "form_secrets_server.py"
TOKEN = "ghp_" + "Zq8bX2vN4kL7mP1sR6tY9wA3cE5gH0jK2dF4"


def report(result: dict[str, Any]) -> tuple[str, str, Any]:
    """The tool's ``kind:action:content`` report."""
    kind, action, content = result["text"].split(":", 2)
    return kind, action, json.loads(content)


def run(script: Path, args: list[str], era: str, host: Any, body: Callable[[Any], Awaitable[Any]], guard: ClientGuard | None = None) -> Any:
    """Start the server on stdio, connect a client (guarded or not), run ``body``."""

    async def main() -> Any:
        if guard is None:
            async with Client(server_params(script, *args), mode=era, elicitation_callback=host) as client:
                return await body(client)
        transport = guard.transport(stdio_client(server_params(script, *args)))
        async with Client(transport, mode=era, elicitation_callback=guard.callback(host)) as client:  # type: ignore[arg-type]
            return await body(client)

    return anyio.run(main)


@pytest.mark.parametrize("era", ERAS)
def test_client_guard_never_shows_a_secret_form_and_blocks_a_secret_answer(era: str) -> None:
    """EG201: the API-key form never reaches the user, the server gets ``decline``. EG204: an
    answer with a pasted token is blocked on the client and the server gets ``decline``; the
    host learns the codes, never the value."""
    notices: list[GuardNotice] = []
    guard = ClientGuard(server="form-secrets-server", on_block=notices.append)
    host = Host(content={"name": "Ada", "notes": "use " + TOKEN})

    async def body(client: Any) -> list[dict[str, Any]]:
        return [await outcome(client, "ask", kind=kind) for kind in ("key", "notes")]

    key, notes = run(SERVER, [], era, host, body, guard)
    assert report(key) == ("key", "decline", None)
    assert report(notes) == ("notes", "decline", None)
    assert [shown["message"] for shown in host.shown] == ["Anything else we should know?"]
    assert [(n.stage, n.outcome) for n in notices] == [("request", "decline"), ("answer", "decline")]
    assert "EG201" in notices[0].codes
    assert "EG204" in notices[1].codes
    assert all(TOKEN not in n.reason and TOKEN[4:16] not in n.reason for n in notices)


@pytest.mark.parametrize("era", ERAS)
def test_server_guard_blocks_a_secret_form_and_redacts_a_secret_answer(era: str) -> None:
    """EG201: the server's API-key form never leaves (the client's call fails with -31001).
    EG204: the token in the optional ``notes`` is removed before the tool reads the answer."""
    host = Host(content={"name": "Ada", "notes": "use " + TOKEN})

    async def body(client: Any) -> list[dict[str, Any]]:
        return [await outcome(client, "ask", kind=kind) for kind in ("key", "notes")]

    key, notes = run(SERVER, ["--guard"], era, host, body)
    assert blocked_by(key, "EG201"), key
    assert report(notes) == ("notes", "accept", {"name": "Ada"})
    assert [shown["message"] for shown in host.shown] == ["Anything else we should know?"]


@pytest.mark.parametrize("era", ERAS)
def test_server_guard_turns_a_required_secret_into_decline(era: str) -> None:
    """A token in the required ``name`` cannot be removed: the tool reads ``decline``."""
    host = Host(content={"name": TOKEN})

    async def body(client: Any) -> dict[str, Any]:
        return await outcome(client, "ask", kind="notes")

    result = run(SERVER, ["--guard"], era, host, body)
    assert report(result) == ("notes", "decline", None)
