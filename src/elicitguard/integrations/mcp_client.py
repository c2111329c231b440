"""elicitguard inside a client built on the official ``mcp`` SDK (``elicitguard[mcp]``).

The SDK offers two places to stand (PROTOCOL.md c.5), and :class:`ClientGuard` uses both:

* **the elicitation callback.** :meth:`ClientGuard.callback` wraps the host's callback. Every
  request is evaluated before the host (and so the user) sees it, and every answer before it
  leaves. Both eras reach the same callback: a pushed ``elicitation/create`` (2025-06-18,
  2025-11-25, task-augmented ones included) and each ``inputRequests`` entry of a 2026-07-28
  ``InputRequiredResult``. A blocked request is answered with ``on_block.client`` (``decline``
  unless the policy says ``cancel``) and the host's ``on_block`` hook is told why; a redacted
  answer loses its offending keys; an optional consent gate can hold back a URL ``accept``.
* **the transport.** :meth:`ClientGuard.transport` wraps any client ``Transport``. The SDK
  declares both elicitation modes whenever a callback exists; the wrapper removes the modes the
  policy does not offer (``client.elicitation_modes``) from ``initialize`` and from every
  2026-07-28 request's ``_meta``, on the raw frames, so servers see what the host can really
  show. The callback wrapper assumes the same declaration, so a request in a removed mode is
  undeclared and EG102 blocks it even where the transport is not wrapped.

Usage::

    guard = ClientGuard(policy="policy.yaml", server="github", on_block=tell_user)
    async with Client(
        guard.transport(streamable_http_client(url)),
        elicitation_callback=guard.callback(ask_user),
    ) as client:
        ...

The callback sees typed params, not frames, so the wrapper evaluates the message the params
came in, rebuilt: the pushed request and its response in the push era, a one-entry
``InputRequiredResult`` and its retry in 2026-07-28 (the SDK does not tell a callback which
method the round belongs to, so those records say ``tools/call``).
"""

from __future__ import annotations

import contextvars
import inspect
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable
from weakref import WeakKeyDictionary

from mcp.client import ClientRequestContext
from mcp.client._transport import Transport
from mcp.client.session import ElicitationFnT
from mcp.shared._stream_protocols import WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
)
from pydantic import ValidationError

from elicitguard.base.decision import Action, Decision, Finding
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy
from elicitguard.integrations._sdk import make_engine
from elicitguard.integrations.actions import Forward, Outcome, Relay, Replace, Reply
from elicitguard.integrations.client_capabilities import (
    CapabilityFilter,
    RestrictingWriter,
    declared_elicitation,
    restrict_capabilities,
    restrict_elicitation,
)
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.extract import extract
from elicitguard.protocol.items import ABSENT
from elicitguard.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    is_modern,
    normalise_version,
)

__all__ = [
    "CapabilityFilter",
    "ClientGuard",
    "ConsentGateLike",
    "ElicitationTicket",
    "GuardNotice",
    "current_ticket",
    "declared_elicitation",
    "restrict_capabilities",
    "restrict_elicitation",
]


#: The ticket of the elicitation whose host callback is running (see :func:`current_ticket`).
_CURRENT: contextvars.ContextVar[ElicitationTicket | None] = contextvars.ContextVar(
    "elicitguard_current_ticket", default=None
)


@dataclass(frozen=True, slots=True)
class ElicitationTicket:
    """One elicitation request as the host is about to see it.

    ``id`` is unique per request and is what a consent gate keys its records on;
    ``request_id`` is the JSON-RPC id of a pushed request or the ``inputRequests`` key of a
    2026-07-28 entry; ``params`` are the request params as the host receives them (after
    any redaction); ``decision`` is the request's decision.
    """

    id: str
    server: str | None
    protocol_version: str | None
    mode: str
    request_id: Any
    params: Mapping[str, Any] = field(repr=False)
    decision: Decision | None = field(repr=False)

    @property
    def url(self) -> str | None:
        """The URL of a URL-mode request (``None`` for forms)."""
        url = self.params.get("url")
        return url if isinstance(url, str) else None


