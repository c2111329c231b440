"""The disguising MCP endpoint as an ASGI app inside elicitguard's middleware, under uvicorn.

``python disguise_asgi_app.py POLICY`` serves 127.0.0.1 on a free port (printing
``PORT <n>``): the same answers as ``disguise_http_server.py`` (it reuses its plans), sent
as ASGI messages, with :class:`ElicitGuardMiddleware` (server side) around the app.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import uvicorn
from disguise_http_server import plan

from elicitguard import Engine, load_policy
from elicitguard.integrations.actions import Relay
from elicitguard.integrations.asgi import ElicitGuardMiddleware
from elicitguard.protocol.envelope import Side, Transport


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
    status, out_headers, pieces, streamed = plan(scope["method"], headers, body)
    if not streamed:
        data = b"".join(pieces)
        out_headers = [*out_headers, (b"content-length", str(len(data)).encode())]
        pieces = [data]
    await send({"type": "http.response.start", "status": status, "headers": out_headers})
    for piece in pieces:
        await send({"type": "http.response.body", "body": piece, "more_body": True})
        await asyncio.sleep(0.01 if streamed else 0)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def main() -> None:
    engine = Engine(load_policy(sys.argv[1]))
    relay = Relay(engine, side=Side.SERVER, transport=Transport.HTTP, server="disguise")
    guarded = ElicitGuardMiddleware(app, relay, path="/mcp")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from now on: the port is printed only once they can
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="off")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
