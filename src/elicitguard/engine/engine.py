"""The engine: evaluate one envelope under a compiled policy and return a Decision.

``evaluate`` is the hot path. Ordinary traffic (no elicitation item) costs the extraction's
few dictionary lookups and a counter; only messages with items run rules, through the
per-item dispatch table the policy compiled. A check that raises never crashes the caller:
it becomes an EG901 finding whose action follows ``on_error`` (block unless the policy says
warn), and the audit record says so.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import os
import string
import sys
import time
from collections.abc import Callable
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
from elicitguard.engine.ordinary import OrdinaryPlan
from elicitguard.engine.policy import CompiledRule, Policy, load_policy
from elicitguard.engine.state import MemoryStateStore, StateStore
from elicitguard.engine.verdicts import VerdictCache, item_key
from elicitguard.engine.warmup import warm_up_envelopes
from elicitguard.errors import FrameError
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.extract import extract, fast_ordinary
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.parsing import (
    has_colliding_keys,
    may_hide_elicitation,
    object_has_colliding_keys,
)
from elicitguard.protocol.session import BoundedMap, SessionState
from elicitguard.protocol.surrogates import may_hold_lone_surrogate, without_lone_surrogates
from elicitguard.protocol.versions import normalise_version

__all__ = ["FRAME_ERROR_CODES", "Engine"]

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


#: How many issued ``requestState`` digests the engine remembers across sessions (EG504).
_ISSUED_STATES = 65536


class _SafeFormat(string.Formatter):
    """Message templates: a missing argument prints as ``?`` instead of raising."""

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        if isinstance(key, str):
            return kwargs.get(key, "?")
        return super().get_value(key, args, kwargs)


_FORMAT = _SafeFormat()


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
    ) -> None:
        """``clock`` says what day it is: an exception stops suppressing on its ``expires:``
        date in a running engine (tests pass a fake clock)."""
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
        self._ordinary = OrdinaryPlan(self.policy)
        self._always_quiet = frozenset(
            (direction, side)
            for direction in Direction
            for side in Side
            if self._ordinary.always_quiet(direction, side)
        )
        #: Hits of pure checks per identical item (engine/verdicts.py); ``None`` turns
        #: the reuse off (the equivalence tests compare both).
        self.verdicts: VerdictCache | None = VerdictCache()
        self._pure_dispatch: dict[tuple[ItemKind, Side], bool] = {}
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

    def warm_up(self) -> None:
        """Load the data checks load on first use now (see :mod:`elicitguard.engine.warmup`).

        Proxies call it before serving and the linter before reading, so that the first
        elicitation does not carry a tenth of a second of loading. This engine's state is
        not touched. Never raises: a failure here only means the first real message pays.
        """
        from elicitguard.checks.secrets import load_community_in_background

        load_community_in_background()  # the community credential catalogue compiles meanwhile
        try:
            engine = Engine(self.policy, audit=AuditSink(None), keys=KeyRing.random())
            for envelope in warm_up_envelopes():
                engine.evaluate(envelope)
        except Exception:  # best effort by design: the first real message pays instead
            return

    # --- evaluation ---------------------------------------------------------------------

    def evaluate(self, envelope: Envelope) -> Decision:
        """Decide about one message. Never raises for anything the message contains."""
        started = time.perf_counter_ns()
        if (
            not envelope.headers
            and envelope.protocol_version is None
            and self.fast_path(
                envelope.message, envelope.direction, envelope.side, envelope.session
            )
        ):
            if envelope.raw is not None and may_hide_elicitation(envelope.raw):
                return self.hidden_duplicates(envelope, started)
            return self._fast
        return self._judge(envelope, started)

    def _judge(self, envelope: Envelope, started: int) -> Decision:
        """The full path: extract the items and run the rules the policy dispatches."""
        state = self.store.get(envelope.session or "")
        if envelope.raw is None or may_hold_lone_surrogate(envelope.raw):
            # Checks judge what a client shows: U+FFFD where JSON held a lone surrogate.
            clean = without_lone_surrogates(envelope.message)
            if clean is not envelope.message:
                envelope = dataclasses.replace(envelope, message=clean)
        try:
            items = extract(envelope, state, self.default_era)
        except Exception as exc:
            return self._engine_failure(envelope, exc, started)
        if self._ordinary.active:
            items = self._ordinary.extend(envelope, items, state, self.default_era, self.services)
        for item in items:
            if item.kind is ItemKind.INPUT_REQUIRED:
                self._remember_issued(item, envelope.session)
        if not items:
            if envelope.raw is not None and may_hide_elicitation(envelope.raw):
                return self.hidden_duplicates(envelope, started, counted=False)
            self._counters["fast_path"] += 1
            return self._fast
        findings: list[Finding] = []
        suppressed: list[Suppressed] = []
        errors: list[str] = []
        if any(i.is_elicitation for i in items) and (
            has_colliding_keys(envelope.raw)
            if envelope.raw is not None
            else object_has_colliding_keys(envelope.message)
        ):
            # Without the bytes, exact repeats are gone; keys that collide once folded remain.
            error = FrameError(
                "duplicate_keys", "an object repeats a key (exactly or once letter case is folded)"
            )
            findings.extend(self._frame_findings(error, envelope))
        self._run_items(envelope, state, items, findings, suppressed, errors)
        decision = self._decision(findings, suppressed, errors, items, started)
        if any(i.is_elicitation for i in items) or findings or suppressed:
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

    def fast_path(
        self,
        message: dict[str, Any],
        direction: Direction,
        side: Side = Side.CAPTURE,
        session: str | None = None,
    ) -> bool:
        """Decide ``message`` here if it is provably ordinary traffic; ``False``: call evaluate.

        For a message seen without headers or an explicit protocol version (a capture line,
        a stdio frame). ``True`` means the message needed no rule, its session bookkeeping
        is done and it was counted, exactly as :meth:`evaluate` would have done; ``False``
        leaves everything for :meth:`evaluate` to judge.
        """
        if (direction, side) not in self._always_quiet and not self._ordinary.quiet(
            message, direction, side, self.services
        ):
            return False
        try:
            handled = fast_ordinary(
                message, direction, self.store.get(session or ""), self.default_era
            )
        except Exception:  # extract() meets it again; evaluate() records the failure
            return False
        if handled:
            self._counters["fast_path"] += 1
        return handled

    def evaluate_message(
        self,
        message: dict[str, Any],
        direction: Direction,
        side: Side = Side.CAPTURE,
        session: str | None = None,
        **context: Any,
    ) -> Decision:
        """:meth:`evaluate` for a parsed message, building its :class:`Envelope` only if needed.

        Ordinary traffic (most of it) is decided without one, which is what proxies and the
        linter want per frame. ``context`` takes the other :class:`Envelope` fields
        (``transport``, ``server``, ``headers``, ``principal``, ``raw``, ...).
        """
        started = time.perf_counter_ns()
        if (
            not context or (not context.get("headers") and context.get("protocol_version") is None)
        ) and self.fast_path(message, direction, side, session):
            raw = context.get("raw")
            if raw is None or not may_hide_elicitation(raw):
                return self._fast
            envelope = Envelope(message, direction, side=side, session=session, **context)
            return self.hidden_duplicates(envelope, started)
        # The fast route said no: go straight to the full path (evaluate() would ask again).
        return self._judge(
            Envelope(message, direction, side=side, session=session, **context), started
        )

    def hidden_duplicates(
        self, envelope: Envelope, started: int | None = None, *, counted: bool = True
    ) -> Decision:
        """EG904 for an ordinary-looking frame whose repeated key could hide elicitation.

        For a message :meth:`fast_path` already accepted (and counted, unless ``counted`` is
        false) whose bytes :func:`~elicitguard.protocol.parsing.may_hide_elicitation` flags:
        its bookkeeping is done, so only the frame finding is left to decide and record.
        """
        if started is None:
            started = time.perf_counter_ns()
        if counted:
            self._counters["fast_path"] -= 1  # fast_path() counted it; it is judged here
        error = FrameError(
            "duplicate_keys",
            "an object repeats a key (exactly or once letter case is folded), and a parser "
            "keeping another copy could read elicitation where this one is ordinary",
        )
        findings = self._frame_findings(error, envelope)
        decision = self._decision(findings, [], [error.kind], [], started)
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
        verdicts = self.verdicts
        for item in items:
            ctx.era = item.era
            rules = self.policy.rules_for(item.kind, envelope.side)
            key = (
                item_key(item, envelope.server, envelope.side, envelope.direction)
                if verdicts is not None and self._has_pure(item.kind, envelope.side)
                else None
            )
            cached = verdicts.get(key) if key is not None and verdicts is not None else None
            fresh: dict[str, list[Hit]] | None = {} if key is not None and cached is None else None
            for rule in rules:
                if rule.directions is not None and envelope.direction not in rule.directions:
                    continue
                if rule.eras is not None:
                    if item.era is None:
                        unknown_era = True
                        continue
                    if item.era not in rule.eras:
                        continue
                if cached is not None and rule.pure:
                    known = cached.get(rule.code)
                    if known is not None:
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

    def _has_pure(self, kind: ItemKind, side: Side) -> bool:
        """Whether any rule for (kind, side) is pure: only then is a key worth computing."""
        known = self._pure_dispatch.get((kind, side))
        if known is None:
            known = any(r.pure for r in self.policy.rules_for(kind, side))
            self._pure_dispatch[(kind, side)] = known
        return known

    def evaluate_items(self, envelope: Envelope, items: list[Item]) -> Decision:
        """Decide about items built in process rather than read from a message.

        The egress guard (an ``outbound_call``) and the URL binder (a ``url_binding``) use
        it; ``envelope`` carries the principal and the server name, its message may be empty.
        A decision is recorded only when it has findings.
        """
        started = time.perf_counter_ns()
        state = self.store.get(envelope.session or "")
        findings: list[Finding] = []
        suppressed: list[Suppressed] = []
        errors: list[str] = []
        if items:
            self._run_items(envelope, state, items, findings, suppressed, errors)
        decision = self._decision(findings, suppressed, errors, items, started)
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

    async def aevaluate(self, envelope: Envelope) -> Decision:
        """The async twin of :meth:`evaluate` (evaluation is CPU-bound and short)."""
        return self.evaluate(envelope)

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
        action = rule.action_for(ctx.side)
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
        action = rule.action_for(ctx.side)
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
        try:
            message = _FORMAT.vformat(rule.message, (), hit.args)
        except (ValueError, IndexError, AttributeError, KeyError):
            message = rule.message
        fingerprint = finding_fingerprint(rule.code, ctx.envelope.server, item.method, pointer)
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
            [finding], [], [f"extractor raised {type(exc).__name__}"], [], started
        )
        self._record(decision, envelope)
        return decision

    def frame_decision(self, error: FrameError, envelope: Envelope) -> Decision:
        """The decision for a frame that could not be parsed (EG903-EG905)."""
        started = time.perf_counter_ns()
        findings = self._frame_findings(error, envelope)
        decision = self._decision(findings, [], [error.kind], [], started)
        decision.action = Action.BLOCK if not findings else decision.action
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
            decision_id=os.urandom(12).hex(),
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
