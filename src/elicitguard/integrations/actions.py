"""Acting on decisions: what an integration does with a message once the engine decided.

Every integration (stdio proxy, HTTP proxy, ASGI middleware, the ``mcp`` SDK client and
server wrappers) funnels traffic through here, so that a block looks the same on every wire
and in both eras (DESIGN.md "Decisions in traffic"). The names below live in three modules,
one concept each: :mod:`~elicitguard.integrations.outcomes` (what can be sent, and the
errors a block sends), :mod:`~elicitguard.integrations.rewriting` (:func:`act`: applying a
decision to one message) and :mod:`~elicitguard.integrations.relay` (:class:`Relay`: one
integration point's way into :meth:`Engine.evaluate
<elicitguard.engine.engine.Engine.evaluate>`); this module gathers them.

The API
=======

``Relay(engine, side=..., transport=..., server=...)`` is the usual entry point::

    relay = Relay(engine, side=Side.PROXY, transport=Transport.STDIO, server="github")
    outcome = relay.inspect(line_bytes, Direction.SERVER_TO_CLIENT, session="stdio")
    match outcome:
        case Forward():         send the original bytes on, unchanged (never re-serialised)
        case Replace(message):  send ``outcome.to_bytes()`` on instead, same direction
        case Reply(message):    send ``outcome.to_bytes()`` back to the sender; forward nothing
        case Drop():            send nothing (``outcome.jsonrpc_id`` may name a request that
                                the receiver now waits for in vain: fail it, see below)

``inspect`` takes bytes (the engine parses them under the policy's size and depth limits) or
an already parsed ``dict`` (SDK integrations); it evaluates and then calls :func:`act`.
``act(decision, envelope, policy=..., state=...)`` is the pure second half, for callers that
evaluate themselves. Every outcome carries the :class:`Decision` (``None`` on the fast
path) so that a host can say why something was blocked; ``Outcome.close`` asks the caller
to close the connection (``limits.bad_frames: close``).

What each decision does (``monitor`` mode: always :class:`Forward`)
------------------------------------------------------------------
* a blocked pushed ``elicitation/create``: :class:`Reply` with a JSON-RPC error
  (``on_block.push_error_code``, default -31001, ``data.elicitguard = {codes,
  decision_id}``); on the client side the reply is the result ``{"action":
  on_block.client}`` instead;
* blocked entries of an ``inputRequests`` map: :class:`Replace` with those entries removed,
  the keys remembered in the round's chain state; the matching retry gets ``{"action":
  "decline"}`` (client side: ``on_block.client``) added for each removed key; when no entry is
  left the client gets the JSON-RPC error instead;
* ``redact`` on an answer removes the offending non-required keys of ``content``
  (``Finding.field``); when a required key would go, the answer becomes ``decline``; on a
  form request it removes non-required offending properties from ``requestedSchema``, else
  the request is blocked;
* a blocked answer becomes ``decline``; any other blocked request gets the JSON-RPC error
  back, a blocked response becomes that error for the waiting peer, a blocked notification
  is dropped;
* ``requestState`` is never altered, and a message nobody changed is never re-serialised;
  the one exception is opt-in sealing (``Relay(..., sealing=RequestStateGuard(...))``,
  ``--seal-request-state``): the state is sealed on its way to the client and opened, or
  refused with -32602, before the server sees the retry, which gets the exact string back;
* a frame that cannot be parsed is never forwarded: a request whose id can be recovered
  gets a ``-32700`` error back, anything else is dropped (with the recovered id, if any).
"""

from __future__ import annotations

from elicitguard.integrations.outcomes import (
    PARSE_ERROR,
    WITHHELD,
    Drop,
    Forward,
    Outcome,
    Replace,
    Reply,
    block_reason,
    blocked_error,
    blocking_findings,
    dumps,
    error_response,
    recover_id,
    withheld_error,
)
from elicitguard.integrations.relay import Relay
from elicitguard.integrations.rewriting import act

__all__ = [
    "PARSE_ERROR",
    "WITHHELD",
    "Drop",
    "Forward",
    "Outcome",
    "Relay",
    "Replace",
    "Reply",
    "act",
    "block_reason",
    "blocked_error",
    "blocking_findings",
    "dumps",
    "error_response",
    "recover_id",
    "withheld_error",
]
