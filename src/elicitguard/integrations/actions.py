"""Acting on decisions: what an integration does with a message once the engine decided.

Every integration (stdio proxy, HTTP proxy, ASGI middleware, the ``mcp`` SDK client and
server wrappers) funnels traffic through this one module, so that a block looks the same on
every wire and in both eras (DESIGN.md "Decisions in traffic").

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

``inspect`` takes bytes (parsed here with the policy's size and depth limits) or an already
parsed ``dict`` (SDK integrations); it evaluates and then calls :func:`act`.
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

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from elicitguard.base.decision import Action, Decision, Finding
from elicitguard.base.pointer import pointer_tokens
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy
from elicitguard.errors import FrameError
from elicitguard.protocol.envelope import Direction, Envelope, Side, Transport
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.parsing import parse_frame
from elicitguard.protocol.session import SessionState

if TYPE_CHECKING:
    from elicitguard.identity.sealing import RequestStateGuard

__all__ = [
    "PARSE_ERROR",
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

PARSE_ERROR = -32700
_NO_ID = object()


# --- outcomes -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Forward:
    """Send the message on unchanged: its original bytes, never a re-serialisation."""

    decision: Decision | None = None
    close: bool = False


@dataclass(frozen=True, slots=True)
class Replace:
    """Send ``message`` on instead of the original, in the same direction."""

    message: dict[str, Any]
    decision: Decision | None = None
    close: bool = False

    def to_bytes(self) -> bytes:
        """The replacement as compact JSON (no trailing newline)."""
        return dumps(self.message)


@dataclass(frozen=True, slots=True)
class Reply:
    """Forward nothing; send ``message`` back to whoever sent the original."""

    message: dict[str, Any]
    decision: Decision | None = None
    close: bool = False

    def to_bytes(self) -> bytes:
        """The reply as compact JSON (no trailing newline)."""
        return dumps(self.message)


@dataclass(frozen=True, slots=True)
class Drop:
    """Send nothing. ``jsonrpc_id`` is an id recovered from an unparseable frame, if any."""

    reason: str
    decision: Decision | None = None
    close: bool = False
    jsonrpc_id: Any = None


Outcome = Forward | Replace | Reply | Drop


def dumps(message: Mapping[str, Any]) -> bytes:
    """Serialise a message; the standard library takes what orjson refuses.

    orjson refuses lone surrogates and integers past 64 bits; both are valid JSON and may sit
    in a value elicitguard must pass on unchanged (an id, ``requestState``).
    """
    try:
        return orjson.dumps(message)
    except TypeError:
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"))
        return text.encode("ascii")


def error_response(jsonrpc_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": jsonrpc_id, "error": error}


def blocking_findings(decision: Decision) -> list[Finding]:
    """The findings that made ``decision`` a block, most severe first.

    A decision is as severe as its most severe finding, so these are the findings whose own
    action is ``block``; the others (a warning beside the block) stay in the audit record.
    A block that no single finding asked for (a required key that a redaction would remove)
    names every finding.
    """
    blocking = [f for f in decision.findings if f.action is Action.BLOCK] or list(decision.findings)
    return sorted(blocking, key=lambda f: -f.severity.rank)


def block_reason(decision: Decision) -> str:
    """One line for the person who sees the error: which rule blocked, and why.

    Finding messages name fields and rules, never a value from the message, so the line is
    safe to show; ``decision_id`` leads to the whole audit record.
    """
    blocking = blocking_findings(decision)
    if not blocking:
        return "Blocked by elicitguard policy"
    first = blocking[0]
    line = f"Blocked by elicitguard policy: {first.code} {first.name}: {first.message}"
    others = list(dict.fromkeys(f.code for f in blocking[1:] if f.code != first.code))
    if others:
        line += f" (also {', '.join(others)})"
    return line


WITHHELD = "elicitguard withheld the user's answer"


def withheld_error(jsonrpc_id: Any, decision: Decision, policy: Policy) -> dict[str, Any]:
    """The error that replaces an answer elicitguard will not pass on (EG204, in both eras).

    A ``decline`` in its place would tell the server, and through it the user, that the user
    refused, when the user answered and elicitguard kept the answer back. So the server (push
    era: the answer to its ``elicitation/create``) or the client (2026-07-28: the retry that
    carried the answer, which then never reaches the server) gets the policy's error code,
    a message that says the answer was withheld and by which rule, and
    ``data.elicitguard.withheld: true``.
    """
    error = blocked_error(jsonrpc_id, decision, policy)
    body = error["error"]
    body["message"] = WITHHELD + body["message"].removeprefix("Blocked by elicitguard policy")
    body["data"]["elicitguard"]["withheld"] = True
    return error


def blocked_error(jsonrpc_id: Any, decision: Decision, policy: Policy) -> dict[str, Any]:
    """The error a block produces: the policy's code and ``data.elicitguard``.

    The message is one human line naming the rule that blocked and why (:func:`block_reason`);
    ``data.elicitguard.codes`` lists the codes that blocked, ``decision_id`` the audit record
    that holds every finding. Nothing from the blocked message is repeated.
    """
    codes = list(dict.fromkeys(f.code for f in blocking_findings(decision)))
    data = {"elicitguard": {"codes": codes, "decision_id": decision.decision_id}}
    return error_response(jsonrpc_id, policy.push_error_code, block_reason(decision), data)


# --- acting ---------------------------------------------------------------------------------


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


def act(
    decision: Decision,
    envelope: Envelope,
    *,
    policy: Policy,
    state: SessionState | None = None,
) -> Outcome:
    """What to do with ``envelope`` given ``decision`` (see the module docstring).

    ``state`` is the session state the decision was made in; it holds the chain state where
    removed ``inputRequests`` keys are remembered. Without it nothing is remembered and no
    ``decline`` is added to retries.
    """
    if decision.fast_path or not decision.enforced:
        return Forward(decision)
    outcome = _Actor(decision, envelope, policy, state).run()
    if isinstance(outcome, Replace | Reply):
        decision.replacement = outcome.message
    return outcome


@dataclass(slots=True)
class _Scope:
    """A part of a message that can be acted on alone (an entry, an answer)."""

    pointer: str
    item: Item
    kind: str  # "request_entry" | "error_entry" | "answer" | "whole"
    key: str | None = None
    actions: list[Finding] = field(default_factory=list)


class _Actor:
    """One application of a decision to one message."""

    def __init__(
        self, decision: Decision, envelope: Envelope, policy: Policy, state: SessionState | None
    ) -> None:
        self.decision = decision
        self.envelope = envelope
        self.message = envelope.message
        self.policy = policy
        self.state = state
        self.client_side = envelope.side is Side.CLIENT
        self.refusal = policy.on_block_client if self.client_side else "decline"

    # The message as a whole ------------------------------------------------------------------

    def run(self) -> Outcome:
        items = [i for i in self.decision.items if isinstance(i, Item)]
        scopes = _scopes(items)
        whole = Action.ALLOW
        loose: list[Finding] = []
        for finding in self.decision.findings:
            if finding.action.rank < Action.REDACT.rank:
                continue
            scope = _owner(scopes, finding.pointer)
            if scope is not None:
                scope.actions.append(finding)
                continue
            loose.append(finding)
            if finding.action.rank > whole.rank:
                whole = finding.action
        if whole is Action.BLOCK:
            return self._block_whole()
        if not loose and not any(s.actions for s in scopes) and not _retry_owes(items):
            return Forward(self.decision)  # nothing to change: no copy, no re-serialisation
        document = copy.deepcopy(self.message)
        try:
            changed = bool(loose) and self._redact_whole(document, items, loose)
            removed: list[str] = []
            for scope in scopes:
                if not scope.actions:
                    continue
                if not self._redact_scope(document, scope) and not self._block_scope(
                    document, scope, removed
                ):
                    raise _BlockWhole
                changed = True
            if removed:
                self._remember(document, items, removed)
                if self._nothing_left(document, items):
                    raise _BlockWhole
            changed = self._add_declines(document, items) or changed
        except _BlockWhole:
            return self._block_whole()
        if not changed:
            return Forward(self.decision)
        return Replace(document, self.decision)

    def _block_whole(self) -> Outcome:
        msg = self.message
        jsonrpc_id = msg.get("id", _NO_ID)
        method = msg.get("method")
        if isinstance(method, str):
            if jsonrpc_id is _NO_ID:
                return Drop("blocked notification", self.decision)
            if self.client_side and method == "elicitation/create":
                result = {"action": self.policy.on_block_client}
                return Reply({"jsonrpc": "2.0", "id": jsonrpc_id, "result": result}, self.decision)
            error = withheld_error if self._answering else blocked_error
            return Reply(error(jsonrpc_id, self.decision, self.policy), self.decision)
        if jsonrpc_id is _NO_ID:
            return Drop("blocked message without id", self.decision)
        if self._answering:
            # Never a false decline: the server learns that elicitguard withheld the answer.
            return Replace(withheld_error(jsonrpc_id, self.decision, self.policy), self.decision)
        return Replace(blocked_error(jsonrpc_id, self.decision, self.policy), self.decision)

    @property
    def _answering(self) -> bool:
        """True for a client's message carrying answers (a push response or a retry)."""
        return self.envelope.direction is Direction.CLIENT_TO_SERVER and _is_answer(self.decision)

    def _redact_whole(
        self, document: dict[str, Any], items: list[Item], findings: list[Finding]
    ) -> bool:
        """Redact findings outside every entry: they apply to the pushed request or answer."""
        targets = [i for i in items if i.kind in _REDACTABLE and _scope_kind(i) is None]
        if not targets:
            raise _BlockWhole  # nothing here can be redacted: fail closed
        for item in targets:
            scope = _Scope(item.pointer, item, "whole", actions=findings)
            if self._redact_scope(document, scope):
                continue
            if item.kind is not ItemKind.ELICIT_RESULT:
                raise _BlockWhole
            _set(document, item.pointer, {"action": self.refusal})
        return True

    # One scope -------------------------------------------------------------------------------

    def _redact_scope(self, message: dict[str, Any], scope: _Scope) -> bool:
        """Remove offending keys; False when that cannot be done (a required key, no field)."""
        fields = {f.field for f in scope.actions if f.action is Action.REDACT}
        if None in fields or any(f.action is Action.BLOCK for f in scope.actions):
            return False
        target = _get(message, scope.item.pointer)
        if not isinstance(target, dict):
            return False
        if scope.item.kind is ItemKind.ELICIT_RESULT:
            schema = scope.item.schema
            required = _required(schema)
            if fields & required:
                _set(message, scope.item.pointer, {"action": self.refusal})
                return True
            content = target.get("content")
            if isinstance(content, dict):
                for name in fields:
                    content.pop(name, None)
            return True
        if scope.item.kind is ItemKind.FORM_REQUEST:
            schema = target.get("requestedSchema")
            if not isinstance(schema, dict) or fields & _required(schema):
                return False
            properties = schema.get("properties")
            if isinstance(properties, dict):
                for name in fields:
                    properties.pop(name, None)
            return True
        return False

    def _block_scope(self, message: dict[str, Any], scope: _Scope, removed: list[str]) -> bool:
        """Remove or refuse one entry; False when the whole message must go instead."""
        if scope.kind == "request_entry" and scope.key is not None:
            holder = _get(message, scope.pointer.rsplit("/", 1)[0])
            if isinstance(holder, dict):
                holder.pop(scope.key, None)
                removed.append(scope.key)
                return True
            return False
        if scope.kind == "answer":
            return False  # a retry with a withheld answer goes no further (withheld_error)
        if scope.kind == "error_entry":
            _set(message, scope.pointer, None)  # compacted in _after_removal
            removed.append(scope.pointer)
            return True
        return False

    def _remember(self, document: dict[str, Any], items: list[Item], removed: list[str]) -> None:
        """Keep removed ``inputRequests`` keys for the retry; compact a -32042 list."""
        keys = [k for k in removed if not k.startswith("/")]
        if keys and self.state is not None:
            chain_key = next(
                (i.facts.get("chain_key") for i in items if i.kind is ItemKind.INPUT_REQUIRED),
                None,
            )
            chain = self.state.chains.get(chain_key) if isinstance(chain_key, str) else None
            if chain is not None:
                chain.removed.update(keys)
        error = document.get("error")
        data = error.get("data") if isinstance(error, dict) else None
        if isinstance(data, dict) and isinstance(data.get("elicitations"), list):
            data["elicitations"] = [e for e in data["elicitations"] if e is not None]

    def _add_declines(self, message: dict[str, Any], items: list[Item]) -> bool:
        """On a retry, answer each entry the guard removed from the round it retries."""
        retry = next((i for i in items if i.kind is ItemKind.RETRY), None)
        if retry is None:
            return False
        chain = retry.facts.get("chain")
        removed = getattr(chain, "removed", None)
        if not removed:
            return False
        params = message.get("params")
        if not isinstance(params, dict):
            return False
        responses = params.get("inputResponses")
        if responses is None:
            responses = params["inputResponses"] = {}
        if not isinstance(responses, dict):
            return False
        changed = False
        for key in sorted(removed):
            if key not in responses:
                responses[key] = {"action": self.refusal}
                changed = True
        return changed

    def _nothing_left(self, document: dict[str, Any], items: list[Item]) -> bool:
        """True when removing blocked entries left the peer nothing to act on."""
        for item in items:
            if item.kind is ItemKind.INPUT_REQUIRED:
                holder = _get(document, item.pointer)
                return not (isinstance(holder, dict) and holder.get("inputRequests"))
        error = document.get("error")
        data = error.get("data") if isinstance(error, dict) else None
        return not (isinstance(data, dict) and data.get("elicitations"))


