"""URL-mode safety checks (EG301-EG306): one pure function per rule over a URL's facts.

Why: URL mode exists so that secrets never pass through the MCP client. A URL that uses an
unsafe scheme (URL-04, SB-01), is malformed (EL-13), carries a credential or personal data
(URL-01), is itself a signed or one-time login link (URL-02), or has no handle binding the
browser flow to the user who started it (PH-01) defeats that purpose.

Each function returns :class:`UrlIssue` items naming the component (``query:token``) and
the problem in plain words; the offending value travels separately in ``UrlIssue.value``
so the caller can compute a keyed fingerprint. No ``detail`` ever contains a value.
EG305 (signed and one-time links) lives in :mod:`elicitguard.checks.url_preauth`, the
random-handle test in :mod:`~elicitguard.checks.url_handles` and what parameter names say
in :mod:`~elicitguard.checks.url_keys`; this module re-exports their public names.
Signed URLs are recognised by provider parameter tables (vendor docs), not by secret
regexes; their signature parameters are left to EG305 so EG303 does not report them twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from elicitguard.checks.pii import scan_pii
from elicitguard.checks.schemes import NEVER_ALLOWED_SCHEMES
from elicitguard.checks.secrets import (
    catalogue,
    could_match,
    is_placeholder,
    keyword_prefilter,
    keywordless_min_length,
    normalize_key_name,
    scan_value,
    scan_whole_urls,
)
from elicitguard.checks.url_facts import UrlFacts, facts_of
from elicitguard.checks.url_handles import is_opaque_handle
from elicitguard.checks.url_issue import UrlIssue
from elicitguard.checks.url_keys import BIND_PARAM, OAUTH_CODE_KEYS, key_profile
from elicitguard.checks.url_preauth import (
    preauth_issues,
    preauthenticated_url,
    signed_family,
    top_or_decoded,
)
from elicitguard.checks.urls import ParsedUrl, UrlComponent, host_in, is_loopback_host, parse_url

__all__ = [
    "BIND_PARAM",
    "UrlIssue",
    "binding_handle",
    "credentials_in_url",
    "insecure_scheme",
    "invalid_url",
    "is_opaque_handle",
    "pii_in_url",
    "preauthenticated_url",
]

_DIGIT_RE: Final = re.compile(r"[0-9]")


# --------------------------------------------------------------------------- EG301


def _parsed_of(url: UrlFacts | ParsedUrl) -> ParsedUrl:
    return url.parsed if isinstance(url, UrlFacts) else url


def insecure_scheme(
    url: UrlFacts | ParsedUrl,
    *,
    environment: str,
    dev_hosts: Sequence[str],
    allow_http_loopback_in: Sequence[str] = ("dev",),
) -> list[UrlIssue]:
    """EG301: anything but ``https`` outside dev; in dev, ``http`` only to loopback or dev hosts.

    ``javascript:``, ``data:``, ``file:``, ``vbscript:``, ``ftp:``, ``ws:`` and similar are
    reported in every environment. The host checked is the one after any ``user@``.
    """
    parsed = _parsed_of(url)
    scheme = parsed.scheme
    if scheme == "https":
        return []
    if not scheme:
        return [UrlIssue("no-scheme", "scheme", "the URL has no scheme; only https is allowed")]
    if scheme in NEVER_ALLOWED_SCHEMES:
        return [UrlIssue("dangerous-scheme", "scheme", f"the {scheme}: scheme is never allowed")]
    if scheme == "http":
        if environment in allow_http_loopback_in and (
            is_loopback_host(parsed.host) or host_in(parsed.host, dev_hosts)
        ):
            return []
        where = "outside loopback" if environment in allow_http_loopback_in else "outside dev"
        return [UrlIssue("plain-http", "scheme", f"plain http is not allowed {where}; use https")]
    return [UrlIssue("non-https-scheme", "scheme", f"the {scheme}: scheme is not https")]


# --------------------------------------------------------------------------- EG302

_PROBLEM_WORDS: Final = {
    "control-or-space": "the URL contains control or whitespace characters",
    "bad-percent-encoding": "the URL has a malformed percent-encoding",
    "not-absolute": "the URL is not absolute (no scheme)",
    "bad-scheme": "the scheme is not valid",
    "no-host": "the URL has no host",
    "bad-port": "the port is not a number from 0 to 65535",
    "bad-host": "the host contains characters a host name cannot have",
    "bad-ip-literal": "the bracketed IP literal is not a valid IPv6 address",
    "bad-idn": "the internationalised host name cannot be encoded",
    "ambiguous-ip": "the host is an IPv4 address in a non-canonical spelling (numeric, "
    "octal, hexadecimal, short or inside an IPv6 literal) that hides where it goes",
    "bad-ipv4": "the host ends in a number but is not a valid IPv4 address",
    "unspecified-address": "the host is the unspecified address (0.0.0.0 or ::), which "
    "some systems open as this machine",
    "lone-surrogate": "the URL holds a lone UTF-16 surrogate, which no URL can contain",
    "compat-host": "the host is an ASCII name written in full-width, enclosed or other "
    "compatibility characters",
    "backslash-in-authority": "the authority contains a backslash that browsers read as a slash",
    "backslash-in-path": "the path contains a backslash that browsers read as a slash",
    "backslash-in-query-or-fragment": "the query or fragment contains a backslash (not allowed "
    "in a URL; it makes the URL read as going somewhere else)",
    "ambiguous-userinfo": "the authority contains several @ signs; parsers disagree on the host",
}


def invalid_url(url: str, *, max_length: int = 8192) -> list[UrlIssue]:
    """EG302: empty, too long, control or whitespace characters, not absolute, no host, unparseable."""
    if not url:
        return [UrlIssue("empty", "url", "the URL is empty")]
    if len(url) > max_length:
        return [UrlIssue("too-long", "url", f"the URL is longer than {max_length} characters")]
    parsed = parse_url(url)
    return [
        UrlIssue(problem, "url", _PROBLEM_WORDS.get(problem, problem))
        for problem in parsed.problems
    ]


# --------------------------------------------------------------------------- EG303

_SIGNATURE_PARAMS: Final = frozenset(
    {
        "x-amz-signature",
        "x-amz-credential",
        "signature",
        "sig",
        "x-goog-signature",
        "x-goog-credential",
        "googleaccessid",
        "awsaccesskeyid",
        "key-pair-id",
        "policy",
        "ossaccesskeyid",
        "x-oss-signature",
        "x-oss-credential",
        "q-signature",
        "q-ak",
        "hdnts",
        "__token__",
        "hdnea",
        "hmac",
        "md5",
        "token",
        "verify",
        "st",
        "oobcode",
        "token_hash",
        "key",
        "keyname",
    }
)
_NAMES: Final = {e.id: e.name for e in catalogue()}


def _secret_what(kind: str) -> str:
    if kind == "password-under-key":
        return "a password"
    if kind == "secret-under-key":
        return "a secret value"
    return _NAMES.get(kind) or "a credential"


def _secret_detail(kind: str, comp: UrlComponent) -> str:
    where = f"parameter {comp.key!r}" if comp.key and comp.location != "userinfo" else comp.location
    return f"{_secret_what(kind)} in {where}"


def _oauth_code(comp: UrlComponent) -> UrlIssue | None:
    if comp.key is None or normalize_key_name(comp.key) not in OAUTH_CODE_KEYS:
        return None
    value = comp.value.strip()
    if len(value) < 8 or (len(value) < 20 and not _DIGIT_RE.search(value)) or is_placeholder(value):
        return None
    return UrlIssue(
        "oauth-code",
        comp.location,
        "an OAuth authorization code (short-lived credential) in the URL",
        value,
        "medium",
        "an OAuth authorization code",
    )


def _skip_for_signed(comp: UrlComponent, signed: bool) -> bool:
    return (
        signed
        and comp.key is not None
        and comp.key.lower() in _SIGNATURE_PARAMS
        and top_or_decoded(comp.location)
    )


def _component_issues(
    comp: UrlComponent, signed: bool, keywords: tuple[str, ...]
) -> list[UrlIssue]:
    if (comp.key is not None and comp.key.lower() == BIND_PARAM) or _skip_for_signed(comp, signed):
        return []
    if comp.location == "userinfo" and comp.key == "password":
        if comp.value and not is_placeholder(comp.value):
            return [
                UrlIssue(
                    "userinfo-password",
                    "userinfo",
                    "a password in the URL's userinfo",
                    comp.value,
                    what="a password",
                )
            ]
        return []
    issues = []
    for match in scan_value(comp.value, comp.key, keywords=keywords):
        if match.confidence == "low":
            continue
        kind = "secret-key-name" if match.type.endswith("-under-key") else "known-secret-format"
        issues.append(
            UrlIssue(
                kind,
                comp.location,
                _secret_detail(match.type, comp),
                match.value,
                what=_secret_what(match.type),
            )
        )
    if not issues:
        code = _oauth_code(comp)
        if code is not None:
            issues.append(code)
    return issues


def _dedupe(issues: list[UrlIssue]) -> list[UrlIssue]:
    """One issue per secret value, keeping the most specific (nested) location."""
    best: dict[str | None, UrlIssue] = {}
    for issue in issues:
        kept = best.get(issue.value)
        if kept is None or len(issue.location) > len(kept.location):
            best[issue.value] = issue
    return list(best.values())


def _credentials(facts: UrlFacts) -> tuple[UrlIssue, ...]:
    parsed = facts.parsed
    signed = facts.derive(signed_family) is not None
    # The token of a magic, reset or one-time link is EG305's finding, not a second EG303.
    preauth = {issue.location for issue in facts.derive(preauth_issues)}
    # A value that finally decodes to a placeholder (``%2524%257BTOKEN%257D``) is one.
    preauth.update(
        comp.location.removesuffix(">decoded")
        for comp in parsed.parts
        if comp.location.endswith(">decoded") and is_placeholder(comp.value)
    )
    issues: list[UrlIssue] = []
    components = parsed.parts
    # A bare parameter (``?<token>``) is scanned as a value: its key is the text.
    keywords = keyword_prefilter([comp.value or comp.key or "" for comp in components])
    plain_max = keywordless_min_length()
    for comp in components:
        key = comp.key
        if comp.location in preauth:
            continue
        if not comp.value and key is not None and len(key) >= 8:
            issues.extend(_bare_key_issues(comp, keywords))
            continue
        # Skip, exactly, what _component_issues would clear: an untelling key (or none)
        # with a value too short for the catalogue, or holding none of the URL's keywords
        # and shorter than every format that needs none. Most components are like this.
        if comp.location != "userinfo" and (key is None or not key_profile(key).telling):
            size = len(comp.value)
            if size < 8:
                continue
            if size < plain_max and (not keywords or not could_match(comp.value, keywords)):
                continue
        issues.extend(_component_issues(comp, signed, keywords))
    for match in scan_whole_urls(parsed.raw):
        issues.append(
            UrlIssue(
                "known-secret-format",
                "url",
                f"{_NAMES.get(match.type, 'a credential')} URL",
                match.value,
                what=_NAMES.get(match.type, "a credential"),
            )
        )
    return tuple(_dedupe(issues))


def _bare_key_issues(comp: UrlComponent, keywords: tuple[str, ...]) -> list[UrlIssue]:
    """A catalogue credential written as a parameter with no value (``?ghp_…``)."""
    key = comp.key or ""
    if comp.location == "userinfo" or key.lower() == BIND_PARAM:
        return []
    # The label must not repeat the key (it is the secret): keep only its part.
    location = comp.location.removesuffix(key) + "(bare key)"
    return [
        UrlIssue(
            "known-secret-format",
            location,
            f"{_secret_what(match.type)} written as a bare parameter",
            match.value,
            what=_secret_what(match.type),
        )
        for match in scan_value(key, None, keywords=keywords)
        if match.confidence != "low"
    ]


def credentials_in_url(url: UrlFacts | ParsedUrl) -> list[UrlIssue]:
    """EG303: a userinfo password, any catalogue secret, or a value under a secret key name.

    Benign OAuth and tracking parameters are never reported by name; an OAuth ``code`` is a
    ``medium`` warning; ``eg_bind`` is never reported; signature parameters of a recognised
    signed URL and the token of a magic, reset or one-time link are left to
    :func:`preauthenticated_url`.
    """
    return list(facts_of(url).derive(_credentials))


# --------------------------------------------------------------------------- EG304


def _has_digit(value: str) -> bool:
    if value.isascii():
        return _DIGIT_RE.search(value) is not None
    return any(c.isdigit() for c in value)


def _pii(facts: UrlFacts) -> tuple[UrlIssue, ...]:
    issues: list[UrlIssue] = []
    seen: set[str] = set()
    for comp in facts.parsed.parts:
        location = comp.location
        if location in {"host", "port"} or location.endswith((">host", ">port")):
            continue
        telling = False
        if comp.key is not None:
            profile = key_profile(comp.key)
            if profile.pii_skip:
                continue
            telling = profile.pii_context
        value = comp.value
        # scan_pii finds nothing without a digit, an ``@`` or a telling key: skip cheaply.
        if not value or (not telling and "@" not in value and not _has_digit(value)):
            continue
        for match in scan_pii(value, comp.key):
            if match.value in seen:
                continue
            seen.add(match.value)
            words = match.type.replace("_", " ")
            where = f"parameter {comp.key!r}" if comp.key else comp.location
            issues.append(
                UrlIssue(
                    match.type, comp.location, f"personal data ({words}) in {where}", match.value
                )
            )
    return tuple(issues)


def pii_in_url(url: UrlFacts | ParsedUrl) -> list[UrlIssue]:
    """EG304: emails, phone numbers, card numbers, IBANs, SSNs, national ids and similar."""
    return list(facts_of(url).derive(_pii))


# --------------------------------------------------------------------------- EG306


def binding_handle(url: UrlFacts | ParsedUrl) -> bool:
    """EG306: True when the URL carries an unguessable handle tying the flow to its user.

    That is the ``eg_bind`` parameter with a value, a random opaque path segment, or a random
    value under a state- or handle-like key (``state``, ``flow_id``, ``elicitation_id`` …).
    """
    for location, key, value in _parsed_of(url).parts:
        if ">" in location:
            continue
        profile = key_profile(key) if key is not None else None
        if profile is not None and profile.bind:
            if value.strip() and not is_placeholder(value):
                return True
            continue
        # is_opaque_handle needs 12 characters at least: test that before calling it.
        if len(value) < 12:
            continue
        if location.startswith("path[") and is_opaque_handle(value):
            return True
        if profile is not None and profile.handle and is_opaque_handle(value):
            return True
    return False
