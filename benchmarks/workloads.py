"""Seeded, realistic workloads for the benchmarks (comparable from run to run)."""

from __future__ import annotations

import random
from typing import Any

import orjson

C2S = "client_to_server"
S2C = "server_to_client"


def ordinary_messages(count: int, seed: int = 7) -> list[tuple[str, bytes]]:
    """tools/call, results, notifications and list calls, as (direction, frame bytes)."""
    rng = random.Random(seed)
    out: list[tuple[str, bytes]] = []
    request_id = 100
    while len(out) < count:
        kind = rng.random()
        request_id += 1
        if kind < 0.4:
            args = {"query": "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(5, 60))), "limit": rng.randint(1, 50)}
            out.append((C2S, orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "search", "arguments": args}})))
            text = " ".join("word" + str(rng.randint(0, 999)) for _ in range(rng.randint(10, 200)))
            out.append((S2C, orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}], "isError": False}})))
        elif kind < 0.6:
            out.append((S2C, orjson.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": f"p{request_id}", "progress": rng.randint(0, 100), "total": 100}})))
        elif kind < 0.8:
            out.append((C2S, orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})))
            tools = [{"name": f"tool_{i}", "description": "does a thing", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}} for i in range(rng.randint(1, 12))]
            out.append((S2C, orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})))
        else:
            out.append((C2S, orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": {"uri": f"file:///data/{request_id}.txt"}})))
            out.append((S2C, orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"contents": [{"uri": f"file:///data/{request_id}.txt", "text": "x" * rng.randint(10, 2000)}]}})))
    return out[:count]


def form_request(fields: int, request_id: int = 1) -> dict[str, Any]:
    """A push-era form request with ``fields`` ordinary fields."""
    kinds = [
        {"type": "string", "title": "Name", "maxLength": 80},
        {"type": "integer", "minimum": 1, "maximum": 20, "title": "Guests"},
        {"type": "boolean", "title": "Vegetarian", "default": False},
        {"type": "string", "format": "date", "title": "Date"},
        {"type": "string", "enum": ["in", "out"], "title": "Seating"},
    ]
    props = {f"field_{i}": kinds[i % len(kinds)] for i in range(fields)}
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": {"mode": "form", "message": "Please confirm the details", "requestedSchema": {"type": "object", "properties": props, "required": list(props)[:2]}}}


def url_request(host: str = "auth.example.com", request_id: int = 2) -> dict[str, Any]:
    """A push-era URL-mode request."""
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": {"mode": "url", "message": "Connect your account", "url": f"https://{host}/connect?service=github&state=9f86d081884c7d65", "elicitationId": f"e-{request_id}"}}
