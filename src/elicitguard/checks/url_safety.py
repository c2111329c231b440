"""URL-mode safety checks (EG301-EG306): one pure function per rule over a parsed URL.

Why: URL mode exists so that secrets never pass through the MCP client. A URL that uses an
unsafe scheme (URL-04, SB-01), is malformed (EL-13), carries a credential or personal data
(URL-01), is itself a signed or one-time login link (URL-02), or has no handle binding the
browser flow to the user who started it (PH-01) defeats that purpose.

Each function returns :class:`UrlIssue` items naming the component (``query:token``) and
the problem in plain words; the offending value travels separately in ``UrlIssue.value``
so the caller can compute a keyed fingerprint. No ``detail`` ever contains a value.
Signed URLs are recognised by provider parameter tables (vendor docs), not by secret
regexes; their signature parameters are left to EG305 so EG303 does not report them twice.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from elicitguard.checks.pii import pii_context, scan_pii
from elicitguard.checks.schemes import NEVER_ALLOWED_SCHEMES
from elicitguard.checks.secrets import (
    catalogue,
    could_match,
    is_placeholder,
    is_secret_key_name,
    keyword_prefilter,
    keywordless_min_length,
    normalize_key_name,
    scan_value,
    scan_whole_urls,
    shannon_entropy,
)
from elicitguard.checks.url_facts import UrlFacts, facts_of
from elicitguard.checks.urls import ParsedUrl, UrlComponent, host_in, is_loopback_host, parse_url

__all__ = [
    "BIND_PARAM",
    "UrlIssue",
    "binding_handle",
    "credentials_in_url",
    "insecure_scheme",
    "invalid_url",
    "pii_in_url",
    "preauthenticated_url",
]

BIND_PARAM: Final = "eg_bind"


@dataclass(frozen=True, slots=True)
class UrlIssue:
    """One problem with a URL. ``value`` is for fingerprinting only: never print it."""

    kind: str
    location: str
    detail: str
    value: str | None = None
    severity: str | None = None
    what: str | None = None  # what was found, in words from our tables (never the value)

    def __repr__(self) -> str:
        """Keep the offending value out of reprs and assertion messages."""
        shown = "None" if self.value is None else f"<{len(self.value)} chars>"
        return (
            f"UrlIssue(kind={self.kind!r}, location={self.location!r}, detail={self.detail!r}, "
            f"value={shown}, severity={self.severity!r})"
        )


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


# --------------------------------------------------------------------------- EG305 tables


@dataclass(frozen=True, slots=True)
class _Family:
    """A signed-URL family: every group in ``require`` needs one of its parameters present."""

    id: str
    name: str
    require: tuple[tuple[str, ...], ...]
    values: tuple[tuple[str, tuple[str, ...]], ...] = ()
    opaque: str | None = None  # this parameter's value must look like a random handle
    host_suffixes: tuple[str, ...] = ()


# Sources: AWS "Authenticating Requests: Using Query Parameters (SigV4)" and the SigV2 guide,
# RDS/Aurora DSQL IAM auth token docs, Google Cloud Storage "Signed URLs" (V4 and V2),
# Cloud CDN signed URLs, Azure "Create a service SAS", CloudFront "Use signed URLs",
# Alibaba OSS and Tencent COS signature docs, Akamai EdgeAuth tokens, Firebase Storage
# download URLs, Laravel signed routes, nginx secure_link.
_SIGNED: Final = (
    _Family(
        "aws-rds-iam-token",
        "AWS RDS/DSQL IAM authentication token",
        (("x-amz-signature",),),
        (("action", ("connect", "dbconnect", "dbconnectadmin")),),
    ),
    _Family(
        "aws-sigv4",
        "AWS Signature V4 presigned URL",
        (("x-amz-signature",), ("x-amz-credential", "x-amz-algorithm", "x-amz-date")),
    ),
    _Family("aws-sigv2", "AWS Signature V2 presigned URL", (("awsaccesskeyid",), ("signature",))),
    _Family(
        "gcs-v4",
        "Google Cloud Storage V4 signed URL",
        (("x-goog-signature",), ("x-goog-credential", "x-goog-algorithm", "x-goog-date")),
    ),
    _Family(
        "gcs-legacy", "Google Cloud Storage V2 signed URL", (("googleaccessid",), ("signature",))
    ),
    _Family(
        "google-cloud-cdn",
        "Google Cloud CDN signed URL",
        (("keyname",), ("signature",), ("expires", "urlprefix")),
    ),
    _Family(
        "azure-sas",
        "Azure shared access signature",
        (("sig",), ("sv", "se", "sp", "sr", "ss", "srt", "skoid", "spr", "st")),
    ),
    _Family(
        "cloudfront",
        "Amazon CloudFront signed URL",
        (("signature",), ("key-pair-id",), ("expires", "policy")),
    ),
    _Family(
        "alibaba-oss",
        "Alibaba Cloud OSS signed URL",
        (("ossaccesskeyid", "x-oss-credential"), ("signature", "x-oss-signature")),
    ),
    _Family(
        "tencent-cos",
        "Tencent Cloud COS signed URL",
        (("q-signature",), ("q-ak", "q-sign-algorithm")),
    ),
    _Family("akamai-edgeauth", "Akamai EdgeAuth token", (("hdnts", "__token__", "hdnea"),)),
    _Family(
        "firebase-storage",
        "Firebase Storage download token",
        (("token",), ("alt",)),
        (("alt", ("media",)),),
        "token",
    ),
    _Family(
        "expiring-signature",
        "signed URL with an expiry",
        (
            ("signature", "sig", "hmac", "md5", "token", "st", "verify"),
            (
                "expires",
                "expiry",
                "exp",
                "e",
                "x-expires",
                "valid_until",
                "validuntil",
                "expires_at",
            ),
        ),
        (),
        "signature sig hmac md5 token st verify",
    ),
)
# Magic, reset and one-time login links.
_MAGIC: Final = (
    _Family(
        "supabase-verify",
        "Supabase auth verification link",
        (("token", "token_hash"), ("type",)),
        (("type", ("magiclink", "recovery", "invite", "signup", "email_change", "email")),),
    ),
    _Family(
        "firebase-action",
        "Firebase auth action link",
        (("oobcode",), ("mode",)),
        (
            (
                "mode",
                (
                    "signin",
                    "resetpassword",
                    "verifyemail",
                    "recoveremail",
                    "verifyandchangeemail",
                    "revertsecondfactoraddition",
                ),
            ),
        ),
    ),
    _Family(
        "wordpress-reset",
        "WordPress password reset link",
        (("key",), ("action",)),
        (("action", ("rp", "resetpass")),),
    ),
    _Family("stytch-token", "Stytch authentication link", (("stytch_token_type",), ("token",))),
)
_ONE_TIME_KEYS: Final = frozenset(
    {
        "reset_password_token",
        "password_reset_token",
        "reset_token",
        "confirmation_token",
        "unlock_token",
        "invitation_token",
        "invite_token",
        "magic_token",
        "magic_link_token",
        "login_token",
        "sign_in_token",
        "signin_token",
        "email_token",
        "verification_token",
        "passwordless_token",
        "one_time_token",
        "ott",
        "otp_token",
        "login_ticket",
        "clerk_ticket",
        "auth_ticket",
        "activation_token",
        "activation_key",
    }
)
_AUTH_PATH_WORDS: Final = frozenset(
    {
        "magic",
        "magiclink",
        "magic-link",
        "magic_link",
        "passwordless",
        "login",
        "log-in",
        "signin",
        "sign-in",
        "sign_in",
        "verify",
        "verification",
        "verify-email",
        "confirm",
        "confirmation",
        "reset",
        "reset-password",
        "password-reset",
        "reset_password",
        "password_reset",
        "recover",
        "recovery",
        "invite",
        "invitation",
        "accept-invite",
        "activate",
        "activation",
        "one-time",
        "onetime",
        "otp",
        "email-login",
        "auto-login",
        "autologin",
        "impersonate",
        "sso",
    }
)
_LINK_TOKEN_KEYS: Final = frozenset(
    {
        "token",
        "t",
        "key",
        "k",
        "hash",
        "h",
        "sig",
        "signature",
        "ticket",
        "otp",
        "auth",
        "secret",
        "login",
        "link",
        "magic",
        "uid_token",
        "token_hash",
    }
)
_RESET_WORDS: Final = frozenset({"reset", "password-reset", "password_reset", "reset-password"})
_DJANGO_TOKEN_RE: Final = re.compile(r"^[0-9a-z]{1,13}-[0-9a-f]{20,40}$")


# --------------------------------------------------------------------------- opaque handles

_UUID_RE: Final = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[1-8][0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$", re.I
)
_HEX_RE: Final = re.compile(r"^[0-9a-f]+$", re.I)
_OPAQUE_ALPHABET_RE: Final = re.compile(r"^[A-Za-z0-9_~.+/=-]+$")


_ASCII_LOWER_RE: Final = re.compile(r"[a-z]")
_ASCII_UPPER_RE: Final = re.compile(r"[A-Z]")
_ASCII_DIGIT_RE: Final = re.compile(r"[0-9]")
_ASCII_OTHER_RE: Final = re.compile(r"[^A-Za-z0-9]")


def _estimated_bits(value: str) -> float:
    """Bits of a random string of this length over the alphabet it uses (ASCII ``value``)."""
    if value.isdigit():
        return len(value) * math.log2(10)
    if _HEX_RE.match(value):
        return len(value) * 4.0
    alphabet = 26 * (
        (_ASCII_LOWER_RE.search(value) is not None) + (_ASCII_UPPER_RE.search(value) is not None)
    )
    alphabet += 10 * (_ASCII_DIGIT_RE.search(value) is not None)
    alphabet += 4 * (_ASCII_OTHER_RE.search(value) is not None)
    return len(value) * math.log2(max(alphabet, 2))


_HANDLE_SPLIT_RE: Final = re.compile(r"[-_.~+/=]")
_DIGIT_RE: Final = re.compile(r"[0-9]")


@functools.lru_cache(maxsize=16384)
def is_opaque_handle(value: str, min_bits: float = 64.0) -> bool:
    """True for an unguessable random-looking handle (≥ 64 bits, not words, not a counter).

    Every test must pass, so the cheap ones run first and the placeholder test last.
    """
    text = value.strip()
    if _UUID_RE.match(text):
        return True
    if len(text) < 12 or not _OPAQUE_ALPHABET_RE.match(text):
        return False
    parts = [p for p in _HANDLE_SPLIT_RE.split(text) if p]
    if all(p.isalpha() and p.islower() for p in parts) or (
        all(p.isalpha() for p in parts) and len(parts) > 1
    ):
        return False
    # The alphabet test above makes ``text`` ASCII, so ``[0-9]`` is ``str.isdigit`` here.
    if len(text) < 20 and not _DIGIT_RE.search(text):
        return False
    # The alphabet test above makes ``text`` ASCII, as :func:`_estimated_bits` needs.
    if _estimated_bits(text) < min_bits or shannon_entropy(text) < 3.0:
        return False
    return not is_placeholder(text)


# --------------------------------------------------------------------------- EG305


def _family_matches(family: _Family, params: dict[str, str], host: str) -> str | None:
    """Return the marker parameter when ``family`` matches, else None."""
    if family.host_suffixes and not any(host.endswith(s) for s in family.host_suffixes):
        return None
    marker = None
    for group in family.require:
        present = next((name for name in group if params.get(name)), None)
        if present is None:
            return None
        marker = marker or present
    for name, allowed in family.values:
        if params.get(name, "").lower() not in allowed:
            return None
    if family.opaque:
        handles = [n for n in family.opaque.split() if n in params]
        if not any(is_opaque_handle(params[n], 48.0) for n in handles):
            return None
        marker = next(n for n in handles if is_opaque_handle(params[n], 48.0))
    return marker


def _param_location(parsed: ParsedUrl, name: str) -> str:
    for comp in parsed.components():
        if comp.key is not None and comp.key.lower() == name and ">" not in comp.location:
            return comp.location
    return f"query:{name}"


_FAMILIES: Final = (*_SIGNED, *_MAGIC)
# Every family needs one parameter of its first group, so a URL none of whose parameter
# names opens a family skips the table (most URLs: OAuth requests, connect pages).
_FIRST_MARKERS: Final[dict[str, tuple[int, ...]]] = {
    name: tuple(i for i, f in enumerate(_FAMILIES) if name in f.require[0])
    for f in _FAMILIES
    for name in f.require[0]
}


def _signed_family(facts: UrlFacts) -> tuple[_Family, str] | None:
    params = facts.query_params
    if not params:
        return None
    candidates = sorted(
        {i for name in params if name in _FIRST_MARKERS for i in _FIRST_MARKERS[name]}
    )
    for index in candidates:
        family = _FAMILIES[index]
        marker = _family_matches(family, params, facts.parsed.host)
        if marker is not None:
            return family, marker
    return None


def _top_or_decoded(location: str) -> bool:
    """A top-level component or a decoded layer of one (not a component of a nested URL)."""
    return ">" not in location or location.split(">", 1)[1].startswith("decoded")


def _one_time_param(parsed: ParsedUrl, segments: list[str]) -> UrlIssue | None:
    for comp in parsed.parts:
        if comp.key is None or not _top_or_decoded(comp.location) or not comp.value:
            continue
        if _key(comp.key).one_time and not is_placeholder(comp.value):
            detail = f"one-time login or reset token in parameter {comp.key!r}"
            return UrlIssue(
                "one-time-link",
                comp.location,
                detail,
                comp.value,
                what="a one-time login or reset link",
            )
    return None


def _django_reset(parsed: ParsedUrl, segments: list[str]) -> UrlIssue | None:
    for index, segment in enumerate(segments[:-2]):
        if segment.lower() in _RESET_WORDS and _DJANGO_TOKEN_RE.match(segments[index + 2]):
            return UrlIssue(
                "reset-link",
                f"path[{index + 2}]",
                "password reset link with a uid and token in the path",
                segments[index + 2],
                what="a password reset link (Django style)",
            )
    return None


def _auth_path_link(parsed: ParsedUrl, segments: list[str]) -> UrlIssue | None:
    """Generic magic links: an auth word in the path plus a random handle after it."""
    words = [i for i, s in enumerate(segments) if s.lower() in _AUTH_PATH_WORDS]
    if not words:
        return None
    for index in range(words[0] + 1, len(segments)):
        if is_opaque_handle(segments[index]):
            return UrlIssue(
                "magic-link",
                f"path[{index}]",
                "login, reset or invitation link with a random token in the path",
                segments[index],
                what="a login, reset or invitation link",
            )
    for comp in parsed.parts:
        top_level = comp.key is not None and _top_or_decoded(comp.location)
        if top_level and _key(comp.key or "").link_token and is_opaque_handle(comp.value, 48.0):
            return UrlIssue(
                "magic-link",
                comp.location,
                "login, reset or invitation link with a random token",
                comp.value,
                what="a login, reset or invitation link",
            )
    return None


def _preauth(facts: UrlFacts) -> tuple[UrlIssue, ...]:
    parsed = facts.parsed
    found = facts.derive(_signed_family)
    if found is not None:
        family, marker = found
        kind = "magic-link" if family in _MAGIC else "signed-url"
        location = _param_location(parsed, marker)
        value = facts.query_params.get(marker)
        detail = f"{family.name} ({family.id})"
        return (UrlIssue(kind, location, detail, value, what=f"{family.name} ({family.id})"),)
    segments = facts.path_segments
    for finder in (_one_time_param, _django_reset, _auth_path_link):
        issue = finder(parsed, segments)
        if issue is not None:
            return (issue,)
    # A signed or one-time link wrapped in a parameter (``?next=<encoded URL>``), however
    # many times it was percent-encoded, is as live as the outer one.
    for location, inner in parsed.nested_urls():
        for issue in facts_of(parse_url(inner)).derive(_preauth) if inner != parsed.raw else ():
            return (
                UrlIssue(
                    issue.kind,
                    f"{location}>{issue.location}",
                    issue.detail,
                    issue.value,
                    issue.severity,
                    issue.what,
                ),
            )
    return ()


def preauthenticated_url(url: UrlFacts | ParsedUrl) -> list[UrlIssue]:
    """EG305: signed URLs (AWS, GCS, Azure SAS, CloudFront …) and magic, reset or login links."""
    return list(facts_of(url).derive(_preauth))


# --------------------------------------------------------------------------- EG303

_OAUTH_CODE_KEYS: Final = frozenset({"code", "authorization_code", "auth_code"})
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
    if comp.key is None or normalize_key_name(comp.key) not in _OAUTH_CODE_KEYS:
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
        and _top_or_decoded(comp.location)
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
    signed = facts.derive(_signed_family) is not None
    # The token of a magic, reset or one-time link is EG305's finding, not a second EG303.
    preauth = {issue.location for issue in facts.derive(_preauth)}
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
        if comp.location != "userinfo" and (key is None or not _key(key).telling):
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

_PII_SKIP_KEYS: Final = frozenset(
    {BIND_PARAM, "state", "nonce", "code_challenge", "code", "client_id"}
)


def _has_digit(value: str) -> bool:
    if value.isascii():
        return _ASCII_DIGIT_RE.search(value) is not None
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
            profile = _key(comp.key)
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

_HANDLE_KEYS: Final = frozenset(
    {
        "state",
        "handle",
        "flow",
        "flow_id",
        "session",
        "session_id",
        "sid",
        "txn",
        "transaction",
        "transaction_id",
        "ticket",
        "nonce",
        "request_id",
        "req",
        "elicitation",
        "elicitation_id",
        "bind",
        "binding",
        "correlation_id",
        "challenge",
        "token",
        "id",
        "uuid",
        "ref",
        "reference",
        "continue",
        "attempt",
        "login_challenge",
        "consent_challenge",
    }
)


def binding_handle(url: UrlFacts | ParsedUrl) -> bool:
    """EG306: True when the URL carries an unguessable handle tying the flow to its user.

    That is the ``eg_bind`` parameter with a value, a random opaque path segment, or a random
    value under a state- or handle-like key (``state``, ``flow_id``, ``elicitation_id`` …).
    """
    for location, key, value in _parsed_of(url).parts:
        if ">" in location:
            continue
        profile = _key(key) if key is not None else None
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


# --------------------------------------------------------------------------- key profiles


class _Key(NamedTuple):
    """What each check needs to know about one parameter name, decided once per name.

    Parameter names repeat across URLs (``state``, ``client_id``, ``eg_bind``) while values
    do not, so the loops above look a name up here instead of normalising it per check.
    """

    telling: bool  # EG303 may report its value without a catalogue format
    bind: bool  # the eg_bind handle
    pii_skip: bool  # EG304 never looks at it (OAuth state and handles)
    pii_context: bool  # the name announces personal data (``email``, ``phone`` …)
    handle: bool  # EG306: a state- or handle-like name
    one_time: bool  # EG305: a one-time login or reset token name
    link_token: bool  # EG305: a token name in a magic link


@functools.lru_cache(maxsize=4096)
def _key(name: str) -> _Key:
    lower = name.lower()
    normal = normalize_key_name(name)
    return _Key(
        telling=is_secret_key_name(name) or normal in _OAUTH_CODE_KEYS,
        bind=lower == BIND_PARAM,
        pii_skip=lower in _PII_SKIP_KEYS,
        pii_context=pii_context(name) is not None,
        handle=normal in _HANDLE_KEYS,
        one_time=normal.lstrip("_") in _ONE_TIME_KEYS,
        link_token=lower in _LINK_TOKEN_KEYS,
    )
