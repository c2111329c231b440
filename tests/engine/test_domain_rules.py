"""EG401-EG407 through the engine: presets, protected domains, messages and hit details.

The rule cases (rules/domain/*.cases.yaml) cover detection per era; these tests cover what
the adapters add: which domains are protected, how EG405 weighs where a character sits,
that the default preset blocks EG403-EG405, and that messages never carry userinfo or
query values.
"""

from __future__ import annotations

import functools
import io
import json
from typing import Any

import pytest

from elicitguard.audit.sink import AuditSink
from elicitguard.base.decision import Action, Decision, Severity
from elicitguard.base.keys import KeyRing
from elicitguard.checks.url_facts import protected_domains_for, server_domains
from elicitguard.engine.builtin.domain_rules import url_part_at
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy, load_policy
from elicitguard.protocol.envelope import Direction, Envelope, Side


@functools.lru_cache(maxsize=32)
def _policy(source: str | None, lists: str) -> Policy:
    extra: list[dict[str, Any]] = [{"lists": json.loads(lists)}] if lists != "null" else []
    return load_policy(source, extra_layers=extra, environ={})


def evaluate(
    url: str,
    *,
    policy: str | None = None,
    server: str | None = None,
    lists: dict[str, list[str]] | None = None,
    era: str = "2025-11-25",
) -> Decision:
    engine = Engine(
        _policy(policy, json.dumps(lists, sort_keys=True)),
        audit=AuditSink(io.StringIO()),
        keys=KeyRing.random(),
        default_era=era,
    )
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Sign in", "url": url, "elicitationId": "e-7"},
    }
    return engine.evaluate(
        Envelope(
            message,
            Direction.SERVER_TO_CLIENT,
            side=Side.CLIENT,
            server=server,
            protocol_version=era,
        )
    )


def finding(decision: Decision, code: str) -> Any:
    return next((f for f in decision.findings if f.code == code), None)


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("https://аррӏе.com/signin", "EG403"),
        ("https://аррӏе.com/signin", "EG404"),
        ("https://evil.example/\u202emoc.lapyap", "EG405"),
        ("https://paypal.com\u2044signin.evil.example/", "EG405"),
    ],
)
def test_default_preset_blocks_eg403_to_eg405(url: str, code: str) -> None:
    """EG403-EG405 harm the user, so the default preset blocks them (issue 2, item 8)."""
    decision = evaluate(url)
    assert finding(decision, code) is not None
    assert finding(decision, code).action == Action.BLOCK
    assert decision.blocked


def test_default_actions_of_the_other_domain_rules() -> None:
    """EG401 only logs; EG402, EG406 and EG407 block: browsers show such hosts as punycode,
    go somewhere else than they read, or refuse them."""
    assert finding(evaluate("https://bücher.de/"), "EG401").action == Action.LOG
    assert evaluate("https://bücher.de/").action == Action.LOG
    assert finding(evaluate("https://sоftware-update.example/"), "EG402").action == Action.BLOCK
    assert finding(evaluate("https://xn--a.com/"), "EG407").action == Action.BLOCK
    assert finding(evaluate("https://paypal.com@evil.example/"), "EG406").action == Action.BLOCK


def test_monitor_preset_records_without_blocking() -> None:
    """In monitor mode the spoof is found and recorded, but nothing is enforced."""
    decision = evaluate("https://аррӏе.com/", policy="builtin:monitor")
    assert {"EG403", "EG404"} <= set(decision.codes)
    assert not decision.blocked


def test_eg401_records_both_forms() -> None:
    """The EG401 message holds the Unicode and the ASCII form of the host."""
    message = finding(evaluate("https://例え.jp/ログイン"), "EG401").message
    assert "例え.jp" in message
    assert "xn--r8jz45g.jp" in message


def test_eg401_is_silent_for_ascii_and_full_width_ascii() -> None:
    """Plain ASCII, and full-width ASCII that UTS 46 maps to ASCII, are not internationalised."""
    for url in ("https://github.com/login", "https://ｇｏｏｇｌｅ.com/"):
        assert finding(evaluate(url), "EG401") is None


def test_lookalike_message_names_the_target() -> None:
    """EG404 says which protected domain is imitated."""
    message = finding(evaluate("https://раураӏ.com/"), "EG404").message
    assert "paypal.com" in message


