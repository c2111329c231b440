"""Declarative ``match:`` conditions, compiled once into predicates.

User rules that need no Python name item fields and operators; see
:class:`elicitguard.engine.models.MatchExpr`. Regexes are RE2 (linear time, so a user rule
cannot make the engine backtrack for minutes); ``in`` tests membership in a named list of
the policy, where host lists may hold exact names, ``*.suffix`` patterns and CIDRs
(matched by :func:`elicitguard.checks.urls.host_in`, the one host-list matcher). URL fields
come from :func:`elicitguard.checks.urls.parse_url`, so a ``match:`` rule sees the host the
EG3xx checks see.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import re2

from elicitguard.checks.url_facts import bare_host, site_of
from elicitguard.checks.urls import host_in, parse_url
from elicitguard.engine.context import CheckContext
from elicitguard.engine.models import MatchExpr
from elicitguard.engine.yamlfile import LineMap, line_for
from elicitguard.errors import RuleSpecError
from elicitguard.protocol.items import Item

__all__ = ["Predicate", "compile_match"]

Predicate = Callable[[Item, CheckContext], bool]

#: RE2 options that keep RE2's own log lines off stderr: the error is ours to report.
_QUIET = re2.Options()
_QUIET.log_errors = False


def compile_match(
    expr: MatchExpr,
    *,
    file: str | None = None,
    lines: LineMap | None = None,
    path: tuple[Any, ...] = ("match",),
) -> Predicate:
    """Compile ``expr``; a bad regex raises :class:`RuleSpecError` naming file and line.

    ``lines`` is the rule file's line map and ``path`` the key path of ``expr`` in it.
    """
    if expr.any is not None:
        parts = [
            compile_match(e, file=file, lines=lines, path=(*path, "any", i))
            for i, e in enumerate(expr.any)
        ]
        return lambda item, ctx: any(p(item, ctx) for p in parts)
    if expr.all is not None:
        parts = [
            compile_match(e, file=file, lines=lines, path=(*path, "all", i))
            for i, e in enumerate(expr.all)
        ]
        return lambda item, ctx: all(p(item, ctx) for p in parts)
    if expr.not_ is not None:
        inner = compile_match(expr.not_, file=file, lines=lines, path=(*path, "not"))
        return lambda item, ctx: not inner(item, ctx)
    assert expr.field is not None  # guaranteed by MatchExpr's validator
    getter = _FIELD_GETTERS[expr.field]
    line = line_for(lines, (*path, "regex")) if lines is not None else None
    test = _operator(expr, expr.field, file, line)
    return lambda item, ctx: any(test(v, ctx) for v in getter(item, ctx))


def _operator(
    expr: MatchExpr, field: str, file: str | None, line: int | None = None
) -> Callable[[str, CheckContext], bool]:
    if expr.equals is not None:
        wanted = str(expr.equals).lower() if isinstance(expr.equals, bool) else str(expr.equals)
        return lambda value, ctx: value == wanted
    if expr.contains is not None:
        needle = expr.contains
        return lambda value, ctx: needle in value
    if expr.glob is not None:
        pattern = expr.glob
        return lambda value, ctx: fnmatch.fnmatchcase(value, pattern)
    if expr.regex is not None:
        try:
            compiled = re2.compile(expr.regex, _QUIET)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else ""
            reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
            msg = (
                f"regex {expr.regex!r} is not valid RE2 syntax ({reason}); "
                "RE2 has no backreferences or lookaround, which is what keeps it linear-time"
            )
            raise RuleSpecError(msg, file=file, line=line) from None
        return lambda value, ctx: compiled.search(value) is not None
    list_name = expr.in_
    assert list_name is not None
    host_field = field in {"url.host", "url.registrable_domain", "server"}

    def member(value: str, ctx: CheckContext) -> bool:
        entries = ctx.lists.get(list_name, ())
        return host_in(value, entries) if host_field else value in entries

    return member


# --- field getters ------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _split(url: str) -> tuple[str, str, tuple[str, ...]]:
    """Scheme, host and top-level query keys, from the same bounded parse EG3xx rules use."""
    parsed = parse_url(url)
    keys = tuple(
        key
        for location, key, _ in parsed.parts
        if key is not None and location.startswith("query:") and ">" not in location
    )
    return parsed.scheme, bare_host(parsed), keys


def _url(item: Item) -> str | None:
    data = item.data
    url = data.get("url") if isinstance(data, dict) else None
    return url if isinstance(url, str) else None


def _fields(item: Item, attribute: str) -> list[str]:
    schema = item.schema if isinstance(item.schema, dict) else None
    props = schema.get("properties") if schema is not None else None
    if not isinstance(props, dict):
        return []
    if attribute == "name":
        return [str(k) for k in props]
    values: list[str] = []
    for prop in props.values():
        if isinstance(prop, dict) and isinstance(prop.get(attribute), str):
            values.append(prop[attribute])
    return values


def _message(item: Item) -> list[str]:
    data = item.data
    message = data.get("message") if isinstance(data, dict) else None
    return [message] if isinstance(message, str) else []


def _one(value: str | None) -> list[str]:
    return [value] if value else []


_FIELD_GETTERS: Mapping[str, Callable[[Item, CheckContext], list[str]]] = {
    "url.scheme": lambda item, ctx: _one(_split(u)[0]) if (u := _url(item)) else [],
    "url.host": lambda item, ctx: _one(_split(u)[1]) if (u := _url(item)) else [],
    "url.registrable_domain": lambda item, ctx: (
        _one(site_of(_split(u)[1])) if (u := _url(item)) else []
    ),
    "url.query_keys": lambda item, ctx: list(_split(u)[2]) if (u := _url(item)) else [],
    "url.raw": lambda item, ctx: _one(_url(item)),
    "form.fields[*].name": lambda item, ctx: _fields(item, "name"),
    "form.fields[*].title": lambda item, ctx: _fields(item, "title"),
    "form.fields[*].description": lambda item, ctx: _fields(item, "description"),
    "form.fields[*].type": lambda item, ctx: _fields(item, "type"),
    "message": lambda item, ctx: _message(item),
    "mode": lambda item, ctx: _one(item.mode),
    "server": lambda item, ctx: _one(ctx.server),
    "method": lambda item, ctx: _one(item.method),
}
