"""How a policy's ``rules:`` layers resolve onto each loaded rule, and the dispatch table.

Per code, later layers override earlier ones (a glob such as ``EG2*`` applies before exact
codes of the same layer); a ``final`` rule may be tightened, never loosened; the merged
params are validated against the params model the rule's check declares. The compiled rules
are then grouped per (item kind, side) so that evaluation finds its rules in one lookup.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from elicitguard.base.decision import Action, Severity
from elicitguard.engine.compiled import CompiledRule, Layer
from elicitguard.engine.context import get_check, is_pure, params_model
from elicitguard.engine.match import compile_match
from elicitguard.engine.models import (
    RuleOverride,
    action_of,
)
from elicitguard.engine.rules import ENGINE_CHECK, LoadedRule
from elicitguard.engine.yamlfile import LineMap, validation_error
from elicitguard.errors import PolicyError, RuleSpecError, UnknownRuleError
from elicitguard.protocol.envelope import Direction, Side
from elicitguard.protocol.items import ItemKind
from elicitguard.protocol.versions import MODERN_VERSIONS, PUSH_VERSIONS

_CODE_GLOB = re.compile(r"[A-Z0-9*?]+")


# --- compiling -----------------------------------------------------------------------------


@dataclass(slots=True)
class _RuleState:
    action: Any = None
    actions_by_side: dict[Side, Any] = field(default_factory=dict)
    severity: Severity | None = None
    params: dict[str, Any] = field(default_factory=dict)
    #: Per param key, where a policy layer last set it (file, lines, key path of ``params``).
    params_where: dict[str, tuple[str, LineMap, tuple[Any, ...]]] = field(default_factory=dict)
    final: bool = False
    final_where: str = ""


def _apply_overrides(
    overrides: dict[str, RuleOverride],
    path: tuple[str, ...],
    layer: Layer,
    states: dict[str, _RuleState],
    by_code: dict[str, LoadedRule],
    errors: list[PolicyError],
) -> None:
    globs = sorted((k for k in overrides if any(c in k for c in "*?[")), key=len)
    exact = [k for k in overrides if k not in globs]
    bad: set[str] = set()
    for key in globs:
        if not _CODE_GLOB.fullmatch(key) or not any(fnmatch.fnmatchcase(c, key) for c in by_code):
            msg = (
                f"rule glob {key!r} matches no rule; write a code such as EG102 or a glob "
                "such as 'EG1*' (capitals, digits, * and ?)"
            )
            errors.append(RuleSpecError(msg, file=layer.file, line=layer.lines.get((*path, key))))
            bad.add(key)
    for key in exact:
        if key not in by_code:
            suggestion = suggest_code(key, list(by_code))
            hint = f"; did you mean {suggestion}?" if suggestion else ""
            msg = f"unknown rule code {key}{hint} (`elicitguard rules list` shows them)"
            line = layer.lines.get((*path, key))
            errors.append(UnknownRuleError(msg, file=layer.file, line=line))
            bad.add(key)
    for key in [*globs, *exact]:
        if key in bad:
            continue
        override = overrides[key]
        line = layer.lines.get((*path, key))
        for code in by_code:
            if code == key or (key in globs and fnmatch.fnmatchcase(code, key)):
                try:
                    _apply_one(states[code], override, code, by_code[code], layer.file, line)
                except RuleSpecError as exc:
                    errors.append(exc)
                    break
                if override.params is not None:
                    where = (layer.file, layer.lines, (*path, key, "params"))
                    states[code].params_where.update(dict.fromkeys(override.params, where))


def suggest_code(key: str, codes: list[str]) -> str | None:
    """The rule code a typo most likely meant (O for 0 and l or I for 1 first)."""
    upper = key.upper()
    prefix = upper[: len(upper) - len(upper.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))][:4]
    digits = upper[len(prefix) :].translate(str.maketrans("OILS", "0115"))
    normal = prefix + digits
    if normal in codes:
        return normal
    close = difflib.get_close_matches(normal, codes, n=1, cutoff=0.6)
    return close[0] if close else None


def _apply_one(
    state: _RuleState,
    override: RuleOverride,
    code: str,
    rule: LoadedRule,
    file: str,
    line: int | None,
) -> None:
    if state.final:
        _refuse_loosening(state, override, code, rule, file, line)
    if override.action is not None:
        state.action = override.action
        state.actions_by_side = {}
    if override.actions_by_side is not None:
        state.actions_by_side.update(override.actions_by_side)
    if override.severity is not None:
        state.severity = override.severity
    if override.params is not None:
        state.params.update(override.params)
    if override.final:
        state.final = True
        state.final_where = f"{file}:{line}" if line else file


def _refuse_loosening(
    state: _RuleState,
    override: RuleOverride,
    code: str,
    rule: LoadedRule,
    file: str,
    line: int | None,
) -> None:
    current = state.action or rule.spec.action
    problems: list[str] = []
    if override.action is not None and _looser(override.action, current):
        problems.append(f"action {override.action} is looser than {current}")
    for side, action in (override.actions_by_side or {}).items():
        side_current = state.actions_by_side.get(side) or current
        if _looser(action, side_current):
            problems.append(f"action {action} on side {side} is looser than {side_current}")
    severity = state.severity or rule.spec.severity
    if override.severity is not None and override.severity.rank < severity.rank:
        problems.append(f"severity {override.severity} is lower than {severity}")
    if problems:
        msg = (
            f"{code} is final (set at {state.final_where}): {'; '.join(problems)}. "
            "A child policy may tighten a final rule, never loosen it"
        )
        raise RuleSpecError(msg, file=file, line=line)


def _looser(new: str, current: str) -> bool:
    new_action = action_of(new)  # type: ignore[arg-type]
    current_action = action_of(current)  # type: ignore[arg-type]
    if current_action is None:
        return False
    return new_action is None or new_action.rank < current_action.rank


def _compiled(
    rule: LoadedRule, state: _RuleState, select: list[str], ignore: list[str]
) -> CompiledRule:
    spec = rule.spec
    base = state.action or spec.action
    actions: dict[Side, Action | None] = {}
    for side in Side:
        chosen = state.actions_by_side.get(side)
        if chosen is None:
            chosen = base if state.action is not None else spec.actions_by_side.get(side, base)
        actions[side] = action_of(chosen)
    if select and not any(fnmatch.fnmatchcase(spec.code, s) for s in select):
        actions = dict.fromkeys(Side)
    if any(fnmatch.fnmatchcase(spec.code, s) for s in ignore):
        actions = dict.fromkeys(Side)
    params = {**spec.params, **state.params}
    if spec.check is not None and spec.check != ENGINE_CHECK:
        _validate_params(rule, state, params)
    match = (
        compile_match(spec.match, file=str(rule.path), lines=rule.lines)
        if spec.match is not None
        else None
    )
    check = None
    if spec.check is not None and spec.check != ENGINE_CHECK:
        check = get_check(spec.check)
    applies = spec.applies_to
    sides = None if "all" in applies.sides else {Side(s) for s in applies.sides}
    if sides is not None:
        actions = {side: (a if side in sides else None) for side, a in actions.items()}
    return CompiledRule(
        code=spec.code,
        name=spec.name,
        severity=state.severity or spec.severity,
        confidence=spec.confidence,
        actions=actions,
        params=params,
        check=check,
        match=match,
        engine_only=spec.check == ENGINE_CHECK,
        items=frozenset(applies.items),
        eras=_eras(applies.eras),
        directions=None
        if "all" in applies.directions
        else frozenset(Direction(d) for d in applies.directions),
        message=spec.message,
        requirements=tuple(spec.requirements),
        cwe=tuple(spec.cwe),
        fix=spec.docs.fix.strip().splitlines()[0] if spec.docs.fix.strip() else "",
        loaded=rule,
        pure=check is not None and spec.check is not None and is_pure(spec.check),
    )


def _validate_params(rule: LoadedRule, state: _RuleState, params: dict[str, Any]) -> None:
    """Check ``params`` against the model the rule's check declared; the error names the
    file and line where the offending key was written (a policy layer or the rule file)."""
    assert rule.spec.check is not None
    model = params_model(rule.spec.check)
    if model is None:
        return
    try:
        model.model_validate(params)
    except ValidationError as exc:
        loc = exc.errors()[0].get("loc", ())
        key = str(loc[0]) if loc else None
        where = state.params_where.get(key) if key is not None else None
        if where is None and key is None and state.params_where:
            where = next(reversed(state.params_where.values()))
        file, lines, prefix = where or (str(rule.path), rule.lines, ("params",))
        error = validation_error(exc, model, file=file, lines=lines, prefix=prefix)
        detail = error.bare_message.removeprefix("(top level): ")
        msg = f"{rule.spec.code} ({rule.spec.check}) params: {detail}"
        raise RuleSpecError(msg, file=file, line=error.line) from None


def _eras(names: Sequence[str]) -> frozenset[str] | None:
    if "all" in names:
        return None
    eras: set[str] = set()
    for name in names:
        if name == "push":
            eras |= PUSH_VERSIONS
        elif name == "modern":
            eras |= MODERN_VERSIONS
        else:
            eras.add(name)
    return frozenset(eras)


def dispatch_table(
    rules: dict[str, CompiledRule],
) -> dict[tuple[ItemKind, Side], list[CompiledRule]]:
    """The rules that run on each item kind for each side, in order (``Policy.dispatch``);
    rebuild it after changing a compiled policy's rules."""
    table: dict[tuple[ItemKind, Side], list[CompiledRule]] = {}
    for rule in rules.values():
        if rule.engine_only:
            continue
        for kind in rule.items:
            for side in Side:
                if rule.actions.get(side) is not None:
                    table.setdefault((kind, side), []).append(rule)
    return table


#: The name the engine's own modules use.
_dispatch = dispatch_table
