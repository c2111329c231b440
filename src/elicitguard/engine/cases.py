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
from elicitguard.base.decision import Decision
from elicitguard.base.keys import KeyRing
from elicitguard.engine.engine import Engine
from elicitguard.engine.models import CaseEnvelope, CaseSpec, InProcessSpec, PrincipalSpec
from elicitguard.engine.policy import load_policy
from elicitguard.engine.rules import LoadedRule, builtin_rules, load_cases, load_pack
from elicitguard.identity.binding import binding_item
from elicitguard.identity.outbound import outbound_item
from elicitguard.identity.principal import Principal
from elicitguard.identity.tokens import token_fingerprint
from elicitguard.identity.vault import CredentialVault
from elicitguard.protocol.envelope import Direction, Envelope, Transport
from elicitguard.protocol.items import Item
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
        from elicitguard.engine.rule_overrides import _dispatch

        policy.dispatch = _dispatch(policy.rules)
    keys = KeyRing.random()
    engine = Engine(
        policy,
        audit=AuditSink(io.StringIO()),
        keys=keys,
        default_era=case.protocol_version,
    )
    if case.vault:
        vault = CredentialVault()
        for token in case.vault:
            vault.register(token)
        engine.services["vault"] = vault
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
                transport=_transport(setup.transport or case.transport),
                headers={k.lower(): v for k, v in setup.headers.items()},
                principal=_principal(setup.principal, keys),
            )
        )
    principal = _principal(case.principal, keys)
    if case.in_process is not None:
        envelope = Envelope(
            message={},
            direction=case.direction,
            side=case.side,
            session=session,
            server=case.server,
            principal=principal,
        )
        return engine.evaluate(
            envelope, items=[_in_process_item(case.in_process, keys, principal, policy.identity)]
        )
    # A raw frame goes in as bytes: the engine parses it under the policy's limits.
    message: bytes | dict[str, Any] = (
        case.raw.encode("utf-8", "surrogatepass") if case.raw is not None else case.message or {}
    )
    return engine.evaluate(
        message,
        case.direction,
        side=case.side,
        session=session,
        server=case.server,
        protocol_version=case.protocol_version,
        transport=_transport(case.transport),
        headers={k.lower(): v for k, v in case.headers.items()},
        principal=principal,
    )


def _transport(name: str | None) -> Transport | None:
    return Transport(name) if name is not None else None


def _principal(spec: PrincipalSpec | None, keys: KeyRing) -> Principal | None:
    """The verified principal a case describes (as a token verifier would have made it)."""
    if spec is None:
        return None
    return Principal(
        issuer=spec.iss,
        subject=spec.sub,
        audience=tuple(spec.aud),
        scopes=tuple(spec.scopes),
        token_fingerprint=token_fingerprint(keys, spec.token) if spec.token else "",
    )


def _in_process_item(
    spec: InProcessSpec, keys: KeyRing, principal: Principal | None, identity: dict[str, Any]
) -> Item:
    """The item the egress guard or the URL binder would have built."""
    data = spec.data
    if spec.kind == "url_binding":
        return binding_item(str(data.get("outcome", "ok")))
    headers = data.get("headers") or {}
    return outbound_item(
        str(data.get("url", "")),
        {str(k): str(v) for k, v in headers.items()},
        keys=keys,
        method=str(data.get("method", "GET")),
        principal=principal,
        audience=data.get("audience") or identity.get("audience"),
    )


def _fallback_action(rule: LoadedRule) -> Any:
    from elicitguard.base.decision import Action

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
