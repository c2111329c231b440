"""Loading rule packs: a folder of ``<CODE>-<name>.yaml`` files and their cases.

Built-in rules use the ``EG`` prefix; a user pack uses its own prefix of two to four capital
letters. Every rule must name a registered check or carry a ``match:``; a ``.cases.yaml``
beside it holds its examples (``elicitguard rules test`` runs them).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from elicitguard._resources import data_dir
from elicitguard.engine.context import get_check, registered_checks
from elicitguard.engine.models import CaseFile, RuleSpec
from elicitguard.engine.yamlfile import LineMap, load_yaml, validation_error, yaml_text
from elicitguard.errors import RuleSpecError

__all__ = ["ENGINE_CHECK", "LoadedRule", "builtin_rules", "load_cases", "load_pack"]

#: ``check: engine`` marks rules the engine itself emits (EG9xx).
ENGINE_CHECK = "engine"
MAX_RULES_PER_PACK = 5000


@dataclass(frozen=True, slots=True)
class LoadedRule:
    """A validated rule file and where it came from."""

    spec: RuleSpec
    path: Path
    lines: LineMap
    builtin: bool

    @property
    def cases_path(self) -> Path:
        """The rule's ``.cases.yaml`` file, beside it."""
        return self.path.with_name(self.path.name.removesuffix(".yaml") + ".cases.yaml")


def load_pack(folder: Path, *, builtin: bool = False) -> list[LoadedRule]:
    """Load every rule file below ``folder`` (cases files are skipped)."""
    if not folder.is_dir():
        msg = f"rule pack folder {folder} does not exist; `packs:` lists folders of rule files"
        raise RuleSpecError(msg)
    paths = sorted(
        p for p in folder.rglob("*.yaml") if not p.name.endswith(".cases.yaml") and p.is_file()
    )
    if len(paths) > MAX_RULES_PER_PACK:
        msg = f"rule pack {folder} holds {len(paths)} files; the limit is {MAX_RULES_PER_PACK}"
        raise RuleSpecError(msg)
    return [load_rule_file(p, builtin=builtin) for p in paths]


_LOADED: dict[tuple[str, bool, str], LoadedRule] = {}


def load_rule_file(path: Path, *, builtin: bool = False) -> LoadedRule:
    """Load and validate one rule file (cached while its text is unchanged).

    Every policy load reads every rule file; parsing the YAML dominated policy loading (half
    a second for 50 rules), and the rule cases build one policy per case.
    """
    text = yaml_text(path)
    key = (str(path), builtin, text)
    loaded = _LOADED.get(key)
    if loaded is None:
        loaded = _load_rule_file(path, text, builtin=builtin)
        if len(_LOADED) >= MAX_RULES_PER_PACK:
            _LOADED.clear()
        _LOADED[key] = loaded
    return loaded


def _load_rule_file(path: Path, text: str, *, builtin: bool) -> LoadedRule:
    file = str(path)
    data, lines = load_yaml(text, file=file)
    if not isinstance(data, dict):
        raise RuleSpecError("a rule file is a YAML mapping (code:, name:, ...)", file=file, line=1)
    try:
        spec = RuleSpec.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, RuleSpec, file=file, lines=lines) from None
    expected = f"{spec.code}-{spec.name}.yaml"
    if path.name != expected:
        msg = f"rule file name must be {expected!r} (its code and name)"
        raise RuleSpecError(msg, file=file, line=lines.get(("code",)))
    if builtin != spec.code.startswith("EG"):
        msg = (
            "built-in rules use the EG prefix"
            if builtin
            else "EG is reserved for built-in rules; give your pack its own prefix (2-4 capitals)"
        )
        raise RuleSpecError(msg, file=file, line=lines.get(("code",)))
    if spec.check is not None and spec.check != ENGINE_CHECK and get_check(spec.check) is None:
        known = sorted(registered_checks())
        close = difflib.get_close_matches(spec.check, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        msg = f"unknown check {spec.check!r}{hint} Use `match:` for a rule without Python."
        raise RuleSpecError(msg, file=file, line=lines.get(("check",)))
    return LoadedRule(spec, path, lines, builtin)


def builtin_rules() -> list[LoadedRule]:
    """The rules shipped with elicitguard."""
    return load_pack(data_dir("rules"), builtin=True)


def load_cases(rule: LoadedRule) -> CaseFile | None:
    """The rule's cases, or ``None`` when it has no cases file."""
    path = rule.cases_path
    if not path.is_file():
        return None
    data, lines = load_yaml(yaml_text(path), file=str(path))
    try:
        cases = CaseFile.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, CaseFile, file=str(path), lines=lines) from None
    if cases.rule != rule.spec.code:
        msg = f"cases file names rule {cases.rule} but sits beside {rule.spec.code}"
        raise RuleSpecError(msg, file=str(path), line=lines.get(("rule",)))
    return cases
