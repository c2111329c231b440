"""A scripted Streamable HTTP peer for proxy tests (no SDK: it must show exactly what arrived).

``python scripted_http.py`` serves 127.0.0.1 on a free port (printed as ``PORT <n>``).
``POST /mcp`` looks at the JSON-RPC method:

* ``echo``: a JSON result holding the request's headers and raw body, in an odd layout;
* ``sse``: an SSE stream with a comment, a priming event (id, empty data), a non-JSON
  event, a notification and the result, each with an ``id``;
* ``die``: an SSE stream that sends one notification and then breaks the connection;
* ``push``: an SSE stream that pushes ``elicitation/create`` (URL mode, ``params.url`` from
  the request), waits up to ``params.wait`` (5) seconds for the client's answer POST, then
  returns that answer;
* ``tools/call`` of ``connect_two``: an ``InputRequiredResult`` with two URL entries (``good``
  and ``bad`` hosts from the arguments); its retry is echoed like ``echo``.

A POST holding a response (the answer to ``push``) gets 202; a body that is not JSON gets
400 with a JSON-RPC parse error. ``GET /mcp`` is an endless SSE
stream of comments; ``GET /stats`` tells how many such streams are open.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

ANSWERS: dict[str, asyncio.Future[Any]] = {}
OPEN_STREAMS = 0


def _echo(request: Request, body: bytes, jsonrpc_id: Any) -> Response:
    headers = dict(request.headers.items())
    result = {"headers": headers, "body": body.decode("utf-8", "surrogatepass")}
    text = (
        '{ "id" : '
        + json.dumps(jsonrpc_id)
        + ' , "jsonrpc":"2.0", "result": '
        + json.dumps(result)
        + "}"
    )
    return Response(text.encode(), media_type="application/json")


def _sse(events: list[bytes]) -> StreamingResponse:
    async def stream() -> AsyncIterator[bytes]:
        for event in events:
            yield event
            await asyncio.sleep(0.01)

    return StreamingResponse(stream(), media_type="text/event-stream")


async def mcp(request: Request) -> Response:
    if request.method == "GET":
        return StreamingResponse(_endless(), media_type="text/event-stream")
    body = await request.body()
    try:
        message = json.loads(body)
    except ValueError:
        # A parse error, answered as real servers answer it. Raising instead would make
        # uvicorn close the connection after its 500 without saying so, and a client that
        # reused it meanwhile would be reset (an intermittent ECONNRESET in the load test).
        error = {"code": -32700, "message": "Parse error"}
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=400)
    method = message.get("method")
    jsonrpc_id = message.get("id")
    if method is None:
        future = ANSWERS.get(json.dumps(jsonrpc_id))
        if future is not None and not future.done():
            future.set_result(message)
        return Response(status_code=202)
    if method == "echo":
        return _echo(request, body, jsonrpc_id)
    if method == "sse":
        result = json.dumps({"jsonrpc": "2.0", "id": jsonrpc_id, "result": {"n": 1}}).encode()
        note = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'
        return _sse(
            [
                b": keep-alive comment\n\n",
                b"id: e0\ndata:\n\n",
                b"id: e1\nevent: message\ndata: not json\n\n",
                b"event: message\r\nid: e2\r\ndata: " + note + b"\r\n\r\n",
                b"event: message\nid: e3\ndata: " + result + b"\n\n",
            ]
        )
    if method == "die":

        async def dying() -> AsyncIterator[bytes]:
            yield b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n'
            await asyncio.sleep(0.05)
            raise RuntimeError("upstream dies mid-stream")

        return StreamingResponse(dying(), media_type="text/event-stream")
    if method == "push":
        return StreamingResponse(_push(message, jsonrpc_id), media_type="text/event-stream")
    if method == "tools/call":
        params = message["params"]
        if "inputResponses" in params:
            return _echo(request, body, jsonrpc_id)
        arguments = params["arguments"]
        entries = {
            key: {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Go", "url": f"https://{arguments[key]}/c"},
            }
            for key in ("good", "bad")
        }
        result = {"resultType": "input_required", "inputRequests": entries, "requestState": "s-1"}
        return JSONResponse({"jsonrpc": "2.0", "id": jsonrpc_id, "result": result})
    return JSONResponse(
        {"jsonrpc": "2.0", "id": jsonrpc_id, "error": {"code": -32601, "message": "no"}}
    )


async def _push(message: dict[str, Any], jsonrpc_id: Any) -> AsyncIterator[bytes]:
    server_id = "srv-1"
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    ANSWERS[json.dumps(server_id)] = future
    request = {
        "jsonrpc": "2.0",
        "id": server_id,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "Connect",
            "url": message["params"]["url"],
            "elicitationId": "el-1",
        },
    }
    yield b"event: message\ndata: " + json.dumps(request).encode() + b"\n\n"
    try:
        answer = await asyncio.wait_for(future, message["params"].get("wait", 5))
    except TimeoutError:
        answer = None
    result = {"jsonrpc": "2.0", "id": jsonrpc_id, "result": {"answer": answer}}
    yield b"event: message\ndata: " + json.dumps(result).encode() + b"\n\n"


async def _endless() -> AsyncIterator[bytes]:
    global OPEN_STREAMS
    OPEN_STREAMS += 1
    try:
        while True:
            yield b": ping\n\n"
            await asyncio.sleep(0.05)
    finally:
        OPEN_STREAMS -= 1


async def stats(request: Request) -> Response:
    return JSONResponse({"open_streams": OPEN_STREAMS})


app = Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST"]), Route("/stats", stats)])


def main() -> None:
    import uvicorn

    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on sockets whose proto is TCP,
    # and without it uvicorn's separate header and body writes stall ~40 ms (Nagle with
    # the client's delayed ACK) on every response.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="critical", lifespan="off")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
