"""Checks for domains and homographs (EG401-EG407) over the ``url`` of URL-mode requests.

Thin adapters over :mod:`elicitguard.checks.domains`: the host is analysed once per message
(:func:`~elicitguard.engine.builtin.url_rules.message_facts`, shared with the EG3xx checks)
with the look-alike targets the policy knows about
(:func:`elicitguard.checks.url_facts.protected_domains_for`), and each rule picks the issues
of its kind.

Messages name the registrable domain in ASCII (what the audit record already keeps; the
Unicode form of a spoof would read as the name it imitates) and facts that
come from our tables (scripts, code points, the protected domain imitated), never userinfo,
paths or query values; EG401 names both forms of the host because recording them is its job.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from elicitguard.base.decision import Hit, Severity
from elicitguard.checks.domains import (
    CharIssue,
    HostAnalysis,
    find_invisible_or_deceptive_chars,
    protected_in_path,
    userinfo_looks_like_host,
)
from elicitguard.checks.url_facts import UrlFacts
from elicitguard.checks.urls import ParsedUrl
from elicitguard.engine.builtin.url_rules import message_facts
from elicitguard.engine.context import CheckContext, check
from elicitguard.protocol.items import Item

__all__ = ["url_part_at"]

Params = Mapping[str, Any]
_MAX_SHOWN = 120
_LOOKALIKE_CATEGORIES = frozenset({"slash_lookalike", "dot_lookalike", "delimiter_lookalike"})
_CATEGORY_WORDS = {
    "bidi_control": "a bidirectional control character",
    "invisible": "an invisible character",
    "control": "a control character",
    "whitespace": "a non-ASCII space",
    "slash_lookalike": "a slash look-alike",
    "dot_lookalike": "a dot look-alike",
    "delimiter_lookalike": "a URL delimiter look-alike",
}


def _short(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _facts(item: Item, ctx: CheckContext) -> UrlFacts | None:
    data = item.data
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url:
        return None
    return message_facts(url, ctx)


def _domain(analysis: HostAnalysis) -> str:
    # ASCII on purpose: the Unicode form of a spoof reads as the name it imitates.
    return _short(analysis.registrable_domain or analysis.ascii_host)


def _pointer(item: Item) -> str:
    return item.pointer + "/url"


@check("domains.internationalised_host", pure=True)
def internationalised_host(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG401: the host has internationalised labels; record both forms."""
    facts = _facts(item, ctx)
    if facts is None or facts.host is None or not facts.host.is_idn:
        return
    host = facts.host
    yield Hit(
        pointer=_pointer(item),
        args={"unicode": _short(host.unicode_host), "ascii": _short(host.ascii_host)},
        value=host.ascii_host,
    )


def _issues_of(item: Item, ctx: CheckContext, kind: str) -> Iterator[Hit]:
    facts = _facts(item, ctx)
    if facts is None or facts.host is None:
        return
    found = [issue for issue in facts.host.issues if issue.kind == kind]
    if found:
        yield Hit(
            pointer=_pointer(item),
            args={
                "domain": _domain(facts.host),
                "detail": "; ".join(dict.fromkeys(_short(issue.detail) for issue in found)),
            },
            value=facts.host.ascii_host,
        )


