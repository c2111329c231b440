"""Loading, merging and compiling policies.

A policy is a stack of layers: presets and files named in ``extends`` (depth-first, parents
before children), then the file itself; each layer may carry an ``environments:`` overlay
that applies when its environment is active. Compilation walks the layers once and
produces per-item dispatch tables, so that evaluation never looks at YAML again.

Merging is per key: scalars are replaced, ``rules`` are merged per code (a glob such as
``EG2*`` applies before exact codes of the same layer), lists are unioned, exceptions and
packs are concatenated. A rule marked ``final`` may be tightened by later layers, never
loosened (a lower action, ``off``, or a lower severity is an error that names the line).

This module is the entry (:func:`load_policy`) and the policy-wide sections (lists,
exceptions, limits, identity, audit); the parts live beside it: reading layers in
:mod:`~elicitguard.engine.layers`, resolving ``rules:`` and dispatch in
:mod:`~elicitguard.engine.rule_overrides`, the compiled result in
:mod:`~elicitguard.engine.compiled`. Every rule-level error of the files is collected and
raised once, so ``policy validate`` reports them all.
"""

from __future__ import annotations

import fnmatch
import hashlib
import ipaddress
import os
import re
from pathlib import Path
from typing import Any

import orjson

from elicitguard.engine.compiled import (
    DEFAULT_LISTS,
    ENVIRONMENTS,
    HOST_LISTS,
    PRESETS,
    CompiledRule,
    Layer,
    Limits,
    Policy,
    PolicyException,
)
from elicitguard.engine.layers import _layer_from_dict, _resolve
from elicitguard.engine.models import (
    ExceptionSpec,
    LimitsSpec,
    RuleOverride,
)
from elicitguard.engine.rule_overrides import (
    _apply_overrides,
    _compiled,
    _dispatch,
    _RuleState,
    suggest_code,
)
from elicitguard.engine.rules import LoadedRule, builtin_rules, load_pack
from elicitguard.errors import PolicyError, RuleSpecError, UnknownRuleError

__all__ = [
    "PRESETS",
    "CompiledRule",
    "Layer",
    "Policy",
    "PolicyException",
    "load_policy",
]


_LABEL = re.compile(r"(?!-)[a-z0-9\u0080-\U0010ffff_-]{1,63}(?<!-)")


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


def _last(layers: list[Layer], attribute: str) -> Any:
    value = None
    for layer in layers:
        candidate = getattr(layer.spec, attribute)
        if candidate is not None:
            value = candidate
    return value


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
        audit_queue=_sub(layers, "audit", "queue")
        if _sub(layers, "audit", "queue") is not None
        else 8192,
        audit_when_full=_sub(layers, "audit", "when_full") or "block",
        sample_allow=_sub(layers, "audit", "sample_allow")
        if _sub(layers, "audit", "sample_allow") is not None
        else 1.0,
        identity=_identity(layers),
        client_modes=_client_modes(layers),
    )
    policy.dispatch = _dispatch(rules)
    return policy


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
