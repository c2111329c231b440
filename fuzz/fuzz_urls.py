"""Fuzz target: URL parsing, URLs in text, host matching and the URL safety analysis."""

from __future__ import annotations

import atheris
from _common import main

with atheris.instrument_imports():
    from elicitguard.checks import url_safety
    from elicitguard.checks.domains import (
        analyze_host,
        bundled_protected_domains,
        find_invisible_or_deceptive_chars,
        registrable_domain,
    )
    from elicitguard.checks.ip_literals import effective_address, parse_ip
    from elicitguard.checks.urls import (
        decoded_layers,
        find_urls_in_text,
        host_in,
        is_loopback_host,
        parse_url,
    )

PROTECTED = bundled_protected_domains()
HOSTS = ["example.com", "*.example.org", "127.0.0.1", "[::1]", "xn--bcher-kva.example"]


def test_one_input(data: bytes) -> None:
    """None of these may raise on any text: problems are recorded, never raised."""
    text = data.decode("utf-8", "replace")
    parsed = parse_url(text)
    repr(parsed)
    parsed.query_params()
    parsed.path_segments()
    list(parsed.components())
    parsed.nested_urls()
    decoded_layers(text[:1024])
    parse_ip(text[:256])
    effective_address(parsed.host)
    host_in(parsed.host, HOSTS)
    is_loopback_host(parsed.host)
    for url in find_urls_in_text(text)[:8]:
        parse_url(url)
    url_safety.invalid_url(text)
    url_safety.insecure_scheme(parsed, environment="prod", dev_hosts=HOSTS)
    url_safety.preauthenticated_url(parsed)
    url_safety.credentials_in_url(parsed)
    url_safety.pii_in_url(parsed)
    url_safety.binding_handle(parsed)
    url_safety.is_opaque_handle(text[:256])
    analyze_host(parsed.host or text[:253], protected=PROTECTED)
    registrable_domain(parsed.host or text[:253])
    find_invisible_or_deceptive_chars(text[:512])


if __name__ == "__main__":
    main(test_one_input)
