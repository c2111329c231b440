"""Script URLs and cross-site targets in URL parameters (EG308), read as browsers read them."""

from __future__ import annotations

import pytest

from elicitguard.checks.redirect_params import redirect_issues
from elicitguard.checks.urls import parse_url


def _kinds(url: str) -> list[str]:
    return [issue.kind for issue in redirect_issues(parse_url(url))]


@pytest.mark.parametrize(
    "url",
    [
        "https://app.example.com/login?next=javascript:alert(1)",
        "https://app.example.com/login?next=JavaScript:alert(1)",
        "https://app.example.com/login?next=%20javascript:alert(1)",
        "https://app.example.com/login?next=java%0Ascript:alert(1)",
        "https://app.example.com/login?next=%256Aavascript%253Aalert(1)",
        "https://app.example.com/login?item=vbscript:msgbox(1)",
        "https://app.example.com/login?redirect_uri=data:text/html,x",
        "https://app.example.com/login#return_to=javascript:alert(1)",
        "https://accounts.google.com/o/oauth2/auth?client_id=1&redirect_uri=javascript:alert(1)",
    ],
)
def test_script_urls(url: str) -> None:
    assert _kinds(url) == ["script-url"]


@pytest.mark.parametrize(
    "url",
    [
        "https://app.example.com/login?next=https://evil.example/",
        "https://app.example.com/login?next=//evil.example/",
        "https://app.example.com/login?next=%2F%2Fevil.example",
        "https://app.example.com/login?goto=https:%5C%5Cevil.example",
    ],
)
def test_cross_site_redirects(url: str) -> None:
    assert _kinds(url) == ["cross-site-redirect"]


@pytest.mark.parametrize(
    "url",
    [
        "https://app.example.com/login?next=/dashboard",
        "https://login.example.com/?next=https://www.example.com/a",
        "https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=1"
        "&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb&state=abc",
        "https://app.example.com/x?img=data:image/png;base64,AAA",
        "https://docs.example.com/search?q=javascript+closures",
        "https://www.example.com/docs/example.com-setup",
    ],
)
def test_harmless(url: str) -> None:
    assert _kinds(url) == []


def test_issue_names_key_and_scheme() -> None:
    (issue,) = redirect_issues(parse_url("https://a.example.com/?next=javascript:secret()"))
    assert issue.key == "next"
    assert issue.scheme == "javascript"
