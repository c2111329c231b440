"""Reading YAML rule and policy files safely, with line numbers for every key.

Policy and rule files read as YAML 1.2 (what the JSON Schema and every editor assume): only
``true`` and ``false`` are booleans, so ``action: off`` is the string ``off``, not YAML
1.1's false; ``yes``, ``no``, ``on`` and ``off`` are strings too. Syntax errors are told in
our words with file, line and column, and what to write.

Safe loading only; anchors and aliases are refused outright (an alias bomb costs nothing to
write and a great deal to expand, and rule files never need them); files are capped in size
and depth; duplicate keys are an error (which one wins differs between parsers). Every key
keeps its line so that a later validation error can say where to look.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from elicitguard.errors import PackLoadError, RuleSpecError

__all__ = ["MAX_FILE_BYTES", "LineMap", "line_for", "load_yaml", "validation_error", "yaml_text"]

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 64

LineMap = dict[tuple[Any, ...], int]


_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans that refuses anchors and aliases."""

    # A copy without YAML 1.1's booleans (yes/no/on/off/y/n) and integers (012 as octal,
    # 1:20 as sixty-based); YAML 1.2's core schema versions are added below.
    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML reads this class attribute
        first: [(tag, regex) for tag, regex in resolvers if tag not in (_BOOL, _INT)]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_yaml_int(self, node: Any) -> int:
        """YAML 1.2 core integers: decimal, ``0o`` octal, ``0x`` hexadecimal."""
        text = str(self.construct_scalar(node))
        if text.startswith("0o"):
            return int(text[2:], 8)
        return int(text, 16) if text.startswith("0x") else int(text, 10)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            mark = event.start_mark
            raise _AliasError(mark.line + 1)
        return super().compose_node(parent, index)


_Loader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    _INT, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Loader.add_constructor(_INT, _Loader.construct_yaml_int)


