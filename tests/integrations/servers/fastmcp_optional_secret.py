"""An ``mcp`` server whose form asks a name and, optionally, an API key (both eras).

The FastMCP client test talks to it through ``elicitguard proxy stdio`` with a policy that
redacts secret fields: the optional ``api_key`` is removed from the form, and what the
client then validates and sends must still be an answer this server accepts. Push-era
sessions get a pushed ``elicitation/create``; 2026-07-28 requests an ``InputRequiredResult``.
The tool reports the answer it read as JSON. Run: ``python fastmcp_optional_secret.py``.
"""

from __future__ import annotations

import json

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

mcp = MCPServer("optional-secret-server")
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name"},
        "api_key": {"type": "string", "title": "API key"},
    },
    "required": ["name"],
}


@mcp.tool()
async def sign_up(ctx: Context) -> str | InputRequiredResult:
    """Ask for a name and an optional API key."""
    params = ElicitRequestFormParams(message="Sign up", requested_schema=SCHEMA)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answers = ctx.input_responses or {}
        if "form" in answers:
            return json.dumps(answers["form"].model_dump(exclude_none=True), sort_keys=True)
        return InputRequiredResult(
            input_requests={"form": ElicitRequest(params=params)}, request_state="r1"
        )
    answer = await ctx.session.send_request(ElicitRequest(params=params), ElicitResult)
    return json.dumps(answer.model_dump(exclude_none=True), sort_keys=True)


if __name__ == "__main__":
    anyio.run(mcp.run_stdio_async)