class _BlockWhole(Exception):
    """Raised inside an actor when a part cannot be acted on alone."""


_REDACTABLE = frozenset({ItemKind.ELICIT_RESULT, ItemKind.FORM_REQUEST})


def _retry_owes(items: list[Item]) -> bool:
    """True for a retry of a round the guard removed entries from (declines to add)."""
    return any(
        i.kind is ItemKind.RETRY and getattr(i.facts.get("chain"), "removed", None) for i in items
    )


def _is_answer(decision: Decision) -> bool:
    """True for a client's answer to an elicitation (not a task handle)."""
    kinds = {i.kind for i in decision.items if isinstance(i, Item)}
    return ItemKind.ELICIT_RESULT in kinds and ItemKind.TASK_CREATED not in kinds


def _scope_kind(item: Item) -> str | None:
    if item.facts.get("embedded") and item.input_key is not None:
        return "request_entry"
    if item.facts.get("in_error"):
        return "error_entry"
    if item.kind is ItemKind.ELICIT_RESULT and item.input_key is not None:
        return "answer"
    return None


def _scopes(items: list[Item]) -> list[_Scope]:
    scopes: list[_Scope] = []
    for item in items:
        kind = _scope_kind(item)
        if kind == "request_entry":
            pointer = item.pointer.removesuffix("/params")
            scopes.append(_Scope(pointer, item, kind, item.input_key))
        elif kind == "error_entry":
            scopes.append(_Scope(item.pointer, item, kind))
        elif kind == "answer":
            pointer = item.pointer.removesuffix("/result")
            scopes.append(_Scope(pointer, item, kind, item.input_key))
    return scopes


