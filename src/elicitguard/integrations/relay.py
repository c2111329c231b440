"""The relay: one integration point's way into the engine, and back out as an outcome.

``Relay(engine, side=..., transport=..., server=...)`` hands each message, in whatever form
its transport holds it, to :meth:`Engine.evaluate
<elicitguard.engine.engine.Engine.evaluate>` and turns the decision into an
:class:`~elicitguard.integrations.outcomes.Outcome` (:func:`~elicitguard.integrations.rewriting.act`).
Parsing, requestState sealing and judging are stages of the engine's pipeline, so the
linter and the gateway get them too; what stays here is what only a wire needs: the
outcome of a frame that could not be parsed, and failing closed when acting fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from elicitguard.base.decision import Decision
from elicitguard.engine.engine import Engine
from elicitguard.errors import FrameError
from elicitguard.protocol.envelope import Direction, Envelope, Side, Transport
from elicitguard.protocol.parsing import parse_frame

if TYPE_CHECKING:
    from elicitguard.identity.sealing import RequestStateGuard

from elicitguard.integrations.outcomes import (
    _NO_ID,
    PARSE_ERROR,
    Drop,
    Forward,
    Outcome,
    Replace,
    Reply,
    error_response,
    recover_id,
)
from elicitguard.integrations.rewriting import act

__all__ = ["Relay"]


def _sees_whole_sessions(
    engine: Engine, sealing: RequestStateGuard | None, location: Mapping[str, Any]
) -> bool:
    """Whether every ``requestState`` this relay's peers may echo passes through it first.

    Not with sealing (the sealer verifies states itself, across replicas), not with several
    replicas (a state may have been issued through another one), and not for the
    ``MCPServer`` middleware (it sees states in another form on their way out and in).
    """
    if sealing is not None or location.get("request_state") == "plaintext":
        return False
    replicas = engine.policy.identity.get("replicas")
    return not (isinstance(replicas, int) and replicas > 1)


# --- the relay ------------------------------------------------------------------------------


class Relay:
    """Evaluates and acts for one integration point (one side, one transport, one server).

    Thread-compatible, not thread-safe: use one per event loop. ``bad_frames`` counts frames
    that could not be parsed.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        side: Side = Side.PROXY,
        transport: Transport | None = None,
        server: str | None = None,
        sealing: RequestStateGuard | None = None,
        location: Mapping[str, Any] | None = None,
    ) -> None:
        self.engine = engine
        self.policy = engine.policy
        self.side = side
        self.transport = transport
        self.server = server
        #: Where this relay sits, for rules that care (``{"request_state": "plaintext"}``:
        #: the ``MCPServer`` middleware sees state the SDK already unsealed; EG503 skips it).
        self.location: Mapping[str, Any] = dict(location or {})
        #: Opt-in requestState sealing (``--seal-request-state``): sealed on the way to the
        #: client, opened (or refused with -32602) before the server sees a retry. It is a
        #: stage of :meth:`Engine.evaluate`, so it is handed to the engine.
        self.sealing = sealing
        if sealing is not None:
            # The engine's request-state stage: every door into this engine gets it.
            engine.request_state = sealing
        self.bad_frames = 0
        if _sees_whole_sessions(engine, sealing, self.location):
            # A relay is in the path from a connection's first message, so a requestState
            # this engine never saw issued was never issued to this peer (EG504).
            engine.services["whole_sessions"] = True
        # Load lexicons, tables and lists now rather than inside the first user's request.
        engine.warm_up()

    def envelope(
        self,
        message: dict[str, Any],
        direction: Direction,
        *,
        raw: bytes | None = None,
        session: str | None = None,
        headers: Mapping[str, str] | None = None,
        protocol_version: str | None = None,
        principal: Any = None,
    ) -> Envelope:
        """An envelope with this relay's side, transport and server name."""
        return Envelope(
            message=message,
            direction=direction,
            side=self.side,
            transport=self.transport,
            session=session,
            headers=dict(headers or {}),
            principal=principal,
            server=self.server,
            protocol_version=protocol_version,
            raw=raw,
            location=self.location,
        )

    def parse(
        self, raw: bytes, direction: Direction, *, session: str | None = None
    ) -> dict[str, Any] | Outcome:
        """Parse one frame under the policy's limits; a bad frame's outcome otherwise.

        Transports that need the parsed message themselves (to track pending ids) parse
        here once and hand both the object and the bytes to :meth:`inspect`.
        """
        try:
            message: dict[str, Any] = parse_frame(
                raw,
                max_bytes=self.policy.limits.max_message_bytes,
                max_depth=self.policy.limits.max_depth,
            )
        except FrameError as exc:
            return self.bad_frame(raw, exc, direction, session=session)
        return message

    def inspect(
        self,
        data: bytes | dict[str, Any],
        direction: Direction,
        *,
        raw: bytes | None = None,
        session: str | None = None,
        headers: Mapping[str, str] | None = None,
        protocol_version: str | None = None,
        principal: Any = None,
    ) -> Outcome:
        """Evaluate one message and decide what to send.

        ``data`` is the frame's bytes, or the parsed object (then pass the bytes as ``raw``
        when you have them: the duplicate-key check needs them). Both go to
        :meth:`Engine.evaluate <elicitguard.engine.engine.Engine.evaluate>` as they are: it
        parses, opens or seals ``requestState`` (the relay's ``sealing``) and judges; the
        relay turns the decision into an :class:`Outcome`.
        """
        message = data if isinstance(data, dict) else None
        try:
            decision = self.engine.evaluate(
                data,
                direction,
                side=self.side,
                session=session,
                raw=raw if message is not None else None,
                transport=self.transport,
                server=self.server,
                headers=dict(headers or {}),
                protocol_version=protocol_version,
                principal=principal,
                location=self.location,
            )
            if decision.frame_error is not None:
                assert not isinstance(data, dict)  # only bytes can fail to parse
                return self._bad_frame_outcome(data, decision)
            if decision.reply is not None:  # a sealed requestState that did not open
                return Reply(decision.reply)
            if decision.fast_path:
                outcome: Outcome = Forward(decision)
            else:
                state = self.engine.store.get(session or "")
                outcome = act(decision, decision.envelope, policy=self.policy, state=state)
        except Exception as exc:  # a bug here must not take the connection down
            return self._failure(self._failed_envelope(data, direction, session), exc)
        if decision.replacement is not None and isinstance(outcome, Forward):
            # The request-state stage opened or sealed requestState: send what it made.
            return Replace(decision.replacement, outcome.decision, outcome.close)
        return outcome

    def _failed_envelope(
        self, data: bytes | dict[str, Any], direction: Direction, session: str | None
    ) -> Envelope:
        """The envelope a failure is reported under: the message, or its recovered id."""
        if isinstance(data, dict):
            return self.envelope(data, direction, session=session)
        jsonrpc_id, is_request = recover_id(data)
        message: dict[str, Any] = {} if jsonrpc_id is None else {"id": jsonrpc_id}
        if is_request:
            message["method"] = ""
        return self.envelope(message, direction, session=session)

    def _failure(self, envelope: Envelope, exc: Exception) -> Outcome:
        """Acting failed: audit it and follow ``on_error`` (block unless it says warn)."""
        self.engine.audit.event(
            "elicitguard.integration_error",
            error=type(exc).__name__,
            direction=envelope.direction.value,
            server=self.server,
        )
        if self.policy.on_error != "block":
            return Forward(None)
        jsonrpc_id = envelope.message.get("id", _NO_ID)
        if jsonrpc_id is _NO_ID:
            return Drop("integration error")
        error = error_response(
            jsonrpc_id, self.policy.push_error_code, "elicitguard failed to check this message"
        )
        if "method" in envelope.message:
            return Reply(error)
        return Replace(error)

    def bad_frame(
        self, raw: bytes, error: FrameError, direction: Direction, *, session: str | None = None
    ) -> Outcome:
        """A frame the caller could not read (a line too long to buffer): audited, never
        forwarded."""
        decision = self.engine.evaluate(
            error,
            direction,
            side=self.side,
            session=session,
            transport=self.transport,
            server=self.server,
            location=self.location,
        )
        return self._bad_frame_outcome(raw, decision)

    def _bad_frame_outcome(self, raw: bytes, decision: Decision) -> Outcome:
        """What a frame that could not be parsed becomes: a -32700 reply or a drop."""
        self.bad_frames += 1
        kind = decision.frame_error
        close = self.policy.limits.bad_frames == "close"
        jsonrpc_id, is_request = recover_id(raw)
        if jsonrpc_id is not None and is_request:
            reply = error_response(
                jsonrpc_id,
                PARSE_ERROR,
                f"elicitguard could not use this message: {kind}",
                {
                    "elicitguard": {
                        "codes": list(decision.codes),
                        "decision_id": decision.decision_id,
                    }
                },
            )
            return Reply(reply, decision, close)
        return Drop(f"unparseable frame: {kind}", decision, close, jsonrpc_id)
