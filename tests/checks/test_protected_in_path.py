"""A protected domain shown in the path of a URL on another host (EG406)."""

from __future__ import annotations

import pytest

from elicitguard.checks.domains import protected_in_path


@pytest.mark.parametrize(
    ("path", "host", "expected"),
    [
        ("/paypal.com/login", "evil.example", "paypal.com"),
        ("/https://accounts.google.com/", "evil.example", "google.com"),
        ("/https%3A%2F%2Faccounts.google.com%2F", "evil.example", "google.com"),
        ("/%2540paypal.com", "evil.example", "paypal.com"),
        ("\\www.paypal.com\\signin", "evil.example", "paypal.com"),
        ("/a/b/login.microsoftonline.com:443/", "evil.example", "microsoftonline.com"),
    ],
)
def test_protected_domain_in_path(path: str, host: str, expected: str) -> None:
    assert protected_in_path(path, host) == expected


def test_policy_protected_domain() -> None:
    assert protected_in_path("/acme.example/x", "evil.example", frozenset({"acme.example"}))


@pytest.mark.parametrize(
    ("path", "host"),
    [
        ("/docs/example.com-setup", "www.example.com"),
        ("/docs/paypal.com-setup", "www.example.com"),
        ("/paypal.com.html", "evil.example"),
        ("/v1.2/setup", "app.example.com"),
        ("/paypal/paypal.com", "github.com"),
        ("/paypal.com/", "www.paypal.com"),
        ("", "evil.example"),
    ],
)
def test_not_a_protected_host_in_path(path: str, host: str) -> None:
    assert protected_in_path(path, host) is None