def _owner(scopes: list[_Scope], pointer: str) -> _Scope | None:
    for scope in scopes:
        if pointer == scope.pointer or pointer.startswith(scope.pointer + "/"):
            return scope
    return None


def _required(schema: Any) -> set[str]:
    required = schema.get("required") if isinstance(schema, dict) else None
    return {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()


def _tokens(pointer: str) -> list[str]:
    if not pointer:
        return []
    return pointer_tokens(pointer)


def _get(document: Any, pointer: str) -> Any:
    node = document
    for token in _tokens(pointer):
        if isinstance(node, dict):
            node = node.get(token)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _set(document: Any, pointer: str, value: Any) -> None:
    tokens = _tokens(pointer)
    if not tokens:
        return
    parent = document
    for token in tokens[:-1]:
        if isinstance(parent, dict):
            parent = parent.get(token)
        elif isinstance(parent, list) and token.isdigit() and int(token) < len(parent):
            parent = parent[int(token)]
        else:
            return
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        parent[int(last)] = value


# --- unparseable frames ---------------------------------------------------------------------

_ID = re.compile(rb'"id"\s*:\s*(-?[0-9]{1,19}(?![0-9.eE])|"(?:[^"\\\x00-\x1f]|\\.){0,256}")')
_METHOD = re.compile(rb'"method"\s*:\s*"')
_SCAN = 8192


def recover_id(raw: bytes) -> tuple[Any, bool]:
    """An id found near the start of a broken frame, and whether it looks like a request.

    Returns ``(None, False)`` when no id can be recovered. Only the first
    kilobytes are looked at: an id comes early in every frame an SDK writes.
    """
    head = raw[:_SCAN]
    found = _ID.search(head)
    if found is None:
        return None, False
    token = found.group(1)
    try:
        value = json.loads(token)
    except ValueError:
        return None, False
    return value, _METHOD.search(head) is not None


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
