"""The hosts EG307 treats as the user's own machine or network, in every spelling."""

from __future__ import annotations

import pytest

from elicitguard.checks.local_network import local_target


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("[0000::1]", "loopback"),
        ("[::1]", "loopback"),
        ("2130706433", "loopback"),
        ("localhost", "loopback"),
        ("app.localhost", "loopback"),
        ("sub.localtest.me", "loopback"),
        ("10.0.0.1", "private"),
        ("172.20.1.1", "private"),
        ("0xC0A80101", "private"),
        ("[::ffff:10.0.0.1]", "private"),
        ("[fc00::1]", "private"),
        ("[fd12:3456::1]", "private"),
        ("169.254.1.1", "link-local"),
        ("[fe80::1]", "link-local"),
        ("100.64.0.1", "cgnat"),
        ("169.254.169.254", "metadata"),
        ("[fd00:ec2::254]", "metadata"),
        ("metadata.google.internal", "metadata"),
        ("printer.local", "local-name"),
        ("nas.home.arpa", "local-name"),
        ("git.corp.internal", "local-name"),
        ("router", "local-name"),
        ("10.0.0.1.nip.io", "private"),
        ("app-192-168-1-1.sslip.io", "private"),
    ],
)
def test_local_hosts(host: str, kind: str) -> None:
    target = local_target(host)
    assert target is not None
    assert target.kind == kind


@pytest.mark.parametrize(
    "host",
    [
        "example.com",
        "8.8.8.8",
        "[2606:4700::1111]",
        "8.8.8.8.nip.io",
        "localhost.example.com",
        "127.0.0.1.example.com",
        "local.example.com",
        "internal.example.com",
        "0.0.0.0",  # EG302's finding
        "",
    ],
)
def test_public_hosts(host: str) -> None:
    assert local_target(host) is None
