"""Running a rule's examples: the ``.cases.yaml`` files beside every rule.

Each case is evaluated in a fresh engine under the default preset with the rule under test
switched on, after the setup its fields describe (an ``initialize`` exchange in the push
era, the originating request in 2026-07-28). ``ruleid`` must produce the rule's code,
``ok`` must not; ``todoruleid`` and ``todook`` record known misses and false alarms and
fail only when they start passing, so that they get promoted.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elicitguard._resources import data_dir
from elicitguard.audit.sink import AuditSink
from elicitguard.engine.decision import Decision
from elicitguard.engine.engine import Engine
from elicitguard.engine.models import CaseEnvelope, CaseSpec
from elicitguard.engine.policy import load_policy
from elicitguard.engine.rules import LoadedRule, builtin_rules, load_cases, load_pack
from elicitguard.errors import FrameError
from elicitguard.identity.keys import KeyRing
from elicitguard.protocol.envelope import Direction, Envelope
from elicitguard.protocol.parsing import parse_frame
from elicitguard.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    is_modern,
    normalise_version,
)

__all__ = ["CaseResult", "build_envelopes", "run_case", "run_pack", "run_rule_cases"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case."""

    code: str
    note: str
    expect: str
    fired: bool
    passed: bool
    todo: bool
    file: str

    @property
    def label(self) -> str:
        return f"{self.code}::{self.note}"


def build_envelopes(case: CaseSpec) -> list[CaseEnvelope]:
    """The setup envelopes a case implies, followed by its own setup."""
    era = normalise_version(case.protocol_version)
    envelopes: list[CaseEnvelope] = []
    declared = case.client_elicitation
    if declared is not None and era is not None and not is_modern(era):
        capabilities: dict[str, Any] = {} if declared == "none" else {"elicitation": declared}
        envelopes.append(
            CaseEnvelope(
                direction=Direction.CLIENT_TO_SERVER,
                message={
                    "jsonrpc": "2.0",
                    "id": "init-1",
                    "method": "initialize",
                    "params": {
                        "protocolVersion": era,
                        "capabilities": capabilities,
                        "clientInfo": {"name": "case-client", "version": "1"},
                    },
                },
            )
        )
        envelopes.append(
            CaseEnvelope(
                direction=Direction.SERVER_TO_CLIENT,
                message={
                    "jsonrpc": "2.0",
                    "id": "init-1",
                    "result": {
                        "protocolVersion": era,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "case-server", "version": "1"},
                    },
                },
            )
        )
    message = case.message or {}
    is_response = "method" not in message and "id" in message
    wants_origin = declared is not None or case.origin_method is not None
    if (
        is_modern(era)
        and wants_origin
        and is_response
        and case.direction is Direction.SERVER_TO_CLIENT
    ):
        capabilities = {} if declared in (None, "none") else {"elicitation": declared}
        envelopes.append(
            CaseEnvelope(
                direction=Direction.CLIENT_TO_SERVER,
                message={
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "method": case.origin_method or "tools/call",
                    "params": {
                        "name": "case_tool",
                        "arguments": {},
                        "_meta": {
                            META_PROTOCOL_VERSION: era,
                            META_CLIENT_CAPABILITIES: capabilities,
                        },
                    },
                },
            )
        )
    envelopes.extend(case.setup)
    return envelopes


def evaluate_case(
    case: CaseSpec, code: str, *, policy_source: str | None = None, packs: list[str] | None = None
) -> Decision:
    """Evaluate a case and return the decision on its message."""
    overrides: list[dict[str, Any]] = []
    if packs:
        overrides.append({"packs": packs})
    overrides.append({"rules": {code: {}}})
    if case.policy:
        overrides.append(case.policy)
    policy = load_policy(policy_source, env=case.env, extra_layers=overrides, environ={})
    rule = policy.rules[code]
    for side, action in list(rule.actions.items()):
        if action is None and (
            rule.loaded.spec.applies_to.sides == ["all"]
            or side in rule.loaded.spec.applies_to.sides
        ):
            rule.actions[side] = _fallback_action(rule.loaded)
    if any(a is not None for a in rule.actions.values()):
        from elicitguard.engine.policy import _dispatch

        policy.dispatch = _dispatch(policy.rules)
    engine = Engine(
        policy,
        audit=AuditSink(io.StringIO()),
        keys=KeyRing.random(),
        default_era=case.protocol_version,
    )
    session = "case"
    for setup in build_envelopes(case):
        engine.evaluate(
            Envelope(
                message=setup.message,
                direction=setup.direction,
                side=case.side,
                session=session,
                server=setup.server or case.server,
                protocol_version=setup.protocol_version or case.protocol_version,
            )
        )
    if case.raw is not None:
        raw = case.raw.encode("utf-8", "surrogatepass")
        try:
            message = parse_frame(
                raw,
                max_bytes=policy.limits.max_message_bytes,
                max_depth=policy.limits.max_depth,
            )
        except FrameError as exc:
            envelope = Envelope(
                message={}, direction=case.direction, side=case.side, session=session
            )
            return engine.frame_decision(exc, envelope)
    else:
        message = case.message or {}
        raw = None
    return engine.evaluate(
        Envelope(
            message=message,
            direction=case.direction,
            side=case.side,
            session=session,
            server=case.server,
            protocol_version=case.protocol_version,
            raw=raw,
        )
    )


def _fallback_action(rule: LoadedRule) -> Any:
    from elicitguard.engine.decision import Action

    action = rule.spec.action
    return Action.LOG if action == "off" else Action(action)


def run_case(
    case: CaseSpec,
    rule: LoadedRule,
    *,
    policy_source: str | None = None,
    packs: list[str] | None = None,
) -> CaseResult:
    """Run one case of ``rule``."""
    decision = evaluate_case(case, rule.spec.code, policy_source=policy_source, packs=packs)
    fired = any(
        f.code == rule.spec.code and (case.pointer is None or f.pointer == case.pointer)
        for f in decision.findings
    ) or any(s.code == rule.spec.code for s in decision.suppressed)
    wants_fire = case.expect in ("ruleid", "todoruleid")
    passed = fired == wants_fire
    todo = case.expect.startswith("todo")
    return CaseResult(
        rule.spec.code, case.note, case.expect, fired, passed, todo, str(rule.cases_path)
    )


def run_rule_cases(rule: LoadedRule, *, packs: list[str] | None = None) -> list[CaseResult]:
    """Run every case of ``rule`` and its docs example."""
    results: list[CaseResult] = []
    example = rule.spec.docs.example
    results.append(run_case(example, rule, packs=packs))
    cases = load_cases(rule)
    if cases is not None:
        results.extend(run_case(c, rule, packs=packs) for c in cases.cases)
    return results


def _is_builtin_folder(path: Path) -> bool:
    builtin = data_dir("rules").resolve()
    resolved = path.resolve()
    return resolved == builtin or resolved.is_relative_to(builtin)


def run_pack(path: Path | None = None) -> tuple[list[LoadedRule], list[CaseResult]]:
    """Run the cases of a pack (the built-in rules when ``path`` is ``None``)."""
    if path is None or _is_builtin_folder(path):
        rules = builtin_rules()
        packs = None
    else:
        rules = load_pack(path)
        packs = [str(path.resolve())]
    results: list[CaseResult] = []
    for rule in rules:
        results.extend(run_rule_cases(rule, packs=packs))
    return rules, results
