"""``describe_url`` and ``describe_form``: build the consent views for one request.

Both evaluate the request through the engine under the caller's policy (so the screen warns
about exactly what the policy finds) and add the facts a screen needs: who is asking, the
real destination and its registrable domain, both forms of an internationalised host, the
fields with their defaults. Nothing is fetched: the URL is parsed, never resolved or opened.
"""

from __future__ import annotations

import re
from typing import Any

from elicitguard.base.decision import Action, Decision, Finding
from elicitguard.base.pointer import escape_pointer
from elicitguard.checks.domains import HostAnalysis
from elicitguard.checks.url_facts import protected_domains_for, url_facts
from elicitguard.checks.urls import ParsedUrl, is_loopback_host
from elicitguard.consent._evaluate import PolicyLike, evaluate_request, resolve_policy
from elicitguard.consent.views import FormField, FormView, UrlView
from elicitguard.consent.words import SPOOF_KINDS, visible, warnings_for

__all__ = ["describe_form", "describe_url"]

_URL_FAMILIES = ("EG107", "EG2", "EG3", "EG4", "EG901")
_FORM_FAMILIES = ("EG2", "EG3", "EG4", "EG901")
_MASK = "•••"
_SCHEME_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: Parser problems after which nobody can say which host a browser would use.
_AMBIGUOUS = frozenset(
    {"backslash-in-authority", "ambiguous-userinfo", "not-absolute", "no-host", "bad-host"}
)


def _shown(findings: tuple[Finding, ...], families: tuple[str, ...]) -> list[Finding]:
    """The built-in families a screen explains, and every rule of the user's own packs."""
    return [f for f in findings if f.code.startswith(families) or not f.code.startswith("EG")]


def _blocked(decision: Decision) -> bool:
    return decision.enforced and decision.action is Action.BLOCK


def _authority_span(url: str) -> tuple[int, int] | None:
    """Start and end of the authority in ``url`` (after ``scheme://``, up to ``/ ? #``, as
    :func:`~elicitguard.checks.urls.parse_url` splits it)."""
    match = _SCHEME_AUTHORITY.match(url)
    if match is None:
        return None
    start = match.end()
    ends = [p for p in (url.find(c, start) for c in "/?#") if p >= 0]
    return start, (min(ends) if ends else len(url))


def _port_suffix(hostport: str) -> str:
    if hostport.startswith("["):
        close = hostport.find("]")
        return hostport[close + 1 :] if close >= 0 else ""
    _, colon, port = hostport.rpartition(":")
    return f":{port}" if colon and port.isdigit() else ""


def _display(
    url: str, parsed: ParsedUrl, host: HostAnalysis | None
) -> tuple[str | None, tuple[str, str, str]]:
    """The display host and the URL split around the part to highlight."""
    span = _authority_span(url)
    if span is None or host is None or _AMBIGUOUS.intersection(parsed.problems):
        return None, (visible(url), "", "")
    start, end = span
    authority = url[start:end]
    userinfo, at, hostport = authority.rpartition("@")
    spoof = bool(host.kinds & SPOOF_KINDS)
    display_host = host.ascii_host if spoof or not host.is_idn else host.unicode_host
    display_host = visible(display_host, lookalikes=True)
    if host.ip_literal is not None:
        prefix, highlight = "", display_host
    else:
        registrable = host.registrable_domain if spoof else host.registrable_domain_unicode
        if registrable and display_host.endswith(registrable):
            prefix, highlight = display_host[: -len(registrable)], registrable
        else:
            prefix, highlight = "", display_host
    before = visible(url[:start])
    if at:
        user, colon, _password = userinfo.partition(":")
        before += visible(user) + (f":{_MASK}" if colon else "") + "@"
    after = _port_suffix(hostport) + visible(url[end:])
    return display_host, (before + prefix, highlight, after)


def _reads_as(host: HostAnalysis | None) -> str | None:
    if host is None:
        return None
    for issue in host.issues:
        if issue.kind in ("lookalike", "whole_script_confusable") and issue.lookalike_of:
            return issue.lookalike_of
    return None


def _can_open(parsed: ParsedUrl, environment: str, blocked: bool) -> bool:
    if blocked or not parsed.valid or not parsed.host:
        return False
    if parsed.scheme == "https":
        return True
    return parsed.scheme == "http" and environment == "dev" and is_loopback_host(parsed.host)