class _AliasError(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


def yaml_text(path: Path) -> str:
    """Read a YAML file as text, refusing huge or binary files."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise PackLoadError(f"cannot read the file: {exc.strerror}", file=str(path)) from None
    if size > MAX_FILE_BYTES:
        msg = f"file is {size} bytes; rule and policy files are limited to {MAX_FILE_BYTES} bytes"
        raise PackLoadError(msg, file=str(path))
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PackLoadError("file is not UTF-8 text", file=str(path)) from None
    except OSError as exc:
        raise PackLoadError(f"cannot read the file: {exc.strerror}", file=str(path)) from None


def load_yaml(text: str, *, file: str) -> tuple[Any, LineMap]:
    """Parse one YAML document; return the value and a map from key paths to lines."""
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:
        # Raised while reading, before any node: a control character (found by fuzzing).
        at = text.count("\n", 0, exc.position) + 1
        msg = f"YAML cannot contain the control character U+{exc.character:04X}; remove it"
        raise PackLoadError(msg, file=file, line=at) from None
    try:
        try:
            node = loader.get_single_node()
        except _AliasError as exc:
            msg = "YAML anchors and aliases (&name, *name) are not allowed; write the value out"
            raise PackLoadError(msg, file=file, line=exc.line) from None
        except yaml.MarkedYAMLError as exc:
            raise _syntax_error(exc, file) from None
        except yaml.YAMLError as exc:
            raise PackLoadError(f"YAML error: {exc}", file=file) from None
        except RecursionError:
            # PyYAML's composer recurses per level (found by the hostile-configuration tests).
            msg = "YAML is nested too deeply; policies and rules need only a few levels"
            raise PackLoadError(msg, file=file) from None
        if node is None:
            return None, {}
        lines: LineMap = {}
        _walk(node, (), lines, file, 0)
        try:
            value = loader.construct_document(node)
        except yaml.constructor.ConstructorError as exc:
            line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
            msg = f"unsupported YAML value: {exc.problem}; use plain strings, numbers and lists"
            raise PackLoadError(msg, file=file, line=line) from None
        return value, lines
    finally:
        loader.dispose()


def _syntax_error(exc: yaml.MarkedYAMLError, file: str) -> PackLoadError:
    """A YAML syntax error in our words: where (line and column) and what to write."""
    mark = exc.problem_mark
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    problem = exc.problem or ""
    context = exc.context or ""
    opened = exc.context_mark.line + 1 if exc.context_mark is not None else None
    if "'\\t'" in problem or "\t" in problem:
        msg = "a tab in the indentation; YAML indents with spaces only (two per level is usual)"
    elif "mapping values are not allowed" in problem:
        msg = (
            "a second ':' on one line, or a key indented under a plain value; quote a value "
            "that contains ': ' (\"a: b\"), or put the key on its own line at its level"
        )
    elif "expected <block end>" in problem or "could not find expected ':'" in problem:
        since = f" (the block started on line {opened})" if opened else ""
        msg = (
            "this line's indentation does not match the keys above it"
            f"{since}; indent every key of one mapping by the same number of spaces"
        )
    elif "flow" in context:
        since = f" opened on line {opened}" if opened else ""
        msg = f"an unclosed [ or {{{since}; close it, or write the list one '- item' per line"
    elif "quoted scalar" in context:
        since = f" opened on line {opened}" if opened else ""
        msg = f"an unclosed quote{since}; end the string with the same quote it starts with"
    else:
        msg = f"this is not valid YAML here ({problem or 'syntax error'}); check the indentation and quotes"
    return PackLoadError(msg, file=file, line=line, column=column)


def _walk(node: Any, path: tuple[Any, ...], lines: LineMap, file: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        msg = f"nested deeper than {MAX_DEPTH} levels"
        raise PackLoadError(msg, file=file, line=node.start_mark.line + 1)
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key in seen:
                msg = f"duplicate key {key!r}; keep one"
                raise PackLoadError(msg, file=file, line=key_node.start_mark.line + 1)
            seen.add(key)
            lines[(*path, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*path, key), lines, file, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            _walk(child, (*path, index), lines, file, depth + 1)


def line_for(lines: LineMap, loc: tuple[Any, ...]) -> int | None:
    """The line of the longest prefix of ``loc`` that the file has."""
    for end in range(len(loc), -1, -1):
        key = tuple(str(p) if not isinstance(p, int) else p for p in loc[:end])
        if key in lines:
            return lines[key]
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def validation_error(
    exc: ValidationError,
    model: type[BaseModel],
    *,
    file: str,
    lines: LineMap,
    prefix: tuple[Any, ...] = (),
) -> RuleSpecError:
    """Turn pydantic's errors into one error naming the line and the fix of each.

    The first error is the exception's own message; the others (up to ten) are in
    :attr:`~elicitguard.errors.PolicyError.more`, so that one run shows every problem.
    """
    found = [
        _one_error(err, model, file=file, lines=lines, prefix=prefix)
        for err in exc.errors()[:_MAX_REPORTED]
    ]
    first, rest = found[0], tuple(found[1:])
    return RuleSpecError(first.bare_message, file=file, line=first.line, more=rest)


_MAX_REPORTED = 10


def _one_error(
    err: Any, model: type[BaseModel], *, file: str, lines: LineMap, prefix: tuple[Any, ...]
) -> RuleSpecError:
    loc = tuple(err.get("loc", ()))
    where = ".".join(str(p) for p in loc) or "(top level)"
    line = line_for(lines, prefix + loc)
    kind = err.get("type", "")
    if kind == "extra_forbidden" and loc:
        allowed = _allowed_keys(model, loc[:-1])
        bad = str(loc[-1])
        hint = ""
        close = difflib.get_close_matches(bad, allowed, n=1)
        if close:
            hint = f"; did you mean {close[0]!r}?"
        listing = f" Allowed here: {', '.join(sorted(allowed))}." if allowed else ""
        msg = f"unknown key {bad!r} at {where}{hint}{listing}"
    elif kind == "missing":
        msg = f"missing required key {where}"
    else:
        text = str(err.get("msg", "invalid value"))
        text = text.removeprefix("Value error, ")
        msg = f"{where}: {text}"
    return RuleSpecError(msg, file=file, line=line)


def _allowed_keys(model: Any, loc: tuple[Any, ...]) -> list[str]:
    """The keys a model accepts at ``loc`` (following dicts, lists and optionals)."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                field = next(
                    (f for f in current.model_fields.values() if f.alias == str(part)), None
                )
            if field is None:
                return []
            current = field.annotation
            continue
        origin = get_origin(current)
        if origin in (list, dict):
            args = get_args(current)
            current = args[-1] if args else Any
            continue
        return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [f.alias or name for name, f in current.model_fields.items()]
    return []


def _unwrap(tp: Any) -> Any:
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        for arg in get_args(tp):
            inner = _unwrap(arg)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
            if get_origin(inner) in (list, dict):
                return inner
        return tp
    return tp
