"""``examples/protect_server/server.py``: an ``mcp`` SDK server guarded in both eras.

Driven by a real, unguarded ``mcp`` client over stdio and over Streamable HTTP: the harmless
form and the https URL reach the user; the password form (EG201) and the ``http://`` URL
(EG301) never do, and the client gets the policy's -31001 error.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from tests.examples.support import EXAMPLES, PY, serving
from tests.integration_support import require_module

require_module("mcp")

SERVER = EXAMPLES / "protect_server" / "server.py"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("book_table", {}),
    ("unlock", {}),
    ("connect", {"url": "https://accounts.example.com/connect"}),
    ("connect", {"url": "http://accounts.example.com/connect"}),
]


async def drive(target: Any, era: str) -> tuple[list[Any], list[str]]:
    from mcp import Client
    from mcp.shared.exceptions import MCPError
    from mcp.types import ElicitResult

    shown: list[str] = []

    async def user(context: Any, params: Any) -> Any:
        shown.append(getattr(params, "url", None) or params.message)
        if getattr(params, "mode", None) == "url":
            return ElicitResult(action="accept")
        fields = params.requested_schema.get("properties", {})
        return ElicitResult(
            action="accept", content={f: 4 if f == "guests" else "x" for f in fields}
        )

    results: list[Any] = []
    async with Client(target, mode=era, elicitation_callback=user) as client:
        for tool, arguments in CALLS:
            try:
                result = await client.call_tool(tool, arguments)
                results.append(" ".join(getattr(c, "text", "") for c in result.content))
            except MCPError as exc:
                results.append((exc.error.code, sorted(exc.error.data["elicitguard"]["codes"])))
    return results, shown


def check(results: list[Any], shown: list[str]) -> None:
    assert results[0] == 'book:accept:{"guests": 4}'
    assert results[2] == "connect:accept:null"
    # Only the codes that blocked: EG501 (warn) and EG306 (log) stay in the audit record.
    assert results[1][0] == -31001
    assert {"EG201", "EG206"} <= set(results[1][1])
    assert "EG501" not in results[1][1]
    assert results[3][0] == -31001
    assert "EG301" in results[3][1]
    assert "EG306" not in results[3][1]
    assert shown == ["How many guests?", "https://accounts.example.com/connect"]


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_guarded_server_on_stdio(era: str) -> None:
    """``anyio.run(guard.run_stdio, mcp)``: both eras, pushed requests and input rounds."""
    from mcp import StdioServerParameters

    params = StdioServerParameters(command=PY, args=[str(SERVER)])
    check(*anyio.run(drive, params, era))


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_guarded_server_on_streamable_http(era: str) -> None:
    """``guard.http_app(mcp.streamable_http_app())`` with ``--http --port 0``."""
    require_module("uvicorn")
    with serving([PY, str(SERVER), "--http", "--port", "0"]) as url:
        check(*anyio.run(drive, url, era))


def test_unguarded_server_lets_the_password_form_through() -> None:
    """``--no-guard``: the same server without elicitguard asks the user for the password."""
    from mcp import StdioServerParameters

    params = StdioServerParameters(command=PY, args=[str(SERVER), "--no-guard"])
    results, shown = anyio.run(drive, params, "legacy")
    assert results[1].startswith("unlock:accept")
    assert "Enter your account password" in shown
    assert sys.executable == PY
