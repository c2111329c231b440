"""elicitguard never fetches a URL that came from traffic: no socket while judging or showing it."""

from __future__ import annotations

import socket

import pytest

from elicitguard.checks.domains import analyze_host
from elicitguard.cli import main
from elicitguard.consent import ConsentGate, describe_form, describe_url, render_html, render_text

URLS = [
    "https://аррӏе.com/signin",
    "https://例え.jp/ログイン",
    "https://accounts.google.com.evil.example/",
    "https://paypal.com@evil.example/",
    "https://3232235777/",
    "http://127.0.0.1:8765/cb",
    "https://auth.example.com/cb?token=abc&redirect_uri=https%3A%2F%2Fother.example%2F",
    "https://fresh-never-seen-host-1234.example.org/",
]


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    for name in (
        "socket",
        "create_connection",
        "getaddrinfo",
        "gethostbyname",
        "gethostbyname_ex",
        "socketpair",
    ):
        monkeypatch.setattr(socket, name, refuse)
    analyze_host.cache_clear()


@pytest.mark.usefixtures("no_network")
def test_describing_rendering_and_gating_open_no_socket(capsys: pytest.CaptureFixture[str]) -> None:
    """describe_url, describe_form, both renderers, the gate and check-url never touch the network."""
    gate = ConsentGate(lambda view: True)
    for url in URLS:
        view = describe_url(url, server="mcp.acme.example", message=f"Open {url}", env="dev")
        render_text(view, color=True)
        render_html(view, open_link=True)
        gate.show(gate.describe(url, key=url))
        assert main(["check-url", url, "--format", "json"]) in (0, 1)
    form = describe_form(
        {
            "message": "See https://evil.example/x",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "site": {"type": "string", "format": "uri", "default": "https://аррӏе.com/"}
                },
            },
        }
    )
    render_html(form)
    capsys.readouterr()
