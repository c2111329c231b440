"""An `mcp` SDK server protected by elicitguard, in both protocol eras.

Three tools elicit from the user: `book_table` asks a harmless form question, `unlock` asks
for a password in a form (EL-01; EG201 blocks it), `connect` sends the user to a URL (an
`http://` URL is EG301 and blocked outside dev). Push-era sessions (2025-06-18, 2025-11-25)
use `ctx.elicit` / `ctx.elicit_url`; 2026-07-28 sessions get an `InputRequiredResult` and
read the answers from the retry.

The lines elicitguard adds are marked `# elicitguard`. Run it:

    python examples/protect_server/server.py                 # stdio, guarded
    python examples/protect_server/server.py --http          # Streamable HTTP on 127.0.0.1:8000
    python examples/protect_server/server.py --no-guard      # the same server, unprotected
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from elicitguard.integrations.mcp_server import ServerGuard  # elicitguard

mcp = MCPServer("demo-server")


class Booking(BaseModel):
    guests: int


class Unlock(BaseModel):
    password: str


def _modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _answer(kind: str, answer: Any) -> str:
    """What the user answered, as `kind:action:content` text."""
    if isinstance(answer, ElicitResult):
        action, content = answer.action, answer.content
    else:
        action, content = answer.action, getattr(answer, "data", None)
        content = content.model_dump() if isinstance(content, BaseModel) else content
    return f"{kind}:{action}:{json.dumps(content, sort_keys=True)}"


def _form(key: str, message: str, model: type[BaseModel]) -> InputRequiredResult:
    params = ElicitRequestFormParams(message=message, requested_schema=model.model_json_schema())
    return InputRequiredResult(
        input_requests={key: ElicitRequest(params=params)}, request_state=f"round-1:{key}"
    )


@mcp.tool()
async def book_table(ctx: Context) -> str | InputRequiredResult:
    """Ask how many guests (a harmless form: it reaches the user)."""
    if _modern(ctx):
        if "guests" in (ctx.input_responses or {}):
            return _answer("book", ctx.input_responses["guests"])  # type: ignore[index]
        return _form("guests", "How many guests?", Booking)
    return _answer("book", await ctx.elicit("How many guests?", Booking))


@mcp.tool()
async def unlock(ctx: Context) -> str | InputRequiredResult:
    """Ask for a password in a form (EG201: elicitguard blocks it before the client)."""
    if _modern(ctx):
        if "password" in (ctx.input_responses or {}):
            return _answer("unlock", ctx.input_responses["password"])  # type: ignore[index]
        return _form("password", "Enter your account password", Unlock)
    return _answer("unlock", await ctx.elicit("Enter your account password", Unlock))


@mcp.tool()
async def connect(url: str, ctx: Context) -> str | InputRequiredResult:
    """Send the user to `url` in the browser (URL mode)."""
    if _modern(ctx):
        if "connect" in (ctx.input_responses or {}):
            return _answer("connect", ctx.input_responses["connect"])  # type: ignore[index]
        params = ElicitRequestURLParams(message="Connect your account", url=url)
        return InputRequiredResult(
            input_requests={"connect": ElicitRequest(params=params)}, request_state="round-1:c"
        )
    return _answer("connect", await ctx.elicit_url("Connect your account", url, "connect-1"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="Streamable HTTP, not stdio")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (0: a free one)")
    parser.add_argument("--policy", default="builtin:default", help="file or builtin:NAME")
    parser.add_argument("--no-guard", action="store_true", help="run unprotected")
    args = parser.parse_args()
    guard = None
    if not args.no_guard:
        guard = ServerGuard(policy=args.policy, server="demo-server")  # elicitguard
        # Both wrappers below see every frame of both eras. With a transport you run
        # yourself, `MCPServer(..., middleware=[guard.middleware()])` covers 2026-07-28
        # rounds and -32042 errors instead (never a pushed `elicitation/create`).
    if args.http:
        import socket

        import uvicorn

        app = mcp.streamable_http_app(host="127.0.0.1")
        if guard is not None:
            app = guard.http_app(app)  # elicitguard: both eras on Streamable HTTP
        sock = socket.socket()
        sock.bind(("127.0.0.1", args.port))
        sock.listen(64)
        print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        anyio.run(uvicorn.Server(config).serve, [sock])
    elif guard is not None:
        anyio.run(guard.run_stdio, mcp)  # elicitguard: stdio, both eras, pushed requests too
    else:
        anyio.run(mcp.run_stdio_async)


if __name__ == "__main__":
    main()