def describe_url(
    url: str,
    policy: PolicyLike = None,
    *,
    server: str | None = None,
    message: str | None = None,
    env: str | None = None,
    key: str | None = None,
) -> UrlView:
    """The consent view of one URL-mode request.

    ``policy`` is a compiled :class:`~elicitguard.engine.policy.Policy`, a policy file,
    ``builtin:NAME`` or ``None`` (the default preset); ``env`` picks the environment when the
    policy is loaded here. ``server`` is the operator's name for the server that asks (never
    its self-reported ``serverInfo``); when it is a host name its domain is protected against
    look-alikes. ``message`` is the server's message, shown as plain text. ``key`` identifies
    the elicitation for :class:`~elicitguard.consent.ConsentGate`.
    """
    compiled = resolve_policy(policy, env)
    params: dict[str, Any] = {
        "mode": "url",
        "message": message if message is not None else "Open this page",
        "url": url,
        "elicitationId": key or "consent-view",
    }
    decision = evaluate_request(params, compiled, server=server)
    facts = url_facts(url, protected_domains_for(server, compiled.lists))
    parsed, host = facts.parsed, facts.host
    findings = _shown(decision.findings, _URL_FAMILIES)
    blocked = _blocked(decision)
    display_host, parts = _display(url, parsed, host)
    return UrlView(
        server=server,
        message=message,
        url=url,
        display_url="".join(parts),
        display_parts=parts,
        scheme=parsed.scheme,
        ascii_host=host.ascii_host if host is not None else None,
        unicode_host=host.unicode_host if host is not None else None,
        display_host=display_host,
        registrable_domain=host.registrable_domain if host is not None else None,
        registrable_domain_unicode=host.registrable_domain_unicode if host is not None else None,
        highlight=parts[1] or None,
        is_idn=host.is_idn if host is not None else False,
        disguised=bool(host is not None and host.is_idn and host.kinds & SPOOF_KINDS),
        reads_as=_reads_as(host),
        warnings=warnings_for(findings, host=host, parsed=parsed, url=url),
        blocked=blocked,
        action=decision.action.value,
        can_open=_can_open(parsed, compiled.environment, blocked),
        environment=compiled.environment,
        policy_name=compiled.name,
        key=key,
    )


# --- forms ------------------------------------------------------------------------------


def _params_of(request: dict[str, Any]) -> dict[str, Any]:
    """Accept a JSON-RPC message, an ``inputRequests`` entry or the params themselves."""
    if isinstance(request.get("params"), dict) and ("method" in request or "jsonrpc" in request):
        return dict(request["params"])
    return dict(request)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _options(prop: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Enum options as ``(value, label)``: ``enum`` + ``enumNames``, or ``oneOf``/``anyOf``
    with ``const`` and ``title`` (2025-11-25 titled enums)."""
    for key in ("oneOf", "anyOf"):
        entries = prop.get(key)
        if isinstance(entries, list) and entries:
            out = []
            for entry in entries:
                if isinstance(entry, dict) and "const" in entry:
                    value = str(entry["const"])
                    out.append((value, str(entry.get("title") or value)))
            if out:
                return tuple(out)
    values = prop.get("enum")
    if isinstance(values, list):
        names = prop.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        return tuple((str(v), str(n)) for v, n in zip(values, labels, strict=True))
    return ()


def _field_type(prop: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        options = _options(items) if isinstance(items, dict) else ()
        return "multi_enum", options
    options = _options(prop)
    if options:
        return "enum", options
    if kind in ("number", "integer", "boolean"):
        return str(kind), ()
    return "string", ()


def _field_codes(name: str, findings: list[Finding]) -> tuple[str, ...]:
    escaped = escape_pointer(name)
    needle = f"/requestedSchema/properties/{escaped}"
    return tuple(
        dict.fromkeys(
            f.code
            for f in findings
            if f.field == name or f.pointer.endswith(needle) or (needle + "/") in f.pointer
        )
    )


def _fields(params: dict[str, Any], findings: list[Finding]) -> tuple[FormField, ...]:
    schema = params.get("requestedSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return ()
    required_list = schema.get("required") if isinstance(schema, dict) else None
    required = set(required_list) if isinstance(required_list, list) else set()
    out: list[FormField] = []
    for name, prop in props.items():
        if not isinstance(prop, dict):
            prop = {}
        kind, options = _field_type(prop)
        out.append(
            FormField(
                name=str(name),
                title=_text(prop.get("title")) or str(name),
                type=kind,
                description=_text(prop.get("description")),
                format=_text(prop.get("format")),
                required=name in required,
                default=prop.get("default"),
                options=options,
                minimum=_number(prop.get("minimum")),
                maximum=_number(prop.get("maximum")),
                min_length=_count(prop.get("minLength", prop.get("minItems"))),
                max_length=_count(prop.get("maxLength", prop.get("maxItems"))),
                warnings=_field_codes(str(name), findings),
            )
        )
    return tuple(out)


def describe_form(
    request: dict[str, Any],
    policy: PolicyLike = None,
    *,
    server: str | None = None,
    env: str | None = None,
    key: str | None = None,
    protocol_version: str | None = None,
) -> FormView:
    """The consent view of one form-mode request.

    ``request`` is the ``elicitation/create`` message, an ``inputRequests`` entry, or its
    ``params`` (``message`` and ``requestedSchema``). Fields keep the schema's order and
    carry their ``default`` for pre-filling (EL-14); enum options carry their titles.
    ``protocol_version`` is the era to judge the request in (default 2025-11-25).
    """
    compiled = resolve_policy(policy, env)
    params = _params_of(request)
    params.setdefault("mode", "form")
    decision = evaluate_request(params, compiled, server=server, era=protocol_version)
    findings = _shown(decision.findings, _FORM_FAMILIES)
    message = params.get("message")
    return FormView(
        server=server,
        message=message if isinstance(message, str) else None,
        fields=_fields(params, findings),
        warnings=warnings_for(findings),
        blocked=_blocked(decision),
        action=decision.action.value,
        environment=compiled.environment,
        policy_name=compiled.name,
        key=key,
    )
