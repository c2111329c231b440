"""Loading, merging and compiling policies.

A policy is a stack of layers: presets and files named in ``extends`` (depth-first, parents
before children), then the file itself; each layer may carry an ``environments:`` overlay
that applies when its environment is active. Compilation walks the layers once and
produces per-item dispatch tables, so that evaluation never looks at YAML again.

Merging is per key: scalars are replaced, ``rules`` are merged per code (a glob such as
``EG2*`` applies before exact codes of the same layer), lists are unioned, exceptions and
packs are concatenated. A rule marked ``final`` may be tightened by later layers, never
loosened (a lower action, ``off``, or a lower severity is an error that names the line).
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import hashlib
import ipaddress
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from elicitguard._resources import data_dir
from elicitguard.base.decision import Action, Confidence, Severity
from elicitguard.engine.context import CheckFn, get_check, is_pure, params_model
from elicitguard.engine.match import Predicate, compile_match
from elicitguard.engine.models import (
    ExceptionSpec,
    LimitsSpec,
    PolicySpec,
    RuleOverride,
    action_of,
)
from elicitguard.engine.rules import ENGINE_CHECK, LoadedRule, builtin_rules, load_pack
from elicitguard.engine.yamlfile import LineMap, load_yaml, validation_error, yaml_text
from elicitguard.errors import PackLoadError, PolicyError, RuleSpecError, UnknownRuleError
from elicitguard.protocol.envelope import Direction, Side
from elicitguard.protocol.items import ItemKind
from elicitguard.protocol.versions import MODERN_VERSIONS, PUSH_VERSIONS

__all__ = [
    "PRESETS",
    "CompiledRule",
    "Layer",
    "Policy",
    "PolicyException",
    "load_policy",
]

PRESETS = ("default", "strict", "dev", "monitor", "passthrough")
#: Lists whose entries are hosts (names, ``*.suffix``, IPs, CIDRs), validated at load.
HOST_LISTS = frozenset({"dev_hosts", "protected_domains", "allowed_hosts", "server_domains"})
_CODE_GLOB = re.compile(r"[A-Z0-9*?]+")
_LABEL = re.compile(r"(?!-)[a-z0-9\u0080-\U0010ffff_-]{1,63}(?<!-)")
MAX_EXTENDS_DEPTH = 4
DEFAULT_LISTS: dict[str, tuple[str, ...]] = {
    "dev_hosts": ("localhost", "127.0.0.0/8", "::1"),
    "protected_domains": (),
}
ENVIRONMENTS = ("dev", "test", "prod")


@dataclass(frozen=True, slots=True)
class Layer:
    """One policy file (or preset) in the stack."""

    spec: PolicySpec
    file: str
    lines: LineMap
    folder: Path
    raw: Any


@dataclass(frozen=True, slots=True)
class Limits:
    """Resolved limits (every value set)."""

    max_message_bytes: int = 4 * 1024 * 1024
    max_depth: int = 64
    bad_frames: str = "drop"
    state_ttl_s: float = 900.0
    state_max_sessions: int = 10_000
    elicitations_per_minute: int | None = None


@dataclass(slots=True)
class PolicyException:
    """An exception with its place in the files, and how often it was used."""

    spec: ExceptionSpec
    file: str
    line: int | None
    index: int
    uses: int = 0

    def expired(self, today: dt.date) -> bool:
        return self.spec.expires is not None and self.spec.expires < today

    def matches(self, code: str, server: str | None) -> bool:
        if not any(fnmatch.fnmatchcase(code, pattern) for pattern in self.spec.rules):
            return False
        wanted = self.spec.where.server
        if wanted is None:
            return True
        return server is not None and fnmatch.fnmatchcase(server, wanted)


@dataclass(slots=True)
class CompiledRule:
    """A rule resolved under a policy: effective action per side, params, the check."""

    code: str
    name: str
    severity: Severity
    confidence: Confidence
    actions: dict[Side, Action | None]
    params: dict[str, Any]
    check: CheckFn | None
    match: Predicate | None
    engine_only: bool
    items: frozenset[ItemKind]
    eras: frozenset[str] | None
    directions: frozenset[Direction] | None
    message: str
    requirements: tuple[str, ...]
    cwe: tuple[str, ...]
    fix: str
    loaded: LoadedRule
    #: The check promised its hits depend only on the item (``@check(..., pure=True)``),
    #: so the engine may reuse them for an identical item (engine/verdicts.py).
    pure: bool = False

    def action_for(self, side: Side) -> Action | None:
        return self.actions.get(side)


@dataclass(slots=True)
class Policy:
    """A compiled policy: what every evaluation needs, resolved once."""

    name: str
    revision: str
    environment: str
    mode: str
    on_error: str
    on_block_client: str
    push_error_code: int
    rules: dict[str, CompiledRule]
    lists: dict[str, tuple[str, ...]]
    exceptions: list[PolicyException]
    limits: Limits
    layers: list[Layer]
    keys_file: str | None = None
    keys_env: str | None = None
    audit_sink: str = "stderr"
    audit_file: str | None = None
    audit_chain: bool = False
    sample_allow: float = 1.0
    identity: dict[str, Any] = field(default_factory=dict)
    client_modes: tuple[str, ...] = ("form", "url")
    dispatch: dict[tuple[ItemKind, Side], list[CompiledRule]] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """The file (or preset) the policy was loaded from."""
        return self.layers[-1].file if self.layers else "builtin:default"

    def rule(self, code: str) -> CompiledRule | None:
        return self.rules.get(code)

    def rules_for(self, kind: ItemKind, side: Side) -> list[CompiledRule]:
        return self.dispatch.get((kind, side), [])


# --- loading --------------------------------------------------------------------------------


def load_policy(
    source: str | os.PathLike[str] | None = None,
    *,
    env: str | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    extra_layers: list[dict[str, Any]] | None = None,
    environ: dict[str, str] | None = None,
) -> Policy:
    """Load a policy file or preset (``builtin:NAME``) and compile it.

    ``env`` overrides the environment (else ``ELICITGUARD_ENV``, else the policy's
    ``environment``, else ``prod``). ``select`` and ``ignore`` are code globs that turn rules
    on or off on top of the policy (the linter's ``--select`` and ``--ignore``);
    ``extra_layers`` are policy dicts applied last (rule cases use them).
    """
    environ = dict(os.environ) if environ is None else environ
    source = "builtin:default" if source is None else os.fspath(source)
    layers = _resolve(source, root=None, chain=())
    for index, extra in enumerate(extra_layers or []):
        layers.append(_layer_from_dict(extra, f"<override {index}>", Path.cwd()))
    chosen_env = env or environ.get("ELICITGUARD_ENV") or _last(layers, "environment") or "prod"
    if chosen_env not in ENVIRONMENTS:
        msg = f"unknown environment {chosen_env!r}; use one of: {', '.join(ENVIRONMENTS)}"
        raise PolicyError(msg)
    return _compile(layers, chosen_env, select or [], ignore or [])


def _resolve(source: str, *, root: Path | None, chain: tuple[str, ...]) -> list[Layer]:
    """Return the layers of ``source``, parents first."""
    if len(chain) > MAX_EXTENDS_DEPTH:
        msg = f"`extends` is nested deeper than {MAX_EXTENDS_DEPTH} levels: {' -> '.join(chain)}"
        raise PolicyError(msg)
    path = _locate(source, root)
    key = str(path)
    if key in chain:
        msg = f"`extends` forms a cycle: {' -> '.join((*chain, key))}; remove one of them"
        raise PolicyError(msg, file=chain[-1] if chain else None)
    file = f"builtin:{path.stem}" if source.startswith("builtin:") else str(path)
    data, lines = load_yaml(yaml_text(path), file=file)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RuleSpecError(
            "a policy file is a YAML mapping (name:, extends:, rules: ...)", file=file, line=1
        )
    layer = _validate(data, file, lines, path.parent)
    own_root = root if root is not None else path.parent
    layers: list[Layer] = []
    for index, parent in enumerate(layer.spec.extends or []):
        try:
            layers.extend(
                _resolve(
                    parent,
                    root=own_root if not parent.startswith("builtin:") else None,
                    chain=(*chain, key),
                )
            )
        except PolicyError as exc:
            if exc.file is not None:
                raise
            raise type(exc)(
                exc.bare_message, file=file, line=lines.get(("extends", index))
            ) from None
    layers.append(layer)
    return layers


def _locate(source: str, root: Path | None) -> Path:
    if source.startswith("builtin:"):
        name = source.removeprefix("builtin:")
        if name not in PRESETS:
            close = difflib.get_close_matches(name, PRESETS, n=1)
            hint = f"; did you mean builtin:{close[0]}?" if close else ""
            msg = f"unknown preset {source!r}{hint} Presets: {', '.join(PRESETS)}"
            raise PolicyError(msg)
        return data_dir("policy") / f"{name}.yaml"
    path = Path(source)
    if root is not None:
        if path.is_absolute():
            msg = f"`extends: {source}` must be a path relative to the policy's folder"
            raise PolicyError(msg)
        path = (root / path).resolve()
        if not path.is_relative_to(root.resolve()):
            msg = f"`extends: {source}` leaves the policy's folder {root}; keep parents inside it"
            raise PolicyError(msg)
    if not path.is_file():
        msg = f"policy file {source} does not exist"
        raise PackLoadError(msg)
    return path


def _validate(data: dict[str, Any], file: str, lines: LineMap, folder: Path) -> Layer:
    try:
        spec = PolicySpec.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, PolicySpec, file=file, lines=lines) from None
    return Layer(spec, file, lines, folder, data)


def _layer_from_dict(data: dict[str, Any], file: str, folder: Path) -> Layer:
    return _validate(data, file, {}, folder)


def _last(layers: list[Layer], attribute: str) -> Any:
    value = None
    for layer in layers:
        candidate = getattr(layer.spec, attribute)
        if candidate is not None:
            value = candidate
    return value


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


def _compile(layers: list[Layer], env: str, select: list[str], ignore: list[str]) -> Policy:
    loaded = builtin_rules()
    for layer in layers:
        for pack in layer.spec.packs or []:
            folder = (layer.folder / pack).resolve()
            loaded.extend(load_pack(folder, builtin=False))
    by_code: dict[str, LoadedRule] = {}
    for rule in loaded:
        if rule.spec.code in by_code:
            other = by_code[rule.spec.code].path
            msg = f"rule code {rule.spec.code} is defined twice (also in {other}); codes are unique"
            raise RuleSpecError(msg, file=str(rule.path))
        by_code[rule.spec.code] = rule
    states = {code: _RuleState() for code in by_code}
    errors: list[PolicyError] = []  # every rule-level error of the files, reported together
    for layer in layers:
        overlays: list[tuple[dict[str, RuleOverride], tuple[str, ...]]] = [
            (layer.spec.rules or {}, ("rules",))
        ]
        env_overlay = (layer.spec.environments or {}).get(env)  # type: ignore[call-overload]
        if env_overlay is not None and env_overlay.rules:
            overlays.append((env_overlay.rules, ("environments", env, "rules")))
        for overrides, path in overlays:
            _apply_overrides(overrides, path, layer, states, by_code, errors)
    rules: dict[str, CompiledRule] = {}
    for code in sorted(by_code):
        try:
            rules[code] = _compiled(by_code[code], states[code], select, ignore)
        except RuleSpecError as exc:
            errors.append(exc)
    exceptions = _exceptions(layers, env, list(by_code), errors)
    _raise_all(errors)
    policy = Policy(
        name=_last(layers, "name") or Path(layers[-1].file).stem,
        revision=_revision(layers, loaded),
        environment=env,
        mode=_scalar(layers, env, "mode") or "enforce",
        on_error=_scalar(layers, env, "on_error") or "block",
        on_block_client=_sub(layers, "on_block", "client") or "decline",
        push_error_code=_sub(layers, "on_block", "push_error_code") or -31001,
        rules=rules,
        lists=_lists(layers, env),
        exceptions=exceptions,
        limits=_limits(layers, env),
        layers=layers,
        keys_file=_keys_file(layers),
        keys_env=_sub(layers, "keys", "env"),
        audit_sink=_sub(layers, "audit", "sink") or "stderr",
        audit_file=_sub(layers, "audit", "file"),
        audit_chain=bool(_sub(layers, "audit", "chain")),
        sample_allow=_sub(layers, "audit", "sample_allow")
        if _sub(layers, "audit", "sample_allow") is not None
        else 1.0,
        identity=_identity(layers),
        client_modes=_client_modes(layers),
    )
    policy.dispatch = _dispatch(rules)
    return policy


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


def _dispatch(rules: dict[str, CompiledRule]) -> dict[tuple[ItemKind, Side], list[CompiledRule]]:
    table: dict[tuple[ItemKind, Side], list[CompiledRule]] = {}
    for rule in rules.values():
        if rule.engine_only:
            continue
        for kind in rule.items:
            for side in Side:
                if rule.actions.get(side) is not None:
                    table.setdefault((kind, side), []).append(rule)
    return table


def _scalar(layers: list[Layer], env: str, attribute: str) -> Any:
    value = None
    for layer in layers:
        if getattr(layer.spec, attribute) is not None:
            value = getattr(layer.spec, attribute)
        overlay = (layer.spec.environments or {}).get(env)  # type: ignore[call-overload]
        if overlay is not None and getattr(overlay, attribute, None) is not None:
            value = getattr(overlay, attribute)
    return value


def _sub(layers: list[Layer], section: str, key: str) -> Any:
    value = None
    for layer in layers:
        part = getattr(layer.spec, section)
        if part is not None and getattr(part, key) is not None:
            value = getattr(part, key)
    return value


def _client_modes(layers: list[Layer]) -> tuple[str, ...]:
    """The elicitation modes a client integration declares (both unless a layer narrows)."""
    modes = _sub(layers, "client", "elicitation_modes")
    return ("form", "url") if modes is None else tuple(m for m in ("form", "url") if m in modes)


def _keys_file(layers: list[Layer]) -> str | None:
    value = None
    for layer in layers:
        if layer.spec.keys is not None and layer.spec.keys.file is not None:
            path = Path(layer.spec.keys.file)
            value = str(path if path.is_absolute() else layer.folder / path)
    return value


def _identity(layers: list[Layer]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for layer in layers:
        if layer.spec.identity is not None:
            values = layer.spec.identity.model_dump(exclude_none=True)
            jwks = values.get("jwks")
            if jwks is not None and not Path(jwks).is_absolute():
                values["jwks"] = str(layer.folder / jwks)  # relative to the policy's folder
            merged.update(values)
    return merged


def _lists(layers: list[Layer], env: str) -> dict[str, tuple[str, ...]]:
    merged: dict[str, list[str]] = {k: list(v) for k, v in DEFAULT_LISTS.items()}
    for layer in layers:
        sources = [layer.spec.lists or {}]
        overlay = (layer.spec.environments or {}).get(env)  # type: ignore[call-overload]
        if overlay is not None and overlay.lists:
            sources.append(overlay.lists)
        for lists in sources:
            for name, values in lists.items():
                if name in HOST_LISTS or name.endswith("_hosts"):
                    _check_hosts(name, values, layer)
                target = merged.setdefault(name, [])
                target.extend(v for v in values if v not in target)
    return {k: tuple(v) for k, v in merged.items()}


def _check_hosts(name: str, values: list[str], layer: Layer) -> None:
    """Host lists hold host names, ``*.suffix`` patterns, IP addresses or CIDRs."""
    for index, value in enumerate(values):
        if _valid_host_entry(value):
            continue
        line = layer.lines.get(("lists", name, index)) or layer.lines.get(("lists", name))
        msg = (
            f"lists.{name}[{index}] is not a host name, '*.suffix', IP address or CIDR; "
            "write e.g. localhost, '*.corp.example', 10.0.0.0/8 or '::1'"
        )
        raise RuleSpecError(msg, file=layer.file, line=line)


def _valid_host_entry(value: str) -> bool:
    text = value.strip().lower().rstrip(".")
    if not text:
        return False
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        pass
    else:
        return True
    if "/" in text:
        return False
    host = text[2:] if text.startswith("*.") else text
    return all(_LABEL.fullmatch(label) for label in host.split("."))


def _raise_all(errors: list[PolicyError]) -> None:
    """Raise the first error with every other one in its ``more`` (file order kept)."""
    if not errors:
        return
    flat: list[PolicyError] = []
    seen: dict[tuple[str | None, int | None, str], int] = {}
    every = [e for found in errors for e in found.all]
    for error in sorted(every, key=lambda e: (e.file or "", e.line or 0)):
        # One line for a glob's params error that repeats per rule: "EG201, EG203 params: ..."
        head, sep, detail = error.bare_message.partition(" params: ")
        key = (error.file, error.line, detail if sep else error.bare_message)
        if sep and key in seen:
            known = flat[seen[key]]
            codes = known.bare_message.partition(" params: ")[0].split(" (")[0]
            merged = f"{codes}, {head.split(' ')[0]} params: {detail}"
            flat[seen[key]] = type(known)(merged, file=known.file, line=known.line)
            continue
        seen[key] = len(flat)
        flat.append(error)
    first = flat[0]
    raise type(first)(
        first.bare_message,
        file=first.file,
        line=first.line,
        column=first.column,
        more=tuple(flat[1:]),
    )


def _exceptions(
    layers: list[Layer], env: str, codes: list[str], errors: list[PolicyError]
) -> list[PolicyException]:
    found: list[PolicyException] = []
    for layer in layers:
        entries: list[tuple[ExceptionSpec, tuple[Any, ...]]] = [
            (e, ("exceptions", i)) for i, e in enumerate(layer.spec.exceptions or [])
        ]
        overlay = (layer.spec.environments or {}).get(env)  # type: ignore[call-overload]
        if overlay is not None and overlay.exceptions:
            entries.extend(
                (e, ("environments", env, "exceptions", i))
                for i, e in enumerate(overlay.exceptions)
            )
        for spec, path in entries:
            try:
                _check_exception_codes(spec, layer, path, codes)
            except UnknownRuleError as exc:
                errors.append(exc)
            found.append(PolicyException(spec, layer.file, layer.lines.get(path), len(found)))
    return found


def _check_exception_codes(
    spec: ExceptionSpec, layer: Layer, path: tuple[Any, ...], codes: list[str]
) -> None:
    """An exception naming a rule no pack defines would never suppress anything: refuse it."""
    for index, pattern in enumerate(spec.rules):
        if any(fnmatch.fnmatchcase(code, pattern) for code in codes):
            continue
        line = layer.lines.get((*path, "rules", index)) or layer.lines.get(path)
        if any(c in pattern for c in "*?["):
            msg = f"exception rule glob {pattern!r} matches no rule; write a code or a glob such as 'EG3*'"
        else:
            suggestion = suggest_code(pattern, codes)
            hint = f"; did you mean {suggestion}?" if suggestion else ""
            msg = f"exception names unknown rule code {pattern}{hint} (`elicitguard rules list` shows them)"
        raise UnknownRuleError(msg, file=layer.file, line=line)


def _limits(layers: list[Layer], env: str) -> Limits:
    values: dict[str, Any] = {}
    for layer in layers:
        sources: list[LimitsSpec] = [layer.spec.limits] if layer.spec.limits else []
        overlay = (layer.spec.environments or {}).get(env)  # type: ignore[call-overload]
        if overlay is not None and overlay.limits is not None:
            sources.append(overlay.limits)
        for limits in sources:
            values.update(limits.model_dump(exclude_none=True))
    return Limits(**values)


def _revision(layers: list[Layer], rules: list[LoadedRule]) -> str:
    """A hash of everything that decides: the layers and every rule file."""
    digest = hashlib.sha256()
    for layer in layers:
        digest.update(orjson.dumps(layer.raw, option=orjson.OPT_SORT_KEYS, default=str))
    for rule in sorted(rules, key=lambda r: r.spec.code):
        digest.update(orjson.dumps(rule.spec.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()[:16]
