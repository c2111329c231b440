"""Script URLs and open redirects carried in the parameters of a URL-mode target (EG308).

Why: the user trusts the site a URL-mode link names, and that site then does what the
link's parameters say. ``https://app.example.com/login?next=javascript:…`` runs script
in the trusted origin when the site redirects without checking (the classic reflected
XSS through a redirect parameter), and ``…?next=https://evil.example/`` carries the user,
after a real sign-in page, to a site of the attacker's choosing (an open redirect,
CWE-601). Values are read decoded (every layer :func:`elicitguard.checks.urls.parse_url`
unwraps) and cleaned the way WHATWG does before it reads a scheme (leading C0 controls and
spaces dropped, tabs and newlines removed anywhere), so ``java%09script:`` is
``javascript:``.

A script scheme (``javascript:``, ``vbscript:``, ``livescript:``) is reported in any
parameter; ``data:`` only under a redirect-style name (``data:`` images in a parameter are
ordinary). A redirect-style parameter that points at another registrable domain is
reported apart, as a warning, except the ``redirect_uri`` (and its kin) of an OAuth or
OpenID authorization request, which points at the client's site by design.
"""

from __future__ import annotations

import functools
import re
from typing import Final, NamedTuple

from elicitguard.checks.schemes import SCRIPT_SCHEMES
from elicitguard.checks.url_facts import UrlFacts, facts_of, site_of
from elicitguard.checks.urls import ParsedUrl, parse_url

__all__ = ["REDIRECT_NAMES", "RedirectIssue", "redirect_issues"]


class RedirectIssue(NamedTuple):
    """``kind`` is ``script-url`` or ``cross-site-redirect``; ``value`` is for fingerprints."""

    kind: str
    key: str
    scheme: str
    value: str


@functools.lru_cache(maxsize=4096)
def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


#: Redirect-style parameter names (normalised: lower case, no ``_``, ``-`` or ``.``), from
#: OWASP's unvalidated-redirects cheat sheet and PayloadsAllTheThings' open-redirect list.
_REDIRECT_NAMES_TEXT: Final = """
    next redirect redirect_uri redirect_url redirect_to redirectto redir redirect_back return
    return_to returnto return_url return_path returnurl returnuri continue continue_url url
    uri goto go dest destination target to out view forward forward_url callback callback_url
    callbackurl success_url cancel_url failure_url error_url login_url logout logout_url
    checkout_url image_url rurl r_url u r link location origin from from_url back backurl
    back_url path page ref referrer service relaystate post_logout_redirect_uri jump jump_url
    navigate window data_url site html domain reference exit exit_url clickurl click q_url
    qurl spa_url
"""
REDIRECT_NAMES: Final = frozenset(_norm(n) for n in _REDIRECT_NAMES_TEXT.split())
_OAUTH_REDIRECTS: Final = frozenset(
    _norm(n) for n in ("redirect_uri", "redirect_url", "callback", "post_logout_redirect_uri")
)
_OAUTH_MARKERS: Final = frozenset(_norm(n) for n in ("client_id", "response_type", "scope"))
_SCHEME_RE: Final = re.compile(r"([a-z][a-z0-9+.\-]*):")
_TAB_OR_NEWLINE: Final = re.compile(r"[\t\n\r]")
_C0_AND_SPACE: Final = "".join(chr(c) for c in range(0x21))


def _cleaned(value: str) -> str:
    """``value`` as WHATWG reads it before the scheme: no leading controls, tabs or newlines."""
    text = (
        _TAB_OR_NEWLINE.sub("", value) if "\t" in value or "\n" in value or "\r" in value else value
    )
    return text.lstrip(_C0_AND_SPACE).lower()


def _may_hold_scheme(value: str) -> bool:
    """False when :func:`_scheme` of the cleaned ``value`` is certainly empty (no ``:``).

    Why: most parameters are neither redirect-named nor URLs, and cleaning only removes
    characters, so a value without a colon names no scheme and needs no cleaning.
    """
    return ":" in value


def _scheme(text: str) -> str:
    match = _SCHEME_RE.match(text)
    return match.group(1) if match else ""


_WEB_TARGET: Final = re.compile(r"(?:https?:)?/{2,}|https?:(?=[^/])")


def _target_host(text: str) -> str | None:
    """The host an absolute, scheme-relative or slash-less web URL in ``text`` goes to.

    Backslashes read as slashes, as browsers read them; ``https:evil.example`` counts, as
    lenient redirect code and URL parsers without a base read it.
    """
    candidate = text.replace("\\", "/")
    match = _WEB_TARGET.match(candidate)
    if match is None:
        return None
    parsed = parse_url("https://" + candidate[match.end() :].lstrip("/"))
    host = parsed.host.strip("[]") if parsed.has_authority else ""
    return host or None


def _oauth_request(facts: UrlFacts) -> bool:
    return any(_norm(key) in _OAUTH_MARKERS for key in facts.query_params)


def redirect_issues(url: UrlFacts | ParsedUrl) -> list[RedirectIssue]:
    """Script URLs in any parameter, and cross-site targets of redirect-style parameters."""
    return list(facts_of(url).derive(_redirects))


def _redirects(facts: UrlFacts) -> tuple[RedirectIssue, ...]:
    out: list[RedirectIssue] = []
    seen: set[tuple[str, str]] = set()
    own_site = facts.site
    oauth = _oauth_request(facts)
    for location, key, value in facts.parsed.parts:
        if key is None or not location.startswith(("query:", "fragment:", "path")):
            continue
        name = _norm(key)
        redirect_named = name in REDIRECT_NAMES
        if not redirect_named and not _may_hold_scheme(value):
            continue
        text = _cleaned(value)
        scheme = _scheme(text)
        if scheme in SCRIPT_SCHEMES or (scheme == "data" and redirect_named):
            if ("script-url", key) not in seen:
                seen.add(("script-url", key))
                out.append(RedirectIssue("script-url", key, scheme, value))
            continue
        nested = ">" in location and ">decoded" not in location
        if not redirect_named or nested or (oauth and name in _OAUTH_REDIRECTS):
            continue
        host = _target_host(text)
        if host is None or not own_site or site_of(host) == own_site:
            continue
        if ("cross-site-redirect", key) not in seen:
            seen.add(("cross-site-redirect", key))
            out.append(RedirectIssue("cross-site-redirect", key, scheme or "https", value))
    return tuple(out)