@dataclass(frozen=True, slots=True)
class GuardNotice:
    """Why elicitguard stopped or changed an elicitation, for the host's ``on_block`` hook.

    ``stage`` is where it happened (``request``: the user never saw it; ``answer``: the
    user's answer was changed before it left; ``consent``: the consent gate refused a URL
    ``accept``); ``outcome`` is what the server receives (``decline``, ``cancel``,
    ``redacted``). ``reason`` names rule codes and rule names only, never a value; the
    ``repr`` leaves out the ticket's params and the decision's items (they hold traffic).
    """

    stage: Literal["request", "answer", "consent"]
    outcome: str
    ticket: ElicitationTicket
    decision: Decision | None = field(repr=False)
    reason: str

    @property
    def codes(self) -> tuple[str, ...]:
        """The rule codes behind the notice."""
        return self.decision.codes if self.decision is not None else ()

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The findings behind the notice (messages and fingerprints, never values)."""
        return self.decision.findings if self.decision is not None else ()


NoticeHook = Callable[[GuardNotice], Awaitable[None] | None]


@runtime_checkable
class ConsentGateLike(Protocol):
    """What :class:`ClientGuard` asks of a consent gate (``elicitguard.consent.ConsentGate``).

    ``admit`` is asked about every URL-mode ``accept`` after the policy let the answer
    through; ``False`` turns it into ``on_block.client``. A gate may also define
    ``open(ticket)``, called after the request passed the policy and before the host's
    callback runs; during the callback :func:`current_ticket` returns the same ticket, so
    the host can show the gate's view and record the user's yes against it.
    """

    def admit(
        self, ticket: ElicitationTicket, answer: Mapping[str, Any]
    ) -> bool | Awaitable[bool]: ...


def current_ticket() -> ElicitationTicket | None:
    """The ticket of the elicitation the host's callback is handling right now."""
    return _CURRENT.get()


# --- the guard ------------------------------------------------------------------------------


