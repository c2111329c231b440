"""A real ``mcp`` 2.3.0 server with form and URL elicitation tools for both eras.

Run ``python sdk_server.py stdio`` for stdio, or ``python sdk_server.py http`` to serve
Streamable HTTP on 127.0.0.1 (a free port, printed on stdout as ``PORT <n>``);
``python sdk_server.py asgi POLICY`` serves the app wrapped in elicitguard's ASGI middleware
(server side) under that policy.

Tools (each built with the SDK's own API for the era it is called in):
* ``book_table``: form elicitation through a resolver (``Resolve``), both eras;
* ``unlock``: a form that asks for a ``pin`` field (the test policy blocks it);
* ``connect_account``: URL elicitation to ``https://<host>/connect`` (``ctx.elicit_url`` in the
  push era, a hand-built ``InputRequiredResult`` in 2026-07-28);
* ``connect_two``: 2026-07-28 only: two URL entries in one round, to see a removed entry
  answered with ``decline`` on the retry;
* ``slow``: sleeps, so a test can kill the server mid-request;
* ``crash``: the process exits at once, without answering.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import ElicitRequest, ElicitRequestURLParams, InputRequiredResult
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

mcp = MCPServer("elicit-demo")


class Booking(BaseModel):
    guests: int = Field(description="How many guests")
    note: str = Field(default="", description="Anything we should know")


class Pin(BaseModel):
    pin: str = Field(description="Your card PIN")


async def ask_booking() -> Elicit[Booking]:
    return Elicit("Please confirm the booking details", Booking)


async def ask_pin() -> Elicit[Pin]:
    return Elicit("Enter your PIN to unlock", Pin)


@mcp.tool()
async def book_table(restaurant: str, booking: Annotated[Booking, Resolve(ask_booking)]) -> str:
    """Book a table (form elicitation)."""
    return f"Booked {restaurant} for {booking.guests}"


@mcp.tool()
async def unlock(pin: Annotated[Pin, Resolve(ask_pin)]) -> str:
    """Ask for a PIN through a form (the test policy forbids it)."""
    return "unlocked"


def _url_entry(host: str) -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestURLParams(
            message=f"Connect your account at {host}", url=f"https://{host}/connect"
        )
    )


@mcp.tool()
async def connect_account(host: str, ctx: Context) -> str | InputRequiredResult:
    """URL elicitation in either era."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        responses = ctx.input_responses
        if responses and "connect" in responses:
            return f"connect: {responses['connect'].model_dump(exclude_none=True)['action']}"
        return InputRequiredResult(
            input_requests={"connect": _url_entry(host)}, request_state="state-for-" + host
        )
    result = await ctx.elicit_url(
        message=f"Connect your account at {host}",
        url=f"https://{host}/connect",
        elicitation_id="elic-1",
    )
    await ctx.session.send_elicit_complete("elic-1", related_request_id=ctx.request_id)
    return f"connect: {result.action}"


@mcp.tool()
async def connect_two(good: str, bad: str, ctx: Context) -> str | InputRequiredResult:
    """Two URL entries in one 2026-07-28 round; returns what came back for each."""
    responses = ctx.input_responses
    if responses:
        actions = {k: v.model_dump(exclude_none=True)["action"] for k, v in responses.items()}
        return "answers: " + ", ".join(f"{k}={actions[k]}" for k in sorted(actions))
    return InputRequiredResult(
        input_requests={"good": _url_entry(good), "bad": _url_entry(bad)},
        request_state="two-state",
    )


@mcp.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


@mcp.tool()
async def crash() -> str:
    """Exit the process without answering."""
    os._exit(3)


def main() -> None:
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        mcp.run("stdio")
        return
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = mcp.streamable_http_app(host="127.0.0.1")
    if transport == "asgi":
        from elicitguard import Engine, load_policy
        from elicitguard.integrations.actions import Relay
        from elicitguard.integrations.asgi import ElicitGuardMiddleware
        from elicitguard.protocol.envelope import Side, Transport

        engine = Engine(load_policy(sys.argv[2]))
        relay = Relay(engine, side=Side.SERVER, transport=Transport.HTTP, server="elicit-demo")
        app = ElicitGuardMiddleware(app, relay, path="/mcp")  # type: ignore[assignment]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
