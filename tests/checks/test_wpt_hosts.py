"""Our host parsing against the WHATWG URL standard's own test data (a vendored WPT subset).

Why: a guard that reads a host differently from the browser judges a different destination.
``tests/data/wpt_url_hosts.json`` holds entries of web-platform-tests' ``urltestdata.json``
(IPv4 and IPv6 hosts, percent-encoded and full-width hosts, IDNA) and ``toascii.json``, with
their provenance. For each, the host elicitguard reads must be the one the standard yields,
and where the standard fails the parse, elicitguard must report the host as invalid (so EG302
or EG407 judges it): it never reads a host the browser would not reach.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elicitguard.checks.domains import analyze_host
from elicitguard.checks.ip_literals import effective_address
from elicitguard.checks.urls import parse_url

DATA = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "wpt_url_hosts.json").read_text("utf-8")
)
#: URL problems that mean "this host is not valid" (EG302 blocks each of them).
_HOST_PROBLEMS = frozenset(
    {
        "no-host",
        "bad-host",
        "bad-ip-literal",
        "bad-ipv4",
        "bad-idn",
        "control-or-space",
        "bad-percent-encoding",
    }
)


def _host_of_url(url: str) -> str | None:
    parsed = parse_url(url)
    if _HOST_PROBLEMS.intersection(parsed.problems) or not parsed.host:
        return None
    return _host(parsed.host)


def _host(host: str) -> str | None:
    analysis = analyze_host(host)
    if "invalid_idn" in analysis.kinds:
        return None
    return analysis.ascii_host


@pytest.mark.parametrize(
    ("url", "expected"), DATA["urltestdata"], ids=[u for u, _ in DATA["urltestdata"]]
)
def test_urltestdata_hosts(url: str, expected: str | None) -> None:
    assert _host_of_url(url) == expected


@pytest.mark.parametrize(("host", "expected"), DATA["toascii"], ids=[h for h, _ in DATA["toascii"]])
def test_toascii_hosts(host: str, expected: str | None) -> None:
    assert _host(host) == expected


def test_every_ipv4_spelling_is_one_host() -> None:
    """Each WHATWG IPv4 spelling of 192.168.1.1 is that address, and EG302 refuses it."""
    spellings = [
        "0xC0A80101",
        "0xc0a80101",
        "3232235777",
        "030052000401",
        "0xc0.0xa8.1.1",
        "0300.0250.01.01",
        "192.168.257",
        "192.11010305",
        "0xc0.11010305",
        "192.168.1.1.",
        "[::ffff:192.168.1.1]",
        "[::ffff:c0a8:101]",
        "[64:ff9b::c0a8:101]",
        "[2002:c0a8:101::]",
        "[::192.168.1.1]",
        "[::ffff:0:c0a8:101]",
        "\uff11\uff19\uff12\uff0e\uff11\uff16\uff18\uff0e\uff11\uff0e\uff11",
    ]
    for spelling in spellings:
        analysis = analyze_host(spelling)
        assert analysis.ip_literal is not None, spelling
        assert str(effective_address(analysis.ascii_host)) == "192.168.1.1", spelling
        parsed = parse_url(f"https://{spelling}/")
        canonical = spelling == "192.168.1.1."
        assert ("ambiguous-ip" in parsed.problems) is not canonical, spelling
