"""Checks for URL-mode safety (EG301-EG308); clickable URLs in forms (EG202) are in
:mod:`elicitguard.engine.builtin.link_rules`.

Thin adapters over :mod:`elicitguard.checks.url_safety`: the ``url`` of every URL-mode
request becomes one :class:`~elicitguard.checks.url_facts.UrlFacts` per message
(:func:`message_facts`, shared with the EG4xx checks), from which each check reads the parts
it needs,
wherever the extractor finds one headed to the user: pushed ``elicitation/create`` requests in both push eras,
task-augmented requests, entries of a ``-32042`` error's ``data.elicitations``, and
``inputRequests`` of an ``InputRequiredResult`` or an ``input_required`` task.

Messages never carry a value from the URL: only the kind of problem, the name of a
credential format or signed-URL family from our own tables, and a parameter name when it
reads like a name (an identifier that is not itself a credential). The offending value
travels in ``Hit.value``, which the engine turns into a keyed fingerprint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, Final, Literal

from pydantic import Field

from elicitguard.base.decision import Action, Hit, Severity
from elicitguard.checks.local_network import local_target
from elicitguard.checks.redirect_params import redirect_issues
from elicitguard.checks.schemes import NAMED_SCHEMES
from elicitguard.checks.secrets import scan_value
from elicitguard.checks.url_facts import UrlFacts, protected_domains_for, url_facts
from elicitguard.checks.url_safety import (
    UrlIssue,
    binding_handle,
    credentials_in_url,
    insecure_scheme,
    invalid_url,
    pii_in_url,
    preauthenticated_url,
)
from elicitguard.checks.urls import (
    ParsedUrl,
    host_in,
    is_loopback_host,
)
from elicitguard.engine.context import CheckContext, CheckParams, check
from elicitguard.protocol.items import Item

__all__ = ["message_facts"]

Params = Mapping[str, Any]

_NAME_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.\-\[\]]{0,39}")
_LENGTH_LIMIT: Final = 8192


# --------------------------------------------------------------------------- helpers


def _url(item: Item) -> str | None:
    data = item.data
    url = data.get("url") if isinstance(data, Mapping) else None
    return url if isinstance(url, str) and url else None


def _pointer(item: Item) -> str:
    return item.pointer + "/url"


_FACTS_KEY: Final = "urls.facts"


def message_facts(url: str, ctx: CheckContext) -> UrlFacts:
    """The facts of ``url``, built once per message and shared by every EG3xx and EG4xx check.

    :func:`url_facts` also shares them between messages, but only up to 8 KiB; the
    per-message table keeps a long URL from being split again by each of a dozen checks,
    and works out the protected domains (which the host analysis needs) once.
    """
    table = ctx.cache.get(_FACTS_KEY)
    if table is None:
        table = ctx.cache[_FACTS_KEY] = {}
    facts: UrlFacts | None = table.get(url)
    if facts is None:
        facts = table[url] = url_facts(url, protected_domains_for(ctx.server, ctx.lists))
    return facts


def _parsed(url: str, ctx: CheckContext, *, web_only: bool = False) -> UrlFacts | None:
    """The URL's facts when it has a host (``web_only``: and is http or https), else ``None``.

    Credentials and personal data are looked for in any URL with a host (an
    ``ftp://user:password@host`` carries a password whatever EG301 says of its scheme);
    ``javascript:`` and ``data:`` URLs have no host and are EG301's alone.
    """
    if len(url) > _LENGTH_LIMIT:
        return None
    facts = message_facts(url, ctx)
    parsed = facts.parsed
    if not parsed.has_authority or not parsed.host:
        return None
    if web_only and parsed.scheme not in ("http", "https"):
        return None
    return facts


def _item_facts(item: Item, ctx: CheckContext, *, web_only: bool = False) -> UrlFacts | None:
    """The facts of an item's URL (see :func:`_parsed`), or ``None`` without one."""
    url = _url(item)
    return _parsed(url, ctx, web_only=web_only) if url is not None else None


def _safe_name(key: str | None) -> str | None:
    """A parameter name fit for a message: an identifier that is not itself a credential."""
    if key is None or not _NAME_RE.fullmatch(key) or scan_value(key):
        return None
    if any(c.isdigit() for c in key) and sum(c.isdigit() for c in key) * 3 > len(key):
        return None  # digit-heavy names look like tokens, not names
    return key


def _where(issue: UrlIssue, key: str | None) -> str:
    """Where in the URL, in words, from the component's label (no value, no unsafe name)."""
    location = issue.location
    if ">decoded" in location:
        top = location.split(">", 1)[0]
        name = _safe_name(key)
        named = f" `{name}`" if name else ""
        kind = top.split(":", 1)[0] if ":" in top else top.split("[", 1)[0]
        place = {"query": "query parameter", "fragment": "fragment parameter"}.get(kind, kind)
        if kind == "path":
            place = "path segment"
        return f"the decoded (percent-encoded again or base64) value of a {place}{named}"
    nested = " of a URL nested in a parameter" if ">" in location else ""
    last = location.rsplit(">", 1)[-1]
    name = _safe_name(key)
    named = f" `{name}`" if name else ""
    if last == "userinfo":
        return "the user-info part" + nested
    if last == "url":
        return "the URL itself"
    if last.startswith("json:"):
        return f"the base64 JSON field{named} of a parameter"
    if ";" in last:
        return f"the path parameter{named}{nested}"
    if last.startswith("query:"):
        return f"the query parameter{named}{nested}"
    if last.startswith("fragment:"):
        return f"the fragment parameter{named}{nested}"
    if last.startswith("path["):
        return "a path segment" + nested
    if last == "fragment":
        return "the fragment" + nested
    return "the URL" + nested


def _key_of(parsed: ParsedUrl, issue: UrlIssue) -> str | None:
    for comp in parsed.parts:
        if comp.location == issue.location and comp.key is not None:
            return comp.key
    return None


def _list(params: Params, name: str, default: Sequence[str]) -> tuple[str, ...]:
    value = params.get(name, default)
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence):
        return tuple(str(v) for v in value)
    return tuple(default)


