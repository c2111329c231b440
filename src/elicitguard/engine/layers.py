"""Reading a policy's layers: presets and files named in ``extends``, depth-first.

Parents come before children, the depth is limited and cycles are refused; every file is
validated against :class:`~elicitguard.engine.models.PolicySpec` with its line map kept, so
later errors can name the line.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from elicitguard._resources import data_dir
from elicitguard.engine.compiled import PRESETS, Layer
from elicitguard.engine.models import (
    PolicySpec,
)
from elicitguard.engine.yamlfile import LineMap, load_yaml, validation_error, yaml_text
from elicitguard.errors import PackLoadError, PolicyError, RuleSpecError

MAX_EXTENDS_DEPTH = 4


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
        try:
            path = (root / path).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            msg = f"`extends: {_shown(source)}` cannot be resolved: {_os_reason(exc)}"
            raise PolicyError(msg) from None
        if not path.is_relative_to(root.resolve()):
            msg = f"`extends: {source}` leaves the policy's folder {root}; keep parents inside it"
            raise PolicyError(msg)
    try:
        exists = path.is_file()
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a loop of links
        msg = f"policy file {_shown(source)} cannot be opened: {_os_reason(exc)}"
        raise PackLoadError(msg) from None
    if not exists:
        msg = f"policy file {source} does not exist"
        raise PackLoadError(msg)
    return path


def _shown(source: str) -> str:
    """A path as an error message shows it: at most 80 characters."""
    return source if len(source) <= 80 else source[:77] + "..."


def _os_reason(exc: BaseException) -> str:
    """What the file system said, without repeating the (possibly huge) path."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return type(exc).__name__


def _validate(data: dict[str, Any], file: str, lines: LineMap, folder: Path) -> Layer:
    try:
        spec = PolicySpec.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, PolicySpec, file=file, lines=lines) from None
    return Layer(spec, file, lines, folder, data)


def _layer_from_dict(data: dict[str, Any], file: str, folder: Path) -> Layer:
    return _validate(data, file, {}, folder)