@pytest.mark.parametrize(
    ("server", "lists", "url", "expected"),
    [
        ("mcp.acme.example", None, "https://acrne.example/", True),
        ("https://mcp.acme.example/mcp", None, "https://acrne.example/", True),
        ("acme", None, "https://acrne.example/", False),
        (None, {"server_domains": ["acme.example"]}, "https://acrne.example/", True),
        (None, {"protected_domains": ["*.acme.example"]}, "https://acrne.example/", True),
        (None, {"protected_domains": ["acme-bank.com"]}, "https://acme-bаnk.com/", True),
        (None, None, "https://acme-bаnk.com/", False),
        ("mcp.acme.example", None, "https://login.acme.example/", False),
    ],
)
def test_protected_domains_come_from_policy_and_server(
    server: str | None, lists: dict[str, list[str]] | None, url: str, expected: bool
) -> None:
    """The bundled list, `lists.protected_domains`, `lists.server_domains` and the server's
    own name (when it is a host or URL) all protect against look-alikes."""
    assert expected == (finding(evaluate(url, server=server, lists=lists), "EG404") is not None)


def test_server_domains_helper() -> None:
    """A server name that is a host protects its registrable domain; plain names do not."""
    assert server_domains("mcp.acme.example", {}) == ("acme.example",)
    assert server_domains("https://api.acme.co.uk/mcp", {"server_domains": ("x.example",)}) == (
        "x.example",
        "acme.co.uk",
    )
    assert server_domains("crm", {}) == ()
    assert server_domains("127.0.0.1", {}) == ()
    assert frozenset({"acme.example", "bank.example"}) == protected_domains_for(
        "mcp.acme.example", {"protected_domains": ("*.bank.example",)}
    )


def test_eg405_lookalikes_outside_the_authority_are_only_logged() -> None:
    """A CJK full stop in a query cannot move the destination: low severity, logged."""
    hit = finding(evaluate("https://example.com/search?q=東京。"), "EG405")
    assert hit.severity == Severity.LOW
    assert hit.action == Action.LOG
    serious = finding(evaluate("https://example.com。evil.example/"), "EG405")
    assert serious.action == Action.BLOCK


def test_eg405_bidi_anywhere_blocks_and_names_the_part() -> None:
    """Bidi controls block wherever they are, and the message names the URL part."""
    hit = finding(evaluate("https://example.com/cb?next=\u2066x\u2069"), "EG405")
    assert hit.action == Action.BLOCK
    assert "query" in hit.message
    assert "U+2066" in hit.message


def test_eg405_sees_percent_encoded_controls_in_the_path() -> None:
    """A percent-encoded override in the path is shown decoded by some clients."""
    assert finding(evaluate("https://evil.example/%E2%80%AEmoc.lapyap"), "EG405") is not None
    assert finding(evaluate("https://example.com/a%20b/%2F"), "EG405") is None


@pytest.mark.parametrize(
    ("url", "index", "part"),
    [
        ("https://user:pw@host.example:8443/p/a?q=1#f", 3, "scheme"),
        ("https://user:pw@host.example:8443/p/a?q=1#f", 9, "userinfo"),
        ("https://user:pw@host.example:8443/p/a?q=1#f", 18, "host"),
        ("https://user:pw@host.example:8443/p/a?q=1#f", 36, "path"),
        ("https://user:pw@host.example:8443/p/a?q=1#f", 39, "query"),
        ("https://user:pw@host.example:8443/p/a?q=1#f", 42, "fragment"),
        ("https://host.example#frag?x", 26, "fragment"),
        ("mailto:a@b.example", 10, "path"),
    ],
)
def test_url_part_at(url: str, index: int, part: str) -> None:
    """Positions map to the URL part a person would name."""
    assert part == url_part_at(url, index)


def test_messages_never_hold_userinfo_or_query_values() -> None:
    """Findings name hosts and code points, never the password or a query value."""
    secret = "s3cr3t-" + "Value-42"
    decision = evaluate(f"https://paypal.com:{secret}@evil.example/\u202ex?token={secret}")
    assert {"EG405", "EG406"} <= set(decision.codes)
    for f in decision.findings:
        assert secret not in f.message
        assert secret not in str(f.to_dict())


def test_every_shape_of_url_request_is_checked() -> None:
    """-32042 entries and 2026-07-28 inputRequests are URL requests too."""
    engine = Engine(
        load_policy(environ={}),
        audit=AuditSink(io.StringIO()),
        keys=KeyRing.random(),
        default_era="2025-11-25",
    )
    error = {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": -32042,
            "message": "auth",
            "data": {
                "elicitations": [
                    {
                        "mode": "url",
                        "message": "m",
                        "url": "https://аррӏе.com/",
                        "elicitationId": "x",
                    }
                ]
            },
        },
    }
    decision = engine.evaluate(
        Envelope(error, Direction.SERVER_TO_CLIENT, side=Side.PROXY, protocol_version="2025-11-25")
    )
    assert "EG404" in decision.codes
    assert finding(decision, "EG404").pointer == "/error/data/elicitations/0/url"
