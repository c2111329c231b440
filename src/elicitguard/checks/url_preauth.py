"""Pre-authenticated URLs (EG305): signed URLs and magic, reset or one-time login links.

Why: a URL that is itself a credential (an S3 pre-signed URL, a Slack magic link, a Django
password reset) gives whoever holds it the account or the object, so it must never travel
through the MCP client. Signed URLs are recognised by provider parameter tables (vendor
docs), not by secret regexes; one-time links by their parameter names, path words and a
random handle. EG303 consults :func:`signed_family` and :func:`preauth_issues` so that it
does not report the same values twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from elicitguard.checks.secrets import is_placeholder
from elicitguard.checks.url_facts import UrlFacts, facts_of
from elicitguard.checks.url_handles import is_opaque_handle
from elicitguard.checks.url_issue import UrlIssue
from elicitguard.checks.url_keys import key_profile
from elicitguard.checks.urls import ParsedUrl, parse_url

__all__ = ["preauth_issues", "preauthenticated_url", "signed_family", "top_or_decoded"]


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
_RESET_WORDS: Final = frozenset({"reset", "password-reset", "password_reset", "reset-password"})
_DJANGO_TOKEN_RE: Final = re.compile(r"^[0-9a-z]{1,13}-[0-9a-f]{20,40}$")

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


def signed_family(facts: UrlFacts) -> tuple[_Family, str] | None:
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


def top_or_decoded(location: str) -> bool:
    """A top-level component or a decoded layer of one (not a component of a nested URL)."""
    return ">" not in location or location.split(">", 1)[1].startswith("decoded")


def _one_time_param(parsed: ParsedUrl, segments: list[str]) -> UrlIssue | None:
    for comp in parsed.parts:
        if comp.key is None or not top_or_decoded(comp.location) or not comp.value:
            continue
        if key_profile(comp.key).one_time and not is_placeholder(comp.value):
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
        top_level = comp.key is not None and top_or_decoded(comp.location)
        if (
            top_level
            and key_profile(comp.key or "").link_token
            and is_opaque_handle(comp.value, 48.0)
        ):
            return UrlIssue(
                "magic-link",
                comp.location,
                "login, reset or invitation link with a random token",
                comp.value,
                what="a login, reset or invitation link",
            )
    return None


def preauth_issues(facts: UrlFacts) -> tuple[UrlIssue, ...]:
    parsed = facts.parsed
    found = facts.derive(signed_family)
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
        for issue in (
            facts_of(parse_url(inner)).derive(preauth_issues) if inner != parsed.raw else ()
        ):
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
    return list(facts_of(url).derive(preauth_issues))
