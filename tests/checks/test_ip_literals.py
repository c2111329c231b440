"""The one IP-spelling parser: WHATWG IPv4 rules and the IPv4 address an IPv6 literal carries."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elicitguard.checks.ip_literals import effective_address, ends_in_number, parse_ip


@pytest.mark.parametrize(
    ("host", "address", "form"),
    [
        ("192.168.1.1", "192.168.1.1", "dotted"),
        ("192.168.1.1.", "192.168.1.1", "dotted"),  # one trailing dot is the same host
        ("3232235777", "192.168.1.1", "decimal"),
        ("0xC0A80101", "192.168.1.1", "hex"),
        ("0XC0A80101", "192.168.1.1", "hex"),
        ("017700000001", "127.0.0.1", "octal"),
        ("127.1", "127.0.0.1", "decimal"),
        ("10.1.1", "10.1.0.1", "decimal"),
        ("0xc0.0250.01", "192.168.0.1", "mixed"),
        ("0x", "0.0.0.0", "hex"),
        ("0x.0x.0", "0.0.0.0", "hex"),
        ("[::ffff:192.168.1.1]", "::ffff:c0a8:101", "mapped"),
        ("[::ffff:c0a8:101]", "::ffff:c0a8:101", "mapped"),
        ("[::ffff:0:c0a8:101]", "::ffff:0:c0a8:101", "translated"),
        ("[64:ff9b::c0a8:101]", "64:ff9b::c0a8:101", "nat64"),
        ("[2002:c0a8:101::]", "2002:c0a8:101::", "6to4"),
        ("[::192.168.1.1]", "::c0a8:101", "compatible"),
        ("[::1]", "::1", "ipv6"),
        ("[2001:db8::1]", "2001:db8::1", "ipv6"),
    ],
)
def test_forms(host, address, form):
    parsed = parse_ip(host)
    assert parsed is not None
    assert (parsed.address, parsed.form) == (address, form)


@pytest.mark.parametrize(
    "host",
    [
        "4294967296",
        "0xffffffff1",
        "256.256.256.256",
        "1.2.3.4.5",
        "09.1.1.1",
        "[fe80::1%eth0]",
        "[::1.2.3.]",
        "[google.com]",
        "example.com",
        "0x7g",
    ],
)
def test_not_ip_literals(host):
    assert parse_ip(host) is None


def test_embedded_ipv4_is_the_address_reached():
    for host in ("[::ffff:127.0.0.1]", "[64:ff9b::7f00:1]", "2130706433", "0x7f.1", "127.1"):
        assert effective_address(host) == ipaddress.IPv4Address("127.0.0.1"), host
    assert effective_address("[::1]") == ipaddress.IPv6Address("::1")


def test_ends_in_number():
    assert ends_in_number("10.0.0.256")
    assert ends_in_number("example.0x10")
    assert ends_in_number("1.2.3.4.")
    assert not ends_in_number("0x7f.0.0.0x7g")
    assert not ends_in_number("example.com")


@given(st.text(max_size=40))
def test_never_raises(text):
    parse_ip(text)
    ends_in_number(text) if text else None
    effective_address(text)
