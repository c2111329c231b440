"""Loading what the checks load on first use, before traffic arrives.

The public suffix list, the form lexicons, the Unicode tables, the secret catalogue and
phone number metadata are read when a check first needs them: about a tenth of a second
on the first elicitation a process sees. A proxy would add that to one user's request and a
linter to its first file. :func:`warm_up` pays it up front by judging a few representative
messages (a form, an internationalised URL, an answer) with a throwaway engine on the same
policy, so nothing of the caller's engine (sessions, counters, audit log, rate windows)
changes.
"""

from __future__ import annotations

from typing import Any

from elicitguard.audit.sink import AuditSink
from elicitguard.engine.policy import Policy
from elicitguard.identity.keys import KeyRing
from elicitguard.protocol.envelope import Direction, Envelope, Side

__all__ = ["warm_up"]

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


def warm_up(policy: Policy) -> None:
    """Judge a few representative messages under ``policy`` so lazy data is loaded now.

    Never raises: a failure here only means the first real message pays the loading.
    """
    from elicitguard.checks.secrets import load_community_in_background
    from elicitguard.engine.engine import Engine  # the engine imports this module

    load_community_in_background()  # the community credential catalogue compiles meanwhile
    try:
        engine = Engine(policy, audit=AuditSink(None), keys=KeyRing.random())
        for direction, message in _MESSAGES:
            engine.evaluate(Envelope(message, direction, side=Side.PROXY, session="warm-up"))
    except Exception:  # best effort by design: the first real message pays instead
        return
