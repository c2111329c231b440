"""The fixed upstream of the proxy benchmarks: an ``mcp`` SDK server with one no-op tool.

``python noop_server.py stdio`` serves stdio; ``python noop_server.py http`` serves
Streamable HTTP (stateless, JSON responses) on 127.0.0.1, printing ``PORT <n>``.
"""

from __future__ import annotations

import asyncio
import socket
import sys

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("noop")


@mcp.tool()
def noop() -> str:
    """Does nothing: the benchmark measures transport and proxy cost only."""
    return "ok"


def main() -> None:
    if sys.argv[1:2] != ["http"]:
        mcp.run("stdio")
        return
    import uvicorn

    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto is TCP;
    # without it uvicorn's separate header and body writes stall ~40 ms per response
    # (Nagle against the client's delayed ACK), which was the whole direct round trip.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = mcp.streamable_http_app(host="127.0.0.1", stateless_http=True, json_response=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
