#!/usr/bin/env python3
"""Print the modules one frame passes through from ``Relay.inspect``, in order.

    python scripts/trip_of_a_frame.py ordinary      # a tools/call request
    python scripts/trip_of_a_frame.py elicitation   # a URL-mode elicitation/create

A warm relay (handshake done, caches filled) judges the frame once under ``sys.settrace``;
every call into an elicitguard module that is not the module of the previous call counts as
a stay. The pipeline's shape is read from this: how many stays, in how many modules, and
how many times the frame returns to a module it already left.
"""

from __future__ import annotations

import io
import sys
from types import FrameType
from typing import Any

import orjson

from elicitguard.integrations.actions import Relay
from elicitguard.protocol.envelope import Direction, Side, Transport
from elicitguard.testing import quiet_engine

_ERA = "2025-11-25"
_HANDSHAKE = (
    (
        Direction.CLIENT_TO_SERVER,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": _ERA,
                "capabilities": {"elicitation": {"form": {}, "url": {}}},
                "clientInfo": {"name": "c", "version": "1"},
            },
        },
    ),
    (
        Direction.SERVER_TO_CLIENT,
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": _ERA, "capabilities": {}}},
    ),
)
_FRAMES: dict[str, tuple[Direction, dict[str, Any]]] = {
    "ordinary": (
        Direction.CLIENT_TO_SERVER,
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "echo"}},
    ),
    "elicitation": (
        Direction.SERVER_TO_CLIENT,
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "Connect",
                "url": "https://accounts.example.com/connect?x=1",
                "elicitationId": "e1",
            },
        },
    ),
}


def trip(kind: str) -> list[tuple[str, str]]:
    """(module, function) of each stay of one frame of ``kind``."""
    relay = Relay(
        quiet_engine(audit=io.StringIO()), side=Side.PROXY, transport=Transport.STDIO, server="s"
    )
    for direction, message in _HANDSHAKE:
        relay.inspect(orjson.dumps(message), direction, session="s")
    direction, message = _FRAMES[kind]
    data = orjson.dumps(message)
    relay.inspect(data, direction, session="s")  # warm, as in a running proxy
    stays: list[tuple[str, str]] = []

    def tracer(frame: FrameType, event: str, _arg: Any) -> None:
        module = str(frame.f_globals.get("__name__", ""))
        fresh = not stays or stays[-1][0] != module
        if event == "call" and module.startswith("elicitguard") and fresh:
            stays.append((module, frame.f_code.co_name))

    sys.settrace(tracer)
    try:
        relay.inspect(data, direction, session="s")
    finally:
        sys.settrace(None)
    return stays


def main() -> int:
    """Print the trip of each kind named on the command line (default: both)."""
    for kind in sys.argv[1:] or list(_FRAMES):
        stays = trip(kind)
        modules = [m.removeprefix("elicitguard.") for m, _ in stays]
        returns = sum(1 for i, m in enumerate(modules) if m in modules[:i])
        print(f"{kind}: {len(stays)} stays in {len(set(modules))} modules, {returns} returns")
        print("  " + " -> ".join(modules))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
