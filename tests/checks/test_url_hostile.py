"""No URL or host check raises on any text a peer can send (lone surrogates, controls, huge
numbers, nested encodings): each returns findings or nothing, and the engine never sees an
exception from them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from elicitguard.checks.domains import analyze_host, find_invisible_or_deceptive_chars
from elicitguard.checks.url_safety import (
    binding_handle,
    credentials_in_url,
    insecure_scheme,
    invalid_url,
    pii_in_url,
    preauthenticated_url,
)
from elicitguard.checks.urls import decoded_layers, parse_url

_PIECES = st.sampled_from(
    [
        "https://",
        "http://",
        "[",
        "]",
        "::ffff:",
        "0x",
        "%25",
        "%2",
        "%",
        "@",
        "\\",
        "#",
        "?",
        "&",
        "=",
        ".",
        "..",
        "xn--",
        "а",
        "ӏ",
        "\ud800",
        "\x00",
        "\u202e",
        "ⓔ",
        "０",
        "１",
        "e",
        "127.1",
        "4294967296",
        "YWJj",
        "==",
        "/",
        ";",
    ]
)
_URLS = st.one_of(st.text(max_size=80), st.lists(_PIECES, max_size=24).map("".join))


@settings(max_examples=400, deadline=None)
@given(_URLS)
def test_url_checks_never_raise(url: str) -> None:
    parsed = parse_url(url)
    invalid_url(url)
    insecure_scheme(parsed, environment="dev", dev_hosts=("*.internal", "10.0.0.0/8"))
    credentials_in_url(parsed)
    pii_in_url(parsed)
    preauthenticated_url(parsed)
    binding_handle(parsed)
    find_invisible_or_deceptive_chars(url)
    if parsed.host:
        analyze_host(parsed.host)
    decoded_layers(url)