@check("domains.mixed_script", pure=True)
def mixed_script(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG402: a label mixes scripts (or holds characters) a domain label must not."""
    yield from _issues_of(item, ctx, "mixed_script")


@check("domains.whole_script_confusable", pure=True)
def whole_script_confusable(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG403: a single-script label made of Latin look-alikes, or Chromium's other spoof rules."""
    yield from _issues_of(item, ctx, "whole_script_confusable")


@check("domains.lookalike", pure=True)
def lookalike(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG404: the host's skeleton equals a protected domain's but the host is not that domain."""
    facts = _facts(item, ctx)
    if facts is None or facts.host is None:
        return
    for issue in facts.host.issues:
        if issue.kind == "lookalike" and issue.lookalike_of:
            yield Hit(
                pointer=_pointer(item),
                args={"domain": _domain(facts.host), "target": issue.lookalike_of},
                value=facts.host.ascii_host,
            )
            return


def url_part_at(url: str, index: int) -> str:
    """Which part of ``url`` holds position ``index``: scheme, userinfo, host, path, query,
    fragment (split the way a person reads it: up to ``://``, then up to ``/ ? #``)."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        scheme_end = url.find(":")
        if index <= scheme_end:
            return "scheme"
        start = scheme_end + 1
    else:
        if index < scheme_end + 3:
            return "scheme"
        start = scheme_end + 3
        ends = [p for p in (url.find(c, start) for c in "/?#\\") if p >= 0]
        authority_end = min(ends) if ends else len(url)
        if index < authority_end:
            at = url.rfind("@", start, authority_end)
            return "userinfo" if at >= 0 and index < at else "host"
        start = authority_end
    fragment = url.find("#", start)
    query = url.find("?", start)
    if fragment >= 0 and index >= fragment:
        return "fragment"
    if query >= 0 and (fragment < 0 or query < fragment) and index >= query:
        return "query"
    return "path"


def _char_hits(url: str, parsed: ParsedUrl) -> list[tuple[CharIssue, str]]:
    found = [
        (issue, url_part_at(url, issue.index)) for issue in find_invisible_or_deceptive_chars(url)
    ]
    seen = {issue.codepoint for issue, _ in found}
    # Percent-encoded characters in the parts a client may show decoded (host, userinfo, path).
    for part, text in (
        ("host", parsed.host),
        ("userinfo", parsed.user or ""),
        ("path", parsed.path),
    ):
        if "%" not in url or not text:
            continue
        decoded = text if part != "path" else "/".join(parsed.path_segments())
        for issue in find_invisible_or_deceptive_chars(decoded):
            if issue.codepoint not in seen:
                seen.add(issue.codepoint)
                found.append((issue, part))
    return found


@check("domains.invisible_chars", pure=True)
def invisible_chars(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG405: bidi controls, invisible characters and delimiter look-alikes in the URL.

    Bidi, invisible, control and space characters count anywhere. A slash, dot or delimiter
    look-alike misleads only in the authority (``paypal.com⁄login.evil.example``); in the
    path, query or fragment it cannot move the destination, so it is reported there with low
    severity (logged, not blocked): Chinese and Japanese text legitimately holds ``。`` and
    ``？``.
    """
    data = item.data
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url:
        return
    if url.isascii() and url.isprintable() and "%" not in url:
        return
    facts = _facts(item, ctx)
    if facts is None:
        return
    hits = _char_hits(url, facts.parsed)
    if not hits:
        return
    serious = [
        (i, part)
        for i, part in hits
        if i.category not in _LOOKALIKE_CATEGORIES or part in ("scheme", "userinfo", "host")
    ]
    chosen = serious or hits
    first = chosen[0][0]
    codepoints = ", ".join(dict.fromkeys(f"{i.codepoint} {i.name}" for i, _ in chosen[:4]))
    more = f" and {len(chosen) - 4} more" if len(chosen) > 4 else ""
    yield Hit(
        pointer=_pointer(item),
        args={
            "what": _CATEGORY_WORDS.get(first.category, "a deceptive character"),
            "codepoints": codepoints + more,
            "parts": ", ".join(dict.fromkeys(p for _, p in chosen)),
        },
        value=url,
        severity=None if serious else Severity.LOW,
    )


@check("domains.deceptive_form", pure=True)
def deceptive_form(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG406: IP literals in odd forms, host-like userinfo, a protected domain inside another."""
    facts = _facts(item, ctx)
    if facts is None:
        return
    problems: list[str] = []
    user = facts.parsed.user
    if user and userinfo_looks_like_host(user):
        problems.append(
            "the part before '@' looks like a host name, but the browser goes to the host after it"
        )
    if facts.host is not None:
        problems.extend(
            _short(issue.detail) for issue in facts.host.issues if issue.kind == "deceptive_form"
        )
        in_path = protected_in_path(facts.parsed.path, facts.host.ascii_host, facts.protected)
        if in_path is not None:
            problems.append(
                f"the path shows the protected domain {in_path}, but the browser goes to "
                f"{_domain(facts.host)}"
            )
    if problems:
        domain = _domain(facts.host) if facts.host is not None else "?"
        yield Hit(
            pointer=_pointer(item),
            args={"domain": domain, "detail": "; ".join(problems)},
            value=facts.host.ascii_host if facts.host is not None else None,
        )


@check("domains.invalid_idn", pure=True)
def invalid_idn(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG407: the host fails UTS 46 / IDNA 2008 validation (browsers refuse or mangle it)."""
    facts = _facts(item, ctx)
    if facts is None or facts.host is None:
        return
    found = [i for i in facts.host.issues if i.kind == "invalid_idn"]
    if found:
        yield Hit(
            pointer=_pointer(item),
            args={"detail": "; ".join(_short(i.detail) for i in found)},
            value=facts.parsed.host,
        )