class ClientGuard:
    """Enforces a policy on the elicitation an ``mcp`` client receives and answers.

    ``server`` is the operator's name for the server (what ``where: {server: ...}`` in
    exceptions matches; never the server's own ``serverInfo``). ``on_block`` is called with
    a :class:`GuardNotice` whenever a request is refused or an answer changed (sync or
    async). ``consent`` is an optional gate (see :class:`ConsentGateLike`).
    """

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        policy: str | os.PathLike[str] | Policy | None = None,
        server: str | None = None,
        on_block: NoticeHook | None = None,
        consent: ConsentGateLike | None = None,
    ) -> None:
        self.engine = make_engine(engine, policy)
        self.policy = self.engine.policy
        self.server = server
        self.on_block = on_block
        self.consent = consent
        self.modes: tuple[str, ...] = tuple(self.policy.client_modes)
        self._relay = Relay(self.engine, side=Side.CLIENT, server=server)
        self._sessions: WeakKeyDictionary[Any, str] = WeakKeyDictionary()

    # --- the two wrappers -------------------------------------------------------------------

    def transport(self, inner: Transport) -> CapabilityFilter:
        """``inner`` declaring only the modes the policy offers (``client.elicitation_modes``)."""
        return CapabilityFilter(inner, self.modes)

    def write_stream(self, inner: WriteStream[SessionMessage]) -> WriteStream[SessionMessage]:
        """A ``ClientSession`` write stream declaring only the policy's modes.

        For ``ClientSession(read, guard.write_stream(write), ...)``; with ``mcp.Client`` use
        :meth:`transport`.
        """
        return RestrictingWriter(inner, self.modes)

    def callback(self, inner: ElicitationFnT) -> ElicitationFnT:
        """The host's elicitation callback, guarded (pass it as ``elicitation_callback``)."""

        async def guarded(
            context: ClientRequestContext, params: ElicitRequestParams
        ) -> ElicitResult | ErrorData:
            return await self._handle(context, params, inner)

        return guarded

    # --- one elicitation --------------------------------------------------------------------

    async def _handle(
        self, context: ClientRequestContext, params: ElicitRequestParams, inner: ElicitationFnT
    ) -> ElicitResult | ErrorData:
        version = normalise_version(context.session.protocol_version)
        wire = params.model_dump(by_alias=True, mode="json", exclude_unset=True)
        mode = wire.get("mode") if isinstance(wire.get("mode"), str) else "form"
        round_: _Round = (
            _ModernRound(self, context, version)
            if is_modern(version)
            else _PushRound(self, context, version)
        )
        try:
            request_outcome = self._relay.inspect(
                round_.request(wire),
                Direction.SERVER_TO_CLIENT,
                session=round_.session,
                protocol_version=version,
            )
            decision = request_outcome.decision
            shown = round_.request_params(request_outcome, wire)
            ticket = ElicitationTicket(
                uuid.uuid4().hex,
                self.server,
                version,
                str(mode),
                context.request_id,
                shown if shown is not None else wire,
                decision,
            )
            if shown is None:
                await self._notify("request", self._refusal, ticket, decision)
                return ElicitResult(action=self._refusal)
            host_params = params
            if shown is not wire:
                host_params = type(params).model_validate(shown)
                await self._notify("request", "redacted", ticket, decision)
            return await self._answer(round_, ticket, host_params, context, inner)
        finally:
            round_.close()

    async def _answer(
        self,
        round_: _Round,
        ticket: ElicitationTicket,
        params: ElicitRequestParams,
        context: ClientRequestContext,
        inner: ElicitationFnT,
    ) -> ElicitResult | ErrorData:
        opener = getattr(self.consent, "open", None)
        if callable(opener):
            await _maybe_await(opener(ticket))
        token = _CURRENT.set(ticket)
        try:
            result = await inner(context, params)
        finally:
            _CURRENT.reset(token)
        if isinstance(result, ErrorData):
            return result
        answer = result.model_dump(by_alias=True, mode="json", exclude_unset=True)
        outcome = self._relay.inspect(
            round_.answer(answer),
            Direction.CLIENT_TO_SERVER,
            session=round_.session,
            protocol_version=ticket.protocol_version,
        )
        withheld = _error_of(outcome)
        if withheld is not None:
            # Withheld, not declined: the server (push era) or the caller (2026-07-28) learns why.
            await self._notify("answer", "withheld", ticket, outcome.decision)
            return withheld
        sent = round_.answer_value(outcome, answer)
        if sent is not answer:
            refused = sent.get("action") != answer.get("action")
            outcome_name = str(sent.get("action")) if refused else "redacted"
            await self._notify("answer", outcome_name, ticket, outcome.decision)
            if refused:
                return ElicitResult(action=self._refusal)
            try:
                result = ElicitResult.model_validate(sent)
            except ValidationError:
                return ElicitResult(action=self._refusal)
        if (
            self.consent is not None
            and ticket.mode == "url"
            and result.action == "accept"
            and not await _maybe_await(self.consent.admit(ticket, answer))
        ):
            await self._notify("consent", self._refusal, ticket, outcome.decision)
            return ElicitResult(action=self._refusal)
        return result

    @property
    def _refusal(self) -> Literal["decline", "cancel"]:
        return "cancel" if self.policy.on_block_client == "cancel" else "decline"

    async def _notify(
        self,
        stage: Literal["request", "answer", "consent"],
        outcome: str,
        ticket: ElicitationTicket,
        decision: Decision | None,
    ) -> None:
        if self.on_block is None:
            return
        await _maybe_await(
            self.on_block(GuardNotice(stage, outcome, ticket, decision, _reason(stage, decision)))
        )

    def session_key(self, session: Any) -> str:
        """The engine's session key for one ``ClientSession`` (one connection)."""
        key = self._sessions.get(session)
        if key is None:
            key = f"mcp-client:{uuid.uuid4().hex}"
            self._sessions[session] = key
        return key


def _error_of(outcome: Outcome) -> ErrorData | None:
    """The JSON-RPC error an outcome answers with, as the SDK's ``ErrorData`` (else None)."""
    if not isinstance(outcome, Replace | Reply):
        return None
    error = outcome.message.get("error")
    if not isinstance(error, dict):
        return None
    return ErrorData(
        code=int(error.get("code", -32603)),
        message=str(error.get("message", "")),
        data=error.get("data"),
    )


def _reason(stage: str, decision: Decision | None) -> str:
    if stage == "consent":
        return "the user did not confirm this URL in the consent view"
    if decision is None:
        return "blocked by elicitguard policy"
    acting = [f for f in decision.findings if f.action.rank >= Action.REDACT.rank]
    named = ", ".join(f"{f.code} {f.name}" for f in acting or decision.findings)
    return f"elicitguard policy: {named}" if named else "blocked by elicitguard policy"


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


# --- rebuilding the message an elicitation came in ------------------------------------------


