"""One implementation per concept: host lists, URL splitting, fingerprints, eras, pointers, methods.

Each concept has one function in the lowest layer that needs it; these tests pin that the
other layers give the same answer (a ``match:`` rule sees the host the EG3xx checks see) and
that no second copy creeps back in.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from elicitguard.audit.records import _url_meta
from elicitguard.base.decision import finding_fingerprint
from elicitguard.base.pointer import escape_pointer, pointer_tokens, unescape_pointer
from elicitguard.checks import schema as schema_checks
from elicitguard.checks.urls import host_in, parse_url
from elicitguard.engine.context import CheckContext
from elicitguard.engine.match import compile_match
from elicitguard.engine.models import MatchExpr
from elicitguard.identity.sealing import STATE_METHODS
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.versions import (
    ELICITATION_ERAS,
    ERA_ALIASES,
    INPUT_REQUIRED_METHODS,
    elicitation_era,
    is_known_era,
)
from elicitguard.testing import quiet_engine

SRC = Path(__file__).resolve().parents[2] / "src" / "elicitguard"


def _url_item(url: str) -> Item:
    return Item(ItemKind.URL_REQUEST, "/params", "2025-11-25", {"mode": "url", "url": url})


def _ctx(lists: dict[str, tuple[str, ...]] | None = None) -> CheckContext:
    envelope = Envelope({}, Direction.SERVER_TO_CLIENT, side=Side.CLIENT, server="srv")
    return CheckContext(envelope, "prod", Side.CLIENT, lists or {}, None, "2025-11-25")  # type: ignore[arg-type]


def _field(url: str, field: str) -> list[str]:
    """Whether ``field equals value`` matches, for every value we try: the field's values."""
    from elicitguard.engine.match import _FIELD_GETTERS

    return _FIELD_GETTERS[field](_url_item(url), _ctx())


HOSTS = ("::1", "example.com", "*.corp.example", "10.0.0.0/8")


@pytest.mark.parametrize(
    "url",
    [
        "https://[::1]/",
        "https://[fe80::1%25eth0]/",
        "https://EXAMPLE.com./",
        "https://a.corp.example/",
        "https://corp.example/",
        "https://10.1.2.3/",
        "https://good.example\\@evil.example/",
        "https://evil.example/",
    ],
)
def test_match_in_host_list_is_checks_urls_host_in(url: str) -> None:
    """`url.host in LIST` answers what host_in answers for the host parse_url finds."""
    predicate = compile_match(MatchExpr.model_validate({"field": "url.host", "in": "hosts"}))
    expected = host_in(parse_url(url).host, HOSTS)
    assert expected is predicate(_url_item(url), _ctx({"hosts": HOSTS}))


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://EXAMPLE.com./x", "example.com"),
        # urlsplit says evil.example; a browser (and parse_url, and EG3xx) go to good.example
        ("https://good.example\\@evil.example/", "good.example"),
        ("https://[::1]:8443/", "::1"),
    ],
)
def test_match_and_audit_see_the_host_parse_url_sees(url: str, host: str) -> None:
    """`url.host`, `url.registrable_domain` and the audit record start from parse_url."""
    assert parse_url(url).host.strip("[]") == host
    assert _field(url, "url.host") == [host]
    assert _url_meta(url)["url_domain"] == _field(url, "url.registrable_domain")[0]


def test_query_keys_come_from_parse_url() -> None:
    """`url.query_keys` are the top-level query keys parse_url decodes."""
    assert _field("https://x.example/?a=1&b%20c=2#e=4", "url.query_keys") == ["a", "b c"]


def test_engine_and_sarif_share_the_finding_fingerprint() -> None:
    """A live finding's fingerprint is finding_fingerprint of its code, server, method, pointer."""
    engine = quiet_engine()
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "m", "url": "http://x.example/", "elicitationId": "e"},
    }
    decision = engine.evaluate(
        Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.CLIENT, server="srv")
    )
    assert decision.findings
    for f in decision.findings:
        assert f.fingerprint == finding_fingerprint(f.code, "srv", "elicitation/create", f.pointer)


def test_one_era_table() -> None:
    """The schema checks judge an alias as protocol.versions resolves it."""
    assert not hasattr(schema_checks, "ERAS")
    assert not hasattr(schema_checks, "normalize_era")
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
    for alias, version in ERA_ALIASES.items():
        assert is_known_era(alias)
        assert elicitation_era(alias) == version
        assert schema_checks.schema_subset_issues(schema, alias) == (
            schema_checks.schema_subset_issues(schema, version)
        )
    assert [elicitation_era(e) for e in ELICITATION_ERAS] == list(ELICITATION_ERAS)


@pytest.mark.parametrize("key", ["a", "a/b", "~", "~1", "a~/b", ""])
def test_pointer_escaping_round_trips(key: str) -> None:
    """RFC 6901: ~ first, then /; the reverse in the reverse order."""
    assert unescape_pointer(escape_pointer(key)) == key
    assert pointer_tokens("/properties/" + escape_pointer(key)) == ["properties", key]


def test_methods_whose_retries_carry_state_are_one_set() -> None:
    """Sealing covers every method an InputRequiredResult may answer."""
    assert INPUT_REQUIRED_METHODS <= STATE_METHODS


@pytest.mark.parametrize(
    ("pattern", "allowed"),
    [
        (r'\.replace\("~", "~0"\)', {"base/pointer.py"}),
        (r'\.replace\("~1", "/"\)', {"base/pointer.py"}),
        (r"\\x00\{(?:rule\.|item\.)?code", {"base/decision.py"}),
        (r"\burlsplit\(", None),  # checked below for the files that must not use it
        (r"^def host_in\w*\(", {"checks/url_hosts.py"}),
        (r"^(?:ERAS|ELICITATION_ERAS)\b.*=", {"protocol/versions.py"}),
        # asgi_headers.py's set is the Mcp-Name header's: methods that name a tool, prompt or
        # resource
        (
            r'frozenset\(\{"tools/call", "prompts/get", "resources/read"\}\)',
            {"protocol/versions.py", "integrations/asgi_headers.py"},
        ),
    ],
)
def test_no_second_copy(pattern: str, allowed: set[str] | None) -> None:
    """A concept's implementation appears only in its one module."""
    regex = re.compile(pattern, re.MULTILINE)
    found = {
        str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if regex.search(p.read_text("utf-8"))
    }
    if allowed is None:
        assert found.isdisjoint({"engine/match.py", "audit/records.py"})
    else:
        assert found <= allowed
