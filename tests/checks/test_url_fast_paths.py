"""The URL hot path's shortcuts give exactly the answers of the full scans.

URL analysis runs on every URL-mode request, so the detectors skip work: one keyword pass
per URL instead of one per component, a per-format minimum length and required literals,
per-name profiles, and cheap tests before the placeholder and entropy checks. Each
shortcut must be exact; these tests compare it with the slow path on many values.
"""

from __future__ import annotations

import random
import string

import pytest

from elicitguard.checks import secrets
from elicitguard.checks.pii import scan_pii
from elicitguard.checks.secrets import (
    base62_crc32,
    catalogue,
    could_match,
    keyword_prefilter,
    scan_value,
    shannon_entropy,
)
from elicitguard.checks.url_safety import credentials_in_url, preauthenticated_url
from elicitguard.checks.urls import ParsedUrl, parse_url

RNG = random.Random(5)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def ghp() -> str:
    body = rand(30)
    return "gh" + "p_" + body + base62_crc32(body)


VALUES = [
    *(rand(RNG.randint(1, 70), ALNUM + "-_.:/=@~+") for _ in range(400)),
    *(rand(RNG.randint(8, 50), "0123456789abcdef") for _ in range(100)),
    *(ghp() for _ in range(20)),
    "auth.example.com",
    "oauth2",
    "authorize",
    "https://app.example.com/callback",
    "https://user:s3cr3t-pass@db.example.com/x",
    "postgres://svc:Pa55w0rd-x@db.internal:5432/app",
    "api_key=" + rand(32),
    "sk_live_" + rand(24),
    "AK" + "IA" + rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    "M" + rand(25) + "." + rand(6) + "." + rand(27),
]


def test_keyword_prefilter_over_many_values_gives_the_same_matches() -> None:
    """Scanning with the joined values' keywords equals scanning each value on its own."""
    for start in range(0, len(VALUES), 7):
        group = VALUES[start : start + 7]
        keywords = keyword_prefilter(group)
        for value in group:
            for key in (None, "token", "state"):
                assert scan_value(value, key, keywords=keywords) == scan_value(value, key)


def test_could_match_is_false_only_when_nothing_matches() -> None:
    """could_match never hides a catalogue match (it may allow values that match nothing)."""
    for value in VALUES:
        keywords = keyword_prefilter([value])
        if not could_match(value, keywords):
            assert secrets.scan_text(value) == []


@pytest.mark.parametrize("entry", catalogue(), ids=lambda e: e.id)
def test_every_format_has_a_computed_minimum_length(entry: secrets.CatalogueEntry) -> None:
    """The regex parser reads every pattern (0 would mean "no length prefilter")."""
    assert 1 <= entry.min_length <= 1000
    if entry.id == "discord-bot-token":
        assert entry.min_length == 59  # 1 + 23 + 1 + 6 + 1 + 27


def test_keywordless_formats_still_match_at_their_minimum_length() -> None:
    """The Discord bot token (no keyword) is found at exactly its minimum length."""
    import base64

    user_id = base64.b64encode(b"123456789012345678").decode().rstrip("=")
    token = user_id[:24] + "." + rand(6) + "." + rand(27)
    assert len(token) == 59
    assert "discord-bot-token" in {m.type for m in scan_value(token)}


def test_required_literals_skip_only_values_that_cannot_match() -> None:
    """URL-password formats need an ``@``; the generic assignment needs ``=`` or ``:``."""
    assert {m.type for m in scan_value("postgres://svc:Pa55w0rd-x@db.internal/app")} & {
        "database-url-password",
        "url-basic-auth",
    }
    assert scan_value("postgres://db.internal:5432/app") == []
    assert scan_value("the auth token is fine") == []


def test_entropy_matches_the_textbook_formula() -> None:
    """The table-driven entropy equals -sum(p log2 p) to rounding."""
    import math
    from collections import Counter

    for value in VALUES[:200]:
        counts = Counter(value)
        expected = -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())
        assert shannon_entropy(value) == pytest.approx(expected, abs=1e-9)


def test_parsed_url_is_an_immutable_value_that_hides_its_parts() -> None:
    """Equality and hashing by raw URL; no attribute can change; the repr shows no values."""
    secret = "Zr4Wm7Xn2Bv6Cj9D"
    parsed = parse_url(f"https://admin:{secret}@example.com/p?token={secret}")
    assert isinstance(parsed, ParsedUrl)
    assert parsed == parse_url(f"https://admin:{secret}@example.com/p?token={secret}")
    assert parsed != parse_url("https://example.com/")
    assert hash(parsed) == hash(parsed.raw)
    assert secret not in repr(parsed)
    with pytest.raises(AttributeError):
        parsed.host = "evil.example"  # type: ignore[misc]


def test_a_token_written_as_a_bare_parameter_is_found_and_not_echoed() -> None:
    """``?<token>`` is scanned; the issue's location does not repeat the token."""
    token = ghp()
    (issue,) = credentials_in_url(parse_url(f"https://example.com/install?{token}"))
    assert issue.kind == "known-secret-format"
    assert issue.value == token
    assert token not in issue.location
    assert token not in issue.detail


def test_a_magic_link_token_is_reported_once_by_eg305() -> None:
    """The token of a one-time login link is EG305's finding, not also EG303's."""
    url = parse_url("https://app.example.com/users/password/edit?reset_password_token=" + rand(20))
    assert [i.kind for i in preauthenticated_url(url)] == ["one-time-link"]
    assert credentials_in_url(url) == []


@pytest.mark.parametrize(
    "value",
    ["550e8400-e29b-41d4-a716-446655440000", "7C9E6679-7425-40DE-944B-E07FC1F90AE7"],
)
def test_uuids_are_never_personal_data(value: str) -> None:
    """A canonical UUID is an identifier, whatever digits it holds."""
    assert scan_pii(value) == []
    assert scan_pii("19900101-1234-4123-8123-123456789012") == []


def test_short_numbers_without_context_skip_the_detectors() -> None:
    """Below the shortest number-shaped format nothing is reported (and nothing runs)."""
    assert scan_pii("12345678") == []
    assert [m.type for m in scan_pii("12345678Z")] == ["es_dni"]
