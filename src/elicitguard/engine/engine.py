"""The engine: one message in, one :class:`Decision` out, under a compiled policy.

:meth:`Engine.evaluate` (and its async twin :meth:`Engine.aevaluate`) is the only way in.
Every door enters there: the relay behind the stdio and HTTP proxies, the ASGI middleware
and the SDK wrappers, the gateway adapters, the linter, the rule cases, the egress guard and
the URL binder. Its body is the pipeline, stage by stage, each named by a comment:

1. **parse**: the message arrives as one frame's bytes (parsed under the policy's size and
   depth limits), the parsed object, an :class:`Envelope`, or the :class:`FrameError` of a
   frame the door could not read; a frame that does not parse ends here as EG903-EG905.
2. **requestState, inbound** (opt-in sealing, ``request_state=``): a sealed state is opened
   before anything judges the retry, or refused with -32602 (``Decision.reply``).
3. **classify and extract**: one pass in ``protocol``
   (:func:`elicitguard.protocol.reading.read`). Ordinary traffic leaves it with its session
   bookkeeping done and nothing built (the fast path: a counter, the shared decision);
   anything else leaves with its items, the ordinary-rule items the policy asked for, and
   the repeated-key check done. The engine never calls back into ``protocol`` for it.
   Its first step, the classification (:func:`elicitguard.protocol.reading.classify`),
   runs before anything else for a message seen without headers or an explicit version:
   on a parsed message, or on a frame's bytes without parsing them whole
   (:mod:`elicitguard.protocol.frame_route`); a message it cannot call ordinary goes
   through the stages in order, and is not classified twice.
4. **dispatch**: each item runs the rules the policy compiled for its kind and side (pure
   checks reuse the hits of an identical item, :mod:`elicitguard.engine.verdicts`).
5. **emit findings**: hits become findings, or suppressions where an exception applies
   (the injected clock says whether it has expired).
6. **decide**: the most severe action wins; the decision carries its items and envelope.
7. **record**: the audit record (elicitation, findings or suppressions only).
8. **requestState, outbound**: a result's state is sealed on its way to the client.

What to do with the decision on a wire (forward, replace, reply, drop) is the integrations'
half (:mod:`elicitguard.integrations.actions`). A check that raises never crashes the
caller: it becomes an EG901 finding whose action follows ``on_error`` (block unless the
policy says warn), and the audit record says so. The module is over 500 lines because the
stages and the finding-building they share stay in one reading order.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import string
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from elicitguard.audit.records import AuditLog
from elicitguard.audit.sink import AuditSink, open_sink
from elicitguard.base.decision import (
    Action,
    Confidence,
    Decision,
    Finding,
    Hit,
    Severity,
    Suppressed,
    finding_fingerprint,
)
from elicitguard.base.keys import KeyRing, load_keyring
from elicitguard.engine.context import CheckContext
from elicitguard.engine.decision_ids import new_decision_id
from elicitguard.engine.ordinary import ordinary_needs
from elicitguard.engine.policy import CompiledRule, Policy, load_policy
from elicitguard.engine.state import MemoryStateStore, StateStore
from elicitguard.engine.verdicts import VerdictCache, item_key
from elicitguard.engine.warmup import warm_up_envelopes
from elicitguard.errors import FrameError
from elicitguard.identity.sealing import RequestStateGuard
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.frame_route import classify_frame
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.parsing import may_hide_elicitation, parse_frame
from elicitguard.protocol.reading import ORDINARY, Reading, classify, read
from elicitguard.protocol.session import BoundedMap, SessionState
from elicitguard.protocol.versions import normalise_version

__all__ = ["FRAME_ERROR_CODES", "Engine", "Message"]

#: The forms :meth:`Engine.evaluate` takes a message in: one frame's bytes, the parsed
#: object, an envelope, or the error of a frame the caller could not read.
Message = bytes | bytearray | memoryview | dict[str, Any] | Envelope | FrameError

#: How frame problems map onto engine rules.
FRAME_ERROR_CODES = {
    "too_large": "EG903",
    "not_json": "EG904",
    "binary": "EG904",
    "not_object": "EG904",
    "batch": "EG904",
    "bad_envelope": "EG904",
    "duplicate_keys": "EG904",
    "header_mismatch": "EG904",
    "too_deep": "EG905",
}


#: A dispatch plan: the rules in order, whether an era-bound rule was left out for want of
#: an era, and whether any rule of the (kind, side) is pure.
_Plan = tuple[tuple[CompiledRule, ...], bool, bool]
#: Plans per engine before the table starts afresh (eras are few; this only bounds it).
_MAX_PLANS = 256

#: How many issued ``requestState`` digests the engine remembers across sessions (EG504).
_ISSUED_STATES = 65536


class _SafeFormat(string.Formatter):
    """Message templates: a missing argument prints as ``?`` instead of raising."""

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        if isinstance(key, str):
            return kwargs.get(key, "?")
        return super().get_value(key, args, kwargs)


_FORMAT = _SafeFormat()


def _format_message(template: str, args: dict[str, Any]) -> str:
    """A finding's message: ``template`` filled from a hit's ``args`` (never a secret value:
    see :class:`~elicitguard.base.decision.Hit`), remembered per template and typed args,
    since the same hit recurs on every message of a server that asks the same thing."""
    try:
        key = tuple((name, type(value), value) for name, value in args.items())
        return _formatted(template, key)
    # An unhashable argument: format it afresh (a TypeError of the format itself repeats).
    except TypeError:
        return _format_now(template, args)


@functools.lru_cache(maxsize=4096)
def _formatted(template: str, key: tuple[tuple[str, type, Any], ...]) -> str:
    return _format_now(template, {name: value for name, _, value in key})


def _format_now(template: str, args: dict[str, Any]) -> str:
    try:
        return _FORMAT.vformat(template, (), args)
    except (ValueError, IndexError, AttributeError, KeyError):
        return template


#: A finding's fingerprint is a hash of its rule, server, method and pointer (no value):
#: remembered, as the same findings recur; pointers past 512 characters are hashed afresh.
_fingerprint = functools.lru_cache(maxsize=8192)(finding_fingerprint)


#: The :class:`Envelope` fields :meth:`Engine.evaluate` takes as keywords beside a message.
_CONTEXT_FIELDS = frozenset(
    f.name
    for f in dataclasses.fields(Envelope)
    if f.name not in {"message", "direction", "side", "session"}
)


def _frame_envelope(
    direction: Direction, side: Side, session: str | None, context: dict[str, Any]
) -> Envelope:
    """The envelope a frame that could not be read is recorded under (no message, no bytes)."""
    kept = {k: v for k, v in context.items() if k != "raw"}
    return Envelope({}, direction, side=side, session=session, **kept)


def _unknown_context(context: dict[str, Any]) -> None:
    """A misspelt keyword (``sesion=``) is a ``TypeError`` on every route."""
    unknown = ", ".join(sorted(set(context) - _CONTEXT_FIELDS))
    raise TypeError(f"evaluate() got unexpected keyword argument(s): {unknown}")


def _reply_decision_id(reply: dict[str, Any]) -> str:
    """The ``decision_id`` the request-state guard put in its refusal."""
    error = reply.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    ours = data.get("elicitguard") if isinstance(data, dict) else None
    found = ours.get("decision_id") if isinstance(ours, dict) else None
    return found if isinstance(found, str) else ""


class Engine:
    """Evaluates envelopes under one policy; holds session state and the audit log."""

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        store: StateStore | None = None,
        audit: AuditSink | None = None,
        keys: KeyRing | None = None,
        default_era: str | None = None,
        clock: Callable[[], dt.date] = dt.date.today,
        request_state: RequestStateGuard | None = None,
    ) -> None:
        """``clock`` says what day it is: an exception stops suppressing on its ``expires:``
        date in a running engine (tests pass a fake clock). ``request_state`` is the opt-in
        requestState sealing stage (``--seal-request-state``): states are sealed on their
        way to the client and opened, or refused with -32602, before a retry is judged."""
        self.policy = policy if policy is not None else load_policy()
        self.keys = (
            keys if keys is not None else load_keyring(self.policy.keys_file, self.policy.keys_env)
        )
        self.store = (
            store
            if store is not None
            else MemoryStateStore(
                ttl_s=self.policy.limits.state_ttl_s,
                max_sessions=self.policy.limits.state_max_sessions,
            )
        )
        sink = (
            audit
            if audit is not None
            else open_sink(
                self.policy.audit_sink,
                self.policy.audit_file,
                queue=self.policy.audit_queue,
                when_full=self.policy.audit_when_full,
            )
        )
        self.audit = AuditLog(sink, self.keys)
        if self.policy.audit_chain and sink.enabled:
            try:
                sink.enable_chain(self.keys)  # refuses a random key: it must be verifiable
            except Exception:
                sink.close()
                raise
        self._counters = self.audit.counters
        self.default_era = normalise_version(default_era)
        self.unknown_era_messages = 0
        self.clock = clock
        #: The requestState stage of :meth:`evaluate`; a relay built with ``sealing=`` sets it.
        self.request_state = request_state
        self._fast = Decision(
            Action.ALLOW,
            policy_name=self.policy.name,
            policy_revision=self.policy.revision,
            environment=self.policy.environment,
            mode=self.policy.mode,
            enforced=self.policy.mode == "enforce",
            fast_path=True,
        )
        #: What checks may use beyond the message (CheckContext.services): integrations add
        #: theirs, e.g. the egress guard registers its credential vault as ``vault``.
        self.services: dict[str, Any] = {
            "identity": dict(self.policy.identity),
            "limits": self.policy.limits,  # EG123 reads elicitations_per_minute
            "rates": {},  # EG123's per-server windows (one engine, one set of windows)
            # EG504: which session each requestState digest was issued in (a state
            # presented in another one is misused), and whether every session this engine
            # sees is seen from its start (integrations set it: see Relay).
            "issued_states": BoundedMap[str, str](_ISSUED_STATES),
            "whole_sessions": False,
        }
        #: What the ordinary-traffic rules want to see; the protocol pass reads against it.
        self._needs = ordinary_needs(self.policy)
        #: Hits of pure checks per identical item (engine/verdicts.py); ``None`` turns
        #: the reuse off (the equivalence tests compare both).
        self.verdicts: VerdictCache | None = VerdictCache()
        #: Per (kind, side, direction, era): the rules that run, filtered once
        #: (:meth:`_plan`); made under ``_plans_policy`` and its dispatch table.
        self._plans: dict[tuple[Any, ...], _Plan] = {}
        self._plans_policy: Policy = self.policy
        self._plans_dispatch: Any = self.policy.dispatch
        today = clock()
        for exception in self.policy.exceptions:
            if exception.expired(today):
                self.audit.event(
                    "elicitguard.policy_warning",
                    code="EG902",
                    message=f"exception {exception.index} expired on {exception.spec.expires}",
                    file=exception.file,
                    line=exception.line,
                )

    def warm_up(self, *, serving: bool = True) -> None:
        """Load the data checks load on first use now (see :mod:`elicitguard.engine.warmup`).

        Proxies call it before serving and the linter before reading, so that the first
        elicitation does not carry a tenth of a second of loading. This engine's state is
        not touched. Never raises: a failure here only means the first real message pays.
        ``serving`` (a proxy) compiles the community catalogue at the lowest CPU priority,
        so that traffic never waits on it; a command (``serving=False``) at its own.
        """
        from elicitguard.checks.secrets import load_community_in_background

        # The community credential catalogue compiles meanwhile.
        load_community_in_background(polite=serving)
        try:
            engine = Engine(self.policy, audit=AuditSink(None), keys=KeyRing.random())
            for envelope in warm_up_envelopes():
                engine.evaluate(envelope)
        except Exception:  # best effort by design: the first real message pays instead
            return

    # --- evaluation: the one way in -------------------------------------------------------

    def evaluate(
        self,
        message: Message,
        direction: Direction | None = None,
        *,
        side: Side = Side.CAPTURE,
        session: str | None = None,
        items: Sequence[Item] | None = None,
        **context: Any,
    ) -> Decision:
        """Decide about one message, in whatever form the caller holds it.

        ``message`` is one JSON-RPC frame's bytes (parsed here under the policy's size and
        depth limits), the parsed object, an :class:`Envelope`, or the :class:`FrameError`
        of a frame the caller could not read itself (a line too long to buffer). For bytes
        and objects, ``direction`` is required and ``context`` takes the other
        :class:`Envelope` fields (``transport``, ``server``, ``headers``, ``principal``,
        ``protocol_version``, ``raw``, ``location``, ``ts``); ordinary traffic is decided
        without building an envelope. ``items`` judges items built in process instead of
        reading them from the message (the egress guard's ``outbound_call``, the URL
        binder's ``url_binding``).

        The stages, in order (the module docstring describes each): parse, open a sealed
        ``requestState``, classify and extract, dispatch, emit findings, decide, record,
        seal a ``requestState``. Never raises for anything the message contains.
        """
        classified: bool | None = None
        kind = message.__class__
        if (
            (kind is dict or kind is bytes)
            and direction is not None
            and items is None
            and self.request_state is None
        ):
            # 3, first: the fast route (the classification step of the protocol pass) for a
            # message seen without headers or an explicit version, before anything is
            # built or timed: a frame's bytes are not even parsed whole. Ordinary traffic
            # ends here with its bookkeeping done. Written flat, as it runs on every
            # message: no envelope, no keyword call, one counter.
            raw = None
            plain = True
            if context:
                if not _CONTEXT_FIELDS.issuperset(context):
                    _unknown_context(context)
                raw = context.get("raw")
                plain = not context.get("headers") and context.get("protocol_version") is None
            if plain:
                state = self.store.get(session or "")
                if kind is dict:
                    classified = classify(
                        message,  # type: ignore[arg-type]  # a dict: the test above
                        direction,
                        side,
                        state,
                        self.default_era,
                        self._needs,
                        self.services,
                    )
                    if classified and (raw is None or not may_hide_elicitation(raw)):
                        self._counters["fast_path"] += 1
                        return self._fast
                elif classify_frame(
                    message,  # type: ignore[arg-type]  # bytes: the test above
                    direction,
                    side,
                    state,
                    self.default_era,
                    self._needs,
                    self.services,
                    max_bytes=(limits := self.policy.limits).max_message_bytes,
                    max_depth=limits.max_depth,
                ):
                    self._counters["fast_path"] += 1
                    return self._fast
        started = time.perf_counter_ns()
        # 1. parse: a message (or the frame error that stops here) and its envelope, if any
        envelope: Envelope | None
        if isinstance(message, Envelope):
            envelope, msg = message, message.message
            direction, side, session = message.direction, message.side, message.session
        else:
            if direction is None:
                raise TypeError("evaluate() needs a direction unless it is given an Envelope")
            if context and not _CONTEXT_FIELDS.issuperset(context):
                _unknown_context(context)
            envelope = None
            if isinstance(message, dict):
                msg = message
            elif isinstance(message, FrameError):
                return self._frame_decision(
                    message, _frame_envelope(direction, side, session, context), started
                )
            else:
                raw = bytes(message)
                try:
                    msg = parse_frame(
                        raw,
                        max_bytes=self.policy.limits.max_message_bytes,
                        max_depth=self.policy.limits.max_depth,
                    )
                except FrameError as exc:
                    return self._frame_decision(
                        exc, _frame_envelope(direction, side, session, context), started
                    )
                context["raw"] = raw
        if items is not None:
            if envelope is None:
                envelope = Envelope(msg, direction, side=side, session=session, **context)
            return self._judge_items(envelope, list(items), started)
        # 2. requestState, inbound: a sealed state is opened before anything judges the retry
        guard = self.request_state
        rewritten: dict[str, Any] | None = None
        if guard is not None and direction is Direction.CLIENT_TO_SERVER:
            principal = envelope.principal if envelope is not None else context.get("principal")
            opened = guard.client_message(msg, principal=principal, connection=session)
            if opened.reply is not None:
                return self._refused(opened.reply, started)
            if opened.message is not None:
                msg = rewritten = opened.message
                if envelope is not None:
                    envelope = dataclasses.replace(envelope, message=msg)
        # 3. classify and extract: one pass in protocol (bookkeeping done, or the items)
        state = self.store.get(session or "")
        reading = read(
            msg,
            direction,
            state,
            self.default_era,
            side=side,
            session=session,
            envelope=envelope,
            context=context,
            needs=self._needs,
            services=self.services,
            classified=classified,
        )
        if reading is ORDINARY:
            self._counters["fast_path"] += 1
            decision = self._fast
        else:
            judged = reading.envelope
            assert judged is not None  # every reading but ORDINARY carries its envelope
            envelope = judged
            if reading.failure is not None:
                decision = self._engine_failure(judged, reading.failure, started)
            elif reading.repeated_key is not None and reading.ordinary:
                decision = self._hidden_duplicates(reading.repeated_key, judged, started)
            elif reading.ordinary:
                self._counters["fast_path"] += 1
                decision = self._fast
            else:
                # 4-7. dispatch, emit findings, decide, record
                decision = self._judge(judged, state, reading, started)
            if decision is not self._fast:
                decision.envelope = envelope = reading.received  # as received, for acting on it
        # 8. requestState, outbound: sealed on its way to the client, after the record
        if guard is not None and direction is Direction.SERVER_TO_CLIENT:
            sealed = guard.server_message(msg, connection=session)
            if sealed.message is not None:
                rewritten = sealed.message
        if rewritten is None:
            return decision
        judged = decision.envelope or envelope
        if judged is None:
            judged = Envelope(msg, direction, side=side, session=session, **context)
        if decision is self._fast:
            decision = dataclasses.replace(decision)
        decision.envelope = dataclasses.replace(judged, message=rewritten)
        decision.replacement = rewritten
        return decision

    async def aevaluate(
        self,
        message: Message,
        direction: Direction | None = None,
        *,
        side: Side = Side.CAPTURE,
        session: str | None = None,
        items: Sequence[Item] | None = None,
        **context: Any,
    ) -> Decision:
        """The async twin of :meth:`evaluate` (evaluation is CPU-bound and short)."""
        return self.evaluate(message, direction, side=side, session=session, items=items, **context)

    def _refused(self, reply: dict[str, Any], started: int) -> Decision:
        """A sealed ``requestState`` that did not open: answered, never judged or forwarded.

        The guard has written the audit event (EG504); the decision carries the answer.
        """
        return Decision(
            Action.BLOCK,
            decision_id=_reply_decision_id(reply),
            policy_name=self.policy.name,
            policy_revision=self.policy.revision,
            environment=self.policy.environment,
            mode=self.policy.mode,
            enforced=True,
            errors=("request_state_refused",),
            duration_us=(time.perf_counter_ns() - started) // 1000,
            reply=reply,
        )

    def _judge(
        self,
        envelope: Envelope,
        state: SessionState,
        reading: Reading,
        started: int,
    ) -> Decision:
        """Run the rules the policy dispatches for each item; decide; record."""
        items = reading.items
        for item in items:
            if item.kind is ItemKind.INPUT_REQUIRED:
                self._remember_issued(item, envelope.session)
        findings: list[Finding] = []
        suppressed: list[Suppressed] = []
        errors: list[str] = []
        if reading.repeated_key is not None:
            findings.extend(self._frame_findings(reading.repeated_key, envelope))
        # 4-5. dispatch each item to its rules; hits become findings or suppressions
        self._run_items(envelope, state, items, findings, suppressed, errors)
        # 6. decide
        decision = self._decision(findings, suppressed, errors, items, started, envelope)
        # 7. record
        if reading.elicitation or findings or suppressed:
            self._record(decision, envelope)
        else:
            self.audit.count_fast_path()
        return decision

    def _remember_issued(self, item: Item, session: str | None) -> None:
        """Note the session an ``InputRequiredResult``'s ``requestState`` was issued in."""
        key = item.facts.get("chain_key")
        if isinstance(key, str) and key.startswith("rs:"):
            issued: BoundedMap[str, str] = self.services["issued_states"]
            issued.put(key, session or "")

    def _hidden_duplicates(self, error: FrameError, envelope: Envelope, started: int) -> Decision:
        """EG904 for an ordinary-looking frame whose repeated key could hide elicitation.

        Its bookkeeping is done (it is ordinary), so only the frame finding is left to
        decide and record; it is not counted as fast path.
        """
        findings = self._frame_findings(error, envelope)
        decision = self._decision(findings, [], [error.kind], [], started, envelope)
        self._record(decision, envelope)
        return decision

    def _run_items(
        self,
        envelope: Envelope,
        state: SessionState,
        items: list[Item],
        findings: list[Finding],
        suppressed: list[Suppressed],
        errors: list[str],
    ) -> None:
        """Run every rule the policy dispatches for each item."""
        ctx = CheckContext(
            envelope,
            self.policy.environment,
            envelope.side,
            self.policy.lists,
            state,
            items[0].era,
            services=self.services,
        )
        unknown_era = False
        plans = self._dispatch_plans()  # first: a replaced policy also replaces the verdicts
        verdicts = self.verdicts
        side, direction = envelope.side, envelope.direction
        for item in items:
            ctx.era = item.era
            plan_key = (item.kind, side, direction, item.era)
            plan = plans.get(plan_key)
            if plan is None:
                plan = self._plan(plans, plan_key)
            rules, skipped_unknown_era, any_pure = plan
            if skipped_unknown_era:
                unknown_era = True
            key = (
                item_key(item, envelope.server, side, direction)
                if verdicts is not None and any_pure
                else None
            )
            # The audit record's item part is remembered by it (none: rendered afresh).
            item.digest = key[0] if key is not None else None
            cached = verdicts.get(key) if key is not None and verdicts is not None else None
            fresh: dict[str, list[Hit]] | None = {} if key is not None and cached is None else None
            for rule in rules:
                if cached is not None and rule.pure:
                    known = cached.get(rule.code)
                    if known is not None:
                        if known:  # most pure rules find nothing: nothing to emit
                            self._emit(rule, item, ctx, known, findings, suppressed)
                        continue
                hits = self._run_rule(rule, item, ctx, findings, suppressed, errors)
                if fresh is not None and rule.pure:
                    if hits is None:  # it raised: judge this item afresh next time too
                        fresh = None
                    else:
                        fresh[rule.code] = hits
            if fresh is not None and key is not None and verdicts is not None:
                verdicts.put(key, fresh)
        if unknown_era:
            self.unknown_era_messages += 1

    def _dispatch_plans(self) -> dict[tuple[Any, ...], _Plan]:
        """The plans compiled so far, for this engine's policy and dispatch table.

        A policy (or its dispatch table) replaced on a running engine starts afresh: no
        plan, and no reused verdict, outlives the policy it was made under.
        """
        policy = self.policy
        if policy is not self._plans_policy or policy.dispatch is not self._plans_dispatch:
            self._plans_policy, self._plans_dispatch = policy, policy.dispatch
            self._plans = {}
            if self.verdicts is not None:
                self.verdicts = VerdictCache(self.verdicts.limit)
        return self._plans

    def _plan(self, plans: dict[tuple[Any, ...], _Plan], key: tuple[Any, ...]) -> _Plan:
        """The rules that run for items of one (kind, side, direction, era), in policy order.

        The direction and era filters of each rule are applied once here rather than per
        item; the plan also says whether an era-bound rule was left out because the era is
        unknown (counted as before) and whether any rule is pure (worth a verdict key).
        """
        kind, side, direction, era = key
        rules: list[CompiledRule] = []
        skipped = False
        for rule in self.policy.dispatch.get((kind, side), ()):
            if rule.directions is not None and direction not in rule.directions:
                continue
            if rule.eras is not None:
                if era is None:
                    skipped = True
                    continue
                if era not in rule.eras:
                    continue
            rules.append(rule)
        any_pure = any(r.pure for r in self.policy.rules_for(kind, side))
        plan: _Plan = (tuple(rules), skipped, any_pure)
        if len(plans) >= _MAX_PLANS:
            plans.clear()
        plans[key] = plan
        return plan

    def _judge_items(self, envelope: Envelope, items: list[Item], started: int) -> Decision:
        """Decide about items built in process rather than read from a message.

        The egress guard (an ``outbound_call``) and the URL binder (a ``url_binding``) pass
        them to :meth:`evaluate`; ``envelope`` carries the principal and the server name,
        its message may be empty. A decision is recorded only when it has findings.
        """
        state = self.store.get(envelope.session or "")
        findings: list[Finding] = []
        suppressed: list[Suppressed] = []
        errors: list[str] = []
        if items:
            self._run_items(envelope, state, items, findings, suppressed, errors)
        decision = self._decision(findings, suppressed, errors, items, started, envelope)
        if findings or suppressed:
            self._record(decision, envelope)
        return decision

    def _record(self, decision: Decision, envelope: Envelope) -> None:
        """Write the audit record; a failing sink is counted and reported, never raised."""
        try:
            self.audit.record(decision, envelope)
        except Exception as exc:
            self.audit.counters["record_errors"] = self.audit.counters.get("record_errors", 0) + 1
            print(f"elicitguard: audit record failed: {type(exc).__name__}", file=sys.stderr)

    def _run_rule(
        self,
        rule: CompiledRule,
        item: Item,
        ctx: CheckContext,
        findings: list[Finding],
        suppressed: list[Suppressed],
        errors: list[str],
    ) -> list[Hit] | None:
        """Run one rule and emit its findings; its hits, or ``None`` when it raised."""
        action = rule.actions.get(ctx.side)  # a lookup, not a call: the hot loop
        if action is None:
            return []
        ctx.action = action
        try:
            hits: list[Hit]
            if rule.check is not None:
                hits = list(rule.check(item, ctx, rule.params))
            elif rule.match is not None:
                hits = [Hit()] if rule.match(item, ctx) else []
            else:
                hits = []
        except Exception as exc:
            errors.append(f"{rule.code} raised {type(exc).__name__}")
            findings.append(self._crash_finding(rule, item, exc))
            return None
        self._emit(rule, item, ctx, hits, findings, suppressed)
        return hits

    def _emit(
        self,
        rule: CompiledRule,
        item: Item,
        ctx: CheckContext,
        hits: list[Hit],
        findings: list[Finding],
        suppressed: list[Suppressed],
    ) -> None:
        """Turn a rule's hits into findings, or suppressions where an exception applies."""
        action = rule.actions.get(ctx.side)
        if action is None:
            return
        for hit in hits:
            finding = self._finding(rule, action, item, ctx, hit)
            exception = self._exception_for(finding.code, ctx.envelope.server)
            if exception is not None:
                suppressed.append(
                    Suppressed(
                        finding.code, finding.pointer, exception.spec.reason, exception.index
                    )
                )
            else:
                findings.append(finding)

    def _finding(
        self, rule: CompiledRule, action: Action, item: Item, ctx: CheckContext, hit: Hit
    ) -> Finding:
        severity = hit.severity or rule.severity
        if (
            hit.severity is not None
            and severity.rank <= Severity.LOW.rank
            and action.rank > Action.LOG.rank
        ):
            action = Action.LOG
        if hit.action is not None and hit.action.rank < action.rank:
            action = hit.action
        pointer = hit.pointer if hit.pointer is not None else item.pointer
        message = _format_message(rule.message, hit.args)
        server = ctx.envelope.server
        fingerprint = (
            _fingerprint(rule.code, server, item.method, pointer)
            if len(pointer) <= 512
            else finding_fingerprint(rule.code, server, item.method, pointer)
        )
        value_fp = self.keys.value_fingerprint(hit.value) if hit.value is not None else None
        return Finding(
            code=rule.code,
            name=rule.name,
            severity=severity,
            confidence=rule.confidence,
            action=action,
            message=message,
            pointer=pointer,
            requirements=rule.requirements,
            cwe=rule.cwe,
            fix=rule.fix,
            fingerprint=fingerprint,
            value_fingerprint=value_fp,
            item=item.kind.value,
            field=hit.field,
        )

    def _exception_for(self, code: str, server: str | None) -> Any:
        exceptions = self.policy.exceptions
        if not exceptions:
            return None
        today = self.clock()
        for exception in exceptions:
            if exception.expired(today):
                continue
            if exception.matches(code, server):
                exception.uses += 1
                return exception
        return None

    def _on_error_action(self) -> Action:
        return Action.BLOCK if self.policy.on_error == "block" else Action.WARN

    def _crash_finding(
        self, rule: CompiledRule | None, item: Item | None, exc: BaseException
    ) -> Finding:
        engine_rule = self.policy.rule("EG901")
        name = engine_rule.name if engine_rule is not None else "rule-crashed"
        culprit = rule.code if rule is not None else "the extractor"
        return Finding(
            code="EG901",
            name=name,
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
            action=self._on_error_action(),
            message=f"{culprit} raised {type(exc).__name__}; the policy's on_error decided the action",
            pointer=item.pointer if item is not None else "",
            requirements=(),
            item=item.kind.value if item is not None else None,
        )

    def _engine_failure(self, envelope: Envelope, exc: BaseException, started: int) -> Decision:
        finding = self._crash_finding(None, None, exc)
        decision = self._decision(
            [finding], [], [f"extractor raised {type(exc).__name__}"], [], started, envelope
        )
        self._record(decision, envelope)
        return decision

    def _frame_decision(self, error: FrameError, envelope: Envelope, started: int) -> Decision:
        """The decision for a frame that could not be parsed (EG903-EG905)."""
        findings = self._frame_findings(error, envelope)
        decision = self._decision(findings, [], [error.kind], [], started, envelope)
        decision.action = Action.BLOCK if not findings else decision.action
        decision.frame_error = error.kind
        self._record(decision, envelope)
        return decision

    def _frame_findings(self, error: FrameError, envelope: Envelope) -> list[Finding]:
        code = FRAME_ERROR_CODES.get(error.kind, "EG904")
        rule = self.policy.rule(code)
        if rule is None:
            return []
        action = rule.action_for(envelope.side)
        if action is None:
            return []
        return [
            Finding(
                code=code,
                name=rule.name,
                severity=rule.severity,
                confidence=rule.confidence,
                action=action,
                message=str(error),
                pointer="",
                requirements=rule.requirements,
                cwe=rule.cwe,
                fix=rule.fix,
                fingerprint=hashlib.sha256(f"{code}\x00{error.kind}".encode()).hexdigest()[:16],
            )
        ]

    def _decision(
        self,
        findings: list[Finding],
        suppressed: list[Suppressed],
        errors: list[str],
        items: list[Item],
        started: int,
        envelope: Envelope | None = None,
    ) -> Decision:
        action = Action.ALLOW
        for finding in findings:
            if finding.action.rank > action.rank:
                action = finding.action
        era = next((i.era for i in items if i.era is not None), None)
        return Decision(
            action=action,
            findings=tuple(findings),
            suppressed=tuple(suppressed),
            decision_id=new_decision_id(),
            policy_name=self.policy.name,
            policy_revision=self.policy.revision,
            environment=self.policy.environment,
            mode=self.policy.mode,
            enforced=self.policy.mode == "enforce",
            fast_path=False,
            items=tuple(items),
            era=era,
            errors=tuple(errors),
            duration_us=(time.perf_counter_ns() - started) // 1000,
            envelope=envelope,
        )

    def unused_exceptions(self) -> list[Any]:
        """Exceptions that never suppressed anything (EG902 at the end of a lint run)."""
        today = self.clock()
        return [e for e in self.policy.exceptions if e.uses == 0 and not e.expired(today)]

    def expired_exceptions(self) -> list[Any]:
        """Exceptions past their expiry date (EG902)."""
        today = self.clock()
        return [e for e in self.policy.exceptions if e.expired(today)]

    def close(self) -> None:
        """Close the audit sink."""
        self.audit.sink.close()