def _action(params: Params, name: str, default: Action) -> Action:
    value = params.get(name)
    try:
        return Action(value) if value is not None else default
    except ValueError:
        return default


# --------------------------------------------------------------------------- EG301


class InsecureSchemeParams(CheckParams):
    """EG301: the environments in which plain http to a loopback or dev host is fine."""

    allow_http_loopback_in: (
        Literal["dev", "test", "prod"] | tuple[Literal["dev", "test", "prod"], ...]
    ) = ("dev",)


class InvalidUrlParams(CheckParams):
    """EG302: the longest URL accepted, in characters."""

    max_length: Annotated[int, Field(gt=0, strict=True)] = _LENGTH_LIMIT


class CredentialsParams(CheckParams):
    """EG303: what an OAuth authorization code in a URL gets (short-lived, single-use)."""

    oauth_code_action: Action = Action.WARN


_SCHEME_WORDS: Final = {
    "dangerous-scheme": "the {scheme} scheme, which a client must never open",
    "plain-http": "plain http {where}; use https",
    "non-https-scheme": "{scheme} instead of https",
}


@check("urls.insecure_scheme", pure=True, params=InsecureSchemeParams)
def insecure_scheme_check(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG301: anything but https outside dev; http in dev only to loopback or dev hosts."""
    url = _url(item)
    if url is None or len(url) > _LENGTH_LIMIT:
        return
    facts = message_facts(url, ctx)
    parsed = facts.parsed
    allowed_in = _list(params, "allow_http_loopback_in", ("dev",))
    for issue in insecure_scheme(
        facts,
        environment=ctx.environment,
        dev_hosts=ctx.lists.get("dev_hosts", ()),
        allow_http_loopback_in=allowed_in,
    ):
        if issue.kind == "no-scheme":
            continue  # a relative URL is EG302's (and EG107's) finding
        scheme = f"{parsed.scheme}:" if parsed.scheme in NAMED_SCHEMES else "a non-https scheme"
        where = "outside loopback hosts" if ctx.environment in allowed_in else "outside development"
        text = _SCHEME_WORDS.get(issue.kind, "{scheme} instead of https")
        yield Hit(
            pointer=_pointer(item),
            args={"detail": text.format(scheme=scheme, where=where), "kind": issue.kind},
            value=url,
        )


# --------------------------------------------------------------------------- EG302


@check("urls.invalid_url", pure=True, params=InvalidUrlParams)
def invalid_url_check(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG302: not absolute, no host, control or whitespace characters, too long, unparseable."""
    data = item.data
    url = data.get("url") if isinstance(data, Mapping) else None
    if not isinstance(url, str) or not url:
        return  # a missing, empty or non-string url is EG107's (the request's shape)
    limit = params.get("max_length", _LENGTH_LIMIT)
    max_length = limit if isinstance(limit, int) and limit > 0 else _LENGTH_LIMIT
    issues = invalid_url(url, max_length=max_length)
    if issues:
        yield Hit(
            pointer=_pointer(item),
            args={"detail": "; ".join(dict.fromkeys(i.detail for i in issues))},
            value=url,
        )


# --------------------------------------------------------------------------- EG303


@check("urls.credentials", pure=True, params=CredentialsParams)
def credentials_check(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG303: a userinfo password, a catalogue secret or a secret-named value in the URL."""
    facts = _item_facts(item, ctx)
    if facts is None:
        return
    code_action = _action(params, "oauth_code_action", Action.WARN)
    for issue in credentials_in_url(facts):
        where = _where(issue, _key_of(facts.parsed, issue))
        if issue.kind == "oauth-code":
            yield Hit(
                pointer=_pointer(item),
                args={"what": "an OAuth authorization code (short-lived)", "where": where},
                value=issue.value,
                severity=Severity.MEDIUM,
                action=code_action,
            )
            continue
        yield Hit(
            pointer=_pointer(item),
            args={"what": _credential_words(issue.what), "where": where},
            value=issue.value,
        )


def _credential_words(what: str | None) -> str:
    """``a password`` as is; a catalogue format name as ``a credential (<name>)``."""
    if not what:
        return "a credential"
    return what if what.startswith(("a ", "an ")) else f"a credential ({what})"


# --------------------------------------------------------------------------- EG304


def _national_id_words(kind: str) -> str:
    """``it_codice_fiscale`` as ``a national identity number (IT codice fiscale)``."""
    country, _, name = kind.partition("_")
    return f"a national identity number ({country.upper()} {name.replace('_', ' ')})"


_PII_WORDS: Final = {
    "email": "an e-mail address",
    "phone": "a phone number",
    "card_number": "a payment card number",
    "iban": "an IBAN",
    "us_ssn": "a US Social Security number",
    "date_of_birth": "a date of birth",
    "person_name": "a person's name",
    "street_address": "a street address",
    "ip_address": "an IP address",
}


@check("urls.pii", pure=True)
def pii_check(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG304: personal data (emails, phones, cards, IBANs, national ids …) in the URL."""
    facts = _item_facts(item, ctx)
    if facts is None:
        return
    for issue in pii_in_url(facts):
        yield Hit(
            pointer=_pointer(item),
            args={
                "what": _PII_WORDS.get(issue.kind) or _national_id_words(issue.kind),
                "where": _where(issue, _key_of(facts.parsed, issue)),
            },
            value=issue.value,
        )


# --------------------------------------------------------------------------- EG305


@check("urls.preauthenticated", pure=True)
def preauthenticated_check(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG305: a signed URL (AWS, GCS, Azure SAS, CloudFront …) or a magic, reset or login link."""
    facts = _item_facts(item, ctx)
    if facts is None:
        return
    for issue in preauthenticated_url(facts):
        yield Hit(
            pointer=_pointer(item),
            args={
                "what": issue.what or "a signed URL",
                "where": _where(issue, _key_of(facts.parsed, issue)),
            },
            value=issue.value,
        )


# --------------------------------------------------------------------------- EG306


@check("urls.unbound", pure=True)
def unbound_check(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG306: a URL-mode target with no unguessable handle tying the flow to its user."""
    facts = _item_facts(item, ctx, web_only=True)
    if facts is None or facts.parsed.problems:
        return
    if not binding_handle(facts):
        yield Hit(pointer=_pointer(item), value=facts.url)


# --------------------------------------------------------------------------- EG307


class LocalNetworkParams(CheckParams):
    """EG307: the environments in which loopback and ``lists.dev_hosts`` targets are fine."""

    allow_loopback_in: (
        Literal["dev", "test", "prod"] | tuple[Literal["dev", "test", "prod"], ...]
    ) = ("dev",)


@check("urls.local_network", pure=True, params=LocalNetworkParams)
def local_network_check(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG307: a URL-mode target on the user's own machine or network (any scheme with a host)."""
    facts = _item_facts(item, ctx)
    if facts is None:
        return
    parsed = facts.parsed
    target = local_target(parsed.host)
    if target is None:
        return
    allowed_in = _list(params, "allow_loopback_in", ("dev",))
    if ctx.environment in allowed_in and (
        target.kind == "loopback"
        or is_loopback_host(parsed.host)
        or host_in(parsed.host, ctx.lists.get("dev_hosts", ()))
    ):
        return
    yield Hit(
        pointer=_pointer(item),
        args={"what": target.what, "kind": target.kind},
        value=facts.url,
    )


# --------------------------------------------------------------------------- EG308


class RedirectParams(CheckParams):
    """EG308: what a redirect parameter pointing at another site gets (a script URL blocks)."""

    cross_site_action: Action = Action.WARN


@check("urls.redirect_params", pure=True, params=RedirectParams)
def redirect_params_check(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG308: a script URL in a parameter, or a redirect parameter to another site."""
    facts = _item_facts(item, ctx)
    if facts is None:
        return
    cross_action = _action(params, "cross_site_action", Action.WARN)
    for issue in redirect_issues(facts):
        name = _safe_name(issue.key)
        where = f"the parameter `{name}`" if name else "a parameter"
        if issue.kind == "script-url":
            scheme = issue.scheme if issue.scheme in NAMED_SCHEMES else "a script"
            detail = (
                f"{where} holds a {scheme}: URL, which runs in the target site if it "
                "redirects there"
            )
            yield Hit(pointer=_pointer(item), args={"detail": detail}, value=issue.value)
            continue
        detail = (
            f"the redirect parameter {where.removeprefix('the parameter ')} sends the user on "
            "to another site (an open redirect through the target)"
        )
        yield Hit(
            pointer=_pointer(item),
            args={"detail": detail},
            value=issue.value,
            severity=Severity.MEDIUM,
            action=cross_action,
        )
