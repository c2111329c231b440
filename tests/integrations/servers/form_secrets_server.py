"""A real ``mcp`` server whose forms ask for secrets or receive them (EG201, EG204), both eras.

One tool, ``ask(kind)``: ``key`` asks for an API key under a German title (EG201 blocks it);
``notes`` asks for a required ``name`` and an optional ``notes`` field, which the test's host
fills with whatever the test says (a pasted token makes EG204 fire on the answer). Push-era
sessions get a pushed ``elicitation/create``; 2026-07-28 requests get an
``InputRequiredResult`` and read the answer from the retry. The tool reports what reached it
as ``kind:action:content``.

Run: ``python form_secrets_server.py [--guard]`` (stdio; ``--guard`` wraps the streams in
``ServerGuard`` under the default preset).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

mcp = MCPServer("form-secrets-server")

SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "key": (
        "Integration einrichten",
        {
            "type": "object",
            "properties": {"schluessel": {"type": "string", "title": "API-Schlüssel"}},
            "required": ["schluessel"],
        },
    ),
    "notes": (
        "Anything else we should know?",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "notes": {"type": "string", "title": "Notes"},
            },
            "required": ["name"],
        },
    ),
}


def _report(kind: str, answer: Any) -> str:
    action = getattr(answer, "action", None)
    content = getattr(answer, "content", None)
    return f"{kind}:{action}:{json.dumps(content, sort_keys=True)}"


@mcp.tool()
async def ask(kind: str, ctx: Context) -> str | InputRequiredResult:
    """Ask the form named ``kind`` and report the answer that reached the tool."""
    message, schema = SCHEMAS[kind]
    params = ElicitRequestFormParams(message=message, requested_schema=schema)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answers = ctx.input_responses or {}
        if kind in answers:
            return _report(kind, answers[kind])
        return InputRequiredResult(
            input_requests={kind: ElicitRequest(params=params)}, request_state=f"round-1:{kind}"
        )
    answer = await ctx.session.send_request(ElicitRequest(params=params), ElicitResult)
    return _report(kind, answer)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--guard", action="store_true")
    args = parser.parse_args()
    if args.guard:
        from elicitguard.integrations.mcp_server import ServerGuard

        guard = ServerGuard(server="form-secrets-server")
        anyio.run(guard.run_stdio, mcp)
    else:
        anyio.run(mcp.run_stdio_async)


if __name__ == "__main__":
    main()
