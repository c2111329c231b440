"""Project configuration found without flags, as ruff and pytest find theirs.

Why: a CI job, a pre-commit hook and a developer's shell should lint with the same options
without repeating them. From the working directory upward, the first directory holding one
of these is the project's:

* ``.elicitguard.toml`` or ``elicitguard.toml`` (settings at the top level);
* ``pyproject.toml`` with a ``[tool.elicitguard]`` table;
* ``.elicitguard.yaml``: the project's policy (what ``elicitguard init`` writes).

Settings: ``policy``, ``env`` (or ``environment``), ``select``, ``ignore`` (a list or a
comma-separated string), ``format``, ``fail-on``, ``protocol-version``, ``input-format``,
``server-name``, ``baseline``. A relative ``policy`` or ``baseline`` is read from the
configuration file's folder. When the settings name no policy, a ``.elicitguard.yaml``
beside them is the policy. ``--config FILE`` names the file (TOML, or a YAML policy) and
``--isolated`` ignores every configuration file. Flags always win.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elicitguard.errors import ElicitguardError

__all__ = ["POLICY_FILE", "ProjectConfig", "config_for", "find_config", "load_config"]

POLICY_FILE = ".elicitguard.yaml"
_TOML_FILES = (".elicitguard.toml", "elicitguard.toml")
_KEYS = {
    "policy": "policy",
    "env": "env",
    "environment": "env",
    "select": "select",
    "ignore": "ignore",
    "format": "format",
    "fail-on": "fail_on",
    "fail_on": "fail_on",
    "protocol-version": "protocol_version",
    "protocol_version": "protocol_version",
    "input-format": "input_format",
    "input_format": "input_format",
    "server-name": "server_name",
    "server_name": "server_name",
    "baseline": "baseline",
}
_PATHS = ("policy", "baseline")


@dataclass(frozen=True)
class ProjectConfig:
    """Settings from one configuration file (``source``), keyed like the lint options."""

    source: Path | None = None
    settings: dict[str, Any] = field(default_factory=dict)


def _codes(value: Any, key: str, source: Path) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    msg = f"{source}: {key} must be a list of rule codes or a comma-separated string"
    raise ElicitguardError(msg)


def _settings(table: dict[str, Any], source: Path) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            known = ", ".join(sorted(k for k in _KEYS if "_" not in k))
            msg = f"{source}: unknown setting {key!r} (known: {known})"
            raise ElicitguardError(msg)
        name = _KEYS[key]
        if name in ("select", "ignore"):
            value = _codes(value, key, source)
        elif not isinstance(value, str):
            msg = f"{source}: {key} must be a string"
            raise ElicitguardError(msg)
        if name in _PATHS and not value.startswith("builtin:"):
            value = str((source.parent / value).resolve())
        settings[name] = value
    if "policy" not in settings and (source.parent / POLICY_FILE).is_file():
        settings["policy"] = str((source.parent / POLICY_FILE).resolve())
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        msg = f"cannot read configuration {path}: {exc.strerror}"
        raise ElicitguardError(msg) from exc
    except tomllib.TOMLDecodeError as exc:
        msg = f"{path}: not valid TOML: {exc}"
        raise ElicitguardError(msg) from exc


def load_config(path: Path) -> ProjectConfig:
    """The settings of one named configuration file (``--config FILE``)."""
    path = path.resolve()
    if path.suffix in (".yaml", ".yml"):
        if not path.is_file():
            msg = f"cannot read configuration {path}: no such file"
            raise ElicitguardError(msg)
        return ProjectConfig(path, {"policy": str(path)})
    document = _read_toml(path)
    if path.name == "pyproject.toml":
        table = document.get("tool", {}).get("elicitguard")
        if not isinstance(table, dict):
            msg = f"{path}: no [tool.elicitguard] table"
            raise ElicitguardError(msg)
        document = table
    return ProjectConfig(path, _settings(document, path))


def find_config(start: Path | None = None) -> ProjectConfig:
    """The configuration of the nearest project folder at or above ``start`` (the cwd)."""
    folder = (start or Path.cwd()).resolve()
    for directory in (folder, *folder.parents):
        for name in _TOML_FILES:
            if (directory / name).is_file():
                return load_config(directory / name)
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            table = _read_toml(pyproject).get("tool", {}).get("elicitguard")
            if isinstance(table, dict):
                return ProjectConfig(pyproject, _settings(table, pyproject))
        if (directory / POLICY_FILE).is_file():
            return ProjectConfig(directory / POLICY_FILE, {"policy": str(directory / POLICY_FILE)})
    return ProjectConfig()


def config_for(args: Any) -> ProjectConfig:
    """The configuration a command runs with: ``--config``, else found, none if ``--isolated``."""
    if getattr(args, "isolated", False):
        return ProjectConfig()
    named = getattr(args, "config", None)
    if named is not None:
        return load_config(Path(named))
    return find_config()