class _Round(Protocol):
    session: str

    def request(self, params: dict[str, Any]) -> dict[str, Any]: ...
    def request_params(self, outcome: Outcome, params: dict[str, Any]) -> dict[str, Any] | None: ...
    def answer(self, answer: dict[str, Any]) -> dict[str, Any]: ...
    def answer_value(self, outcome: Outcome, answer: dict[str, Any]) -> dict[str, Any]: ...
    def close(self) -> None: ...


class _PushRound:
    """A pushed ``elicitation/create`` and its response, in the connection's session."""

    def __init__(
        self, guard: ClientGuard, context: ClientRequestContext, version: str | None
    ) -> None:
        self.guard = guard
        self.session = guard.session_key(context.session)
        self.request_id = context.request_id
        state = guard.engine.store.get(self.session)
        if not state.initialize_seen:
            state.initialize_seen = True
            state.client_capabilities = declared_elicitation(guard.modes)
        if version is not None:
            state.era = version

    def request(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": self.request_id,
            "method": "elicitation/create",
            "params": params,
        }

    def request_params(self, outcome: Outcome, params: dict[str, Any]) -> dict[str, Any] | None:
        if isinstance(outcome, Forward):
            return params
        if isinstance(outcome, Replace) and outcome.message.get("method") == "elicitation/create":
            new = outcome.message.get("params")
            return new if isinstance(new, dict) else None
        return None

    def answer(self, answer: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.request_id, "result": answer}

    def answer_value(self, outcome: Outcome, answer: dict[str, Any]) -> dict[str, Any]:
        if isinstance(outcome, Forward):
            return answer
        result = outcome.message.get("result") if isinstance(outcome, Replace) else None
        return result if isinstance(result, dict) else {"action": self.guard._refusal}

    def close(self) -> None:
        return None


class _ModernRound:
    """One ``inputRequests`` entry and its answer in a retry: a state of its own per round.

    2026-07-28 has no sessions; a round is tied to its retry by the request it retries. The
    callback sees one entry at a time, so each gets a throwaway session in which a
    ``tools/call`` declaring the guard's modes is followed by a one-entry
    ``InputRequiredResult`` and the retry that answers it.
    """

    def __init__(
        self, guard: ClientGuard, context: ClientRequestContext, version: str | None
    ) -> None:
        self.guard = guard
        self.session = f"{guard.session_key(context.session)}:round:{uuid.uuid4().hex}"
        self.key = str(context.request_id)
        self.version = version
        self._id = 0
        elicitation = declared_elicitation(guard.modes)
        caps: dict[str, Any] = {} if elicitation is ABSENT else {"elicitation": elicitation}
        self._meta = {META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: caps}
        opening = self._request({"_meta": self._meta})
        state = guard.engine.store.get(self.session)
        extract(Envelope(opening, Direction.CLIENT_TO_SERVER, side=Side.CLIENT), state, version)

    def _request(self, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        return {"jsonrpc": "2.0", "id": self._id, "method": "tools/call", "params": params}

    def request(self, params: dict[str, Any]) -> dict[str, Any]:
        entry = {"method": "elicitation/create", "params": params}
        result = {"resultType": "input_required", "inputRequests": {self.key: entry}}
        return {"jsonrpc": "2.0", "id": self._id, "result": result}

    def request_params(self, outcome: Outcome, params: dict[str, Any]) -> dict[str, Any] | None:
        if isinstance(outcome, Forward):
            return params
        if not isinstance(outcome, Replace):
            return None
        result = outcome.message.get("result")
        requests = result.get("inputRequests") if isinstance(result, dict) else None
        entry = requests.get(self.key) if isinstance(requests, dict) else None
        new = entry.get("params") if isinstance(entry, dict) else None
        return new if isinstance(new, dict) else None

    def answer(self, answer: dict[str, Any]) -> dict[str, Any]:
        return self._request({"inputResponses": {self.key: answer}, "_meta": self._meta})

    def answer_value(self, outcome: Outcome, answer: dict[str, Any]) -> dict[str, Any]:
        if isinstance(outcome, Forward):
            return answer
        params = outcome.message.get("params") if isinstance(outcome, Replace) else None
        responses = params.get("inputResponses") if isinstance(params, dict) else None
        value = responses.get(self.key) if isinstance(responses, dict) else None
        return value if isinstance(value, dict) else {"action": self.guard._refusal}

    def close(self) -> None:
        self.guard.engine.store.drop(self.session)
