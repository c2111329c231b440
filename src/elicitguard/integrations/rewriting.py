"""Rewriting: applying a decision to one message (:func:`act`).

A decision names findings by JSON pointer; :func:`act` works out which part of the message
each finding owns (an ``inputRequests`` entry, an entry of a -32042 error, one answer of a
retry, or the whole message) and removes, redacts or blocks that part alone where the
protocol allows it, adding the ``decline`` a retry owes for an entry the guard removed. A
message nobody changed is never copied or re-serialised.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elicitguard.base.decision import Action, Decision, Finding
from elicitguard.base.pointer import pointer_tokens
from elicitguard.engine.policy import Policy
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.session import SessionState

if TYPE_CHECKING:
    pass

from elicitguard.integrations.outcomes import (
    _NO_ID,
    Drop,
    Forward,
    Outcome,
    Replace,
    Reply,
    blocked_error,
    withheld_error,
)

__all__ = ["act"]


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
