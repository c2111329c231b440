"""Loading what the checks load on first use, before traffic arrives.

The public suffix list, the form lexicons, the Unicode tables, the secret catalogue and
phone number metadata are read when a check first needs them: about a tenth of a second
on the first elicitation a process sees. A proxy would add that to one user's request and a
linter to its first file. :meth:`Engine.warm_up <elicitguard.engine.engine.Engine.warm_up>`
pays it up front by judging the representative messages here (a form, an internationalised
URL, an answer) with a throwaway engine on the same policy, so nothing of the caller's engine
(sessions, counters, audit log, rate windows) changes. This module holds only the messages:
the engine imports it, never the other way round.
"""

from __future__ import annotations

from typing import Any

from elicitguard.protocol.envelope import Direction, Envelope, Side

__all__ = ["warm_up_envelopes"]

_ERA = "2025-11-25"

_MESSAGES: tuple[tuple[Direction, dict[str, Any]], ...] = (
    (
        Direction.CLIENT_TO_SERVER,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": _ERA,
                "capabilities": {"elicitation": {"form": {}, "url": {}}},
                "clientInfo": {"name": "warm-up", "version": "1"},
            },
        },
    ),
    (
        Direction.SERVER_TO_CLIENT,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"protocolVersion": _ERA, "capabilities": {}, "serverInfo": {"name": "w"}},
        },
    ),
    (
        Direction.SERVER_TO_CLIENT,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Bitte bestätigen Sie Ihr Konto: https://bücher.example/konto",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "title": "Nombre completo"},
                        "pin": {"type": "string", "title": "パスワード", "default": "1234"},
                        "email": {"type": "string", "format": "email", "title": "E-mail"},
                    },
                },
            },
        },
    ),
    (
        Direction.CLIENT_TO_SERVER,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"action": "accept", "content": {"name": "Ada", "email": "ada@example.com"}},
        },
    ),
    (
        Direction.SERVER_TO_CLIENT,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "Connect your account",
                "url": "https://xn--bcher-kva.example/connect?tel=%2B14155552671&token=abc",
                "elicitationId": "warm-up",
            },
        },
    ),
)


def warm_up_envelopes() -> list[Envelope]:
    """The representative messages, as fresh envelopes of one throwaway session."""
    return [
        Envelope(message, direction, side=Side.PROXY, session="warm-up")
        for direction, message in _MESSAGES
    ]
