"""An HTTP MCP endpoint that misbehaves on purpose, at the byte level: ``python fault_http_server.py``.

It listens on 127.0.0.1 (printing ``PORT <n>``) and speaks just enough HTTP/1.1 (keep-alive,
``Content-Length`` bodies) to be proxied. What it does depends on the JSON-RPC ``method``
of a POST to ``/mcp`` (``params`` tune it):

* ``echo``: ``{"echo": <id>}`` as JSON at once; ``params.delay`` seconds later if given;
* ``elicit``: an SSE stream with a benign form ``elicitation/create`` and then the result;
* ``hang``: reads the request and never answers;
* ``stall``: JSON headers and half of the body, then nothing;
* ``sse-stall``: an SSE stream with one progress notification, then silence;
* ``sse-alive``: an SSE comment every ``params.every`` s for ``params.for`` s, then the result;
* ``sse-forever``: one progress notification, then silence until killed;
* ``garbage``: bytes that are not HTTP, then closes;
* ``notjson``: a JSON content type with a body that is not JSON;
* ``big``: a 100 MB JSON body (one string), sent as fast as the socket takes it;
* ``flood``: an SSE stream of ``params.n`` notifications, then the result;
* with the header ``X-Fault: slowread``: reads the body 64 KiB per 20 ms, then answers
  ``{"received": <bytes>}`` for id 1.

``GET /mcp`` opens a stream that stays silent ``?quiet=S`` seconds, then sends one event.
``GET /stats`` says how many connections are open and how many requests were read.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

STATS = {"open": 0, "requests": 0}
SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def event(message: dict[str, Any]) -> bytes:
    return chunk(b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n")


def json_response(payload: dict[str, Any] | bytes, status: str = "200 OK") -> bytes:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body


def result(ident: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": value}


async def read_head(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str]] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return method, target, headers


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    STATS["open"] += 1
    try:
        while (head := await read_head(reader)) is not None:
            STATS["requests"] += 1
            if not await answer(reader, writer, *head):
                return
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        STATS["open"] -= 1
        writer.close()


async def answer(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    method: str,
    target: str,
    headers: dict[str, str],
) -> bool:
    """Answer one request; False closes the connection."""
    length = int(headers.get("content-length", "0"))
    if method == "GET" and target.startswith("/stats"):
        writer.write(json_response(dict(STATS)))
        return True
    if method == "GET":
        quiet = float(target.partition("quiet=")[2] or 0)
        writer.write(SSE_HEAD)
        await writer.drain()
        await asyncio.sleep(quiet)
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}}
        writer.write(event(note) + b"0\r\n\r\n")
        await writer.drain()
        return True
    if headers.get("x-fault") == "slowread":
        got = 0
        while got < length:
            got += len(await reader.readexactly(min(65536, length - got)))
            await asyncio.sleep(0.02)
        writer.write(json_response(result(1, {"received": got})))
        await writer.drain()
        return True
    message = json.loads(await reader.readexactly(length)) if length else {}
    ident = message.get("id")
    params = message.get("params") or {}
    kind = message.get("method")
    if kind == "echo":
        if params.get("delay"):
            await asyncio.sleep(float(params["delay"]))
        writer.write(json_response(result(ident, {"echo": ident})))
    elif kind == "elicit":
        ask = {
            "jsonrpc": "2.0",
            "id": f"e{ident}",
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        }
        writer.write(SSE_HEAD + event(ask) + event(result(ident, {"done": True})) + b"0\r\n\r\n")
    elif kind == "hang":
        await reader.read()  # until the peer closes (never answers)
        return False
    elif kind == "stall":
        body = json.dumps(result(ident, {"text": "x" * 200})).encode()
        writer.write(json_response(body)[: -len(body) // 2])
        await writer.drain()
        await reader.read()  # until the peer closes (never answers)
        return False
    elif kind in ("sse-stall", "sse-forever"):
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
        writer.write(SSE_HEAD + event(note))
        await writer.drain()
        await reader.read()  # until the peer closes (never answers)
        return False
    elif kind == "sse-alive":
        writer.write(SSE_HEAD)
        waited = 0.0
        while waited < float(params["for"]):
            writer.write(chunk(b": still working\n\n"))
            await writer.drain()
            await asyncio.sleep(float(params["every"]))
            waited += float(params["every"])
        writer.write(event(result(ident, {"done": True})) + b"0\r\n\r\n")
    elif kind == "garbage":
        writer.write(b"this is not HTTP at all\r\n\r\n")
        await writer.drain()
        return False
    elif kind == "notjson":
        writer.write(json_response(b"<html>not json</html>"))
    elif kind == "big":
        size = 100 * 1024 * 1024
        prefix = b'{"jsonrpc": "2.0", "id": %d, "result": "' % ident
        writer.write(
            f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            f"content-length: {len(prefix) + size + 2}\r\n\r\n".encode()
            + prefix
        )
        piece = b"a" * (1 << 20)
        for _ in range(100):
            writer.write(piece)
            await writer.drain()
        writer.write(b'"}')
    elif kind == "flood":
        writer.write(SSE_HEAD)
        for n in range(int(params["n"])):
            note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"n": n}}
            writer.write(event(note))
            if n % 100 == 0:
                await writer.drain()
        writer.write(event(result(ident, {"done": True})) + b"0\r\n\r\n")
    else:
        writer.write(json_response(result(ident, {"unknown": kind})))
    await writer.drain()
    return True


async def main() -> None:
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
