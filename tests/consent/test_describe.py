"""describe_url and describe_form: the facts a consent screen needs, decided by the policy."""

from __future__ import annotations

import pytest

from elicitguard.consent import FormView, UrlView, describe_form, describe_url
from elicitguard.engine.policy import load_policy


def test_ascii_url_view() -> None:
    """An ordinary https URL: the registrable domain is highlighted, nothing is wrong."""
    view = describe_url(
        "https://accounts.example.com/oauth/authorize?client_id=abc",
        server="crm",
        message="Connect your account",
    )
    assert isinstance(view, UrlView)
    assert view.server == "crm"
    assert view.message == "Connect your account"
    assert view.scheme == "https"
    assert "accounts.example.com" == view.ascii_host == view.unicode_host
    assert "example.com" == view.registrable_domain == view.highlight
    assert view.display_parts == (
        "https://accounts.",
        "example.com",
        "/oauth/authorize?client_id=abc",
    )
    assert view.url == view.display_url
    assert view.warnings == ()
    assert view.can_open
    assert not view.blocked


def test_idn_view_shows_both_forms_and_a_notice() -> None:
    """A legitimate IDN is shown in Unicode, with its ASCII form, and only a notice."""
    view = describe_url("https://例え.jp/ログイン")
    assert view.ascii_host == "xn--r8jz45g.jp"
    assert "例え.jp" == view.unicode_host == view.display_host == view.highlight
    assert view.is_idn
    assert not view.disguised
    assert view.codes == ("EG401",)
    assert {"notice"} == view.levels
    assert "xn--r8jz45g.jp" in view.warnings[0].text
    assert view.can_open


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("https://аррӏе.com/signin", "apple.com"),
        ("https://раураӏ.com/", "paypal.com"),
        ("https://gооgle.com/", "google.com"),
        ("https://rnicrosoft.com/", "microsoft.com"),
    ],
)
def test_spoofed_view_is_blocked_and_shown_in_ascii(url: str, target: str) -> None:
    """A look-alike is blocked by default, shown in punycode, and the warning names the target."""
    view = describe_url(url)
    assert view.blocked
    assert not view.can_open
    assert view.highlight == view.registrable_domain
    assert view.highlight is not None
    assert view.highlight.isascii()
    assert "EG404" in view.codes
    lookalike = next(w for w in view.warnings if w.code == "EG404")
    assert lookalike.level == "danger"
    assert target in lookalike.title
    assert view.warnings[0].level == "danger"


def test_disguised_host_is_labelled() -> None:
    """The Unicode form of a whole-script spoof is marked as a disguise, with its reading."""
    view = describe_url("https://аррӏе.com/")
    assert view.disguised
    assert view.reads_as == "apple"
    eg403 = next(w for w in view.warnings if w.code == "EG403")
    assert "Cyrillic" in eg403.text


def test_server_domain_is_protected() -> None:
    """The asking server's own domain (from its name) is protected against look-alikes."""
    assert "EG404" in describe_url("https://acrne.example/", server="mcp.acme.example").codes
    assert (
        "EG404" not in describe_url("https://login.acme.example/", server="mcp.acme.example").codes
    )


def test_userinfo_password_is_masked_and_userinfo_host_warned() -> None:
    """The display masks a password; a host-like user part is explained in plain words."""
    view = describe_url("https://paypal.com:hunter2@evil.example/confirm")
    assert "hunter2" not in view.display_url
    assert view.display_parts == ("https://paypal.com:•••@", "evil.example", "/confirm")
    eg406 = next(w for w in view.warnings if w.code == "EG406")
    assert "evil.example" in eg406.text
    assert "hunter2" not in eg406.text


def test_ip_forms_are_shown_as_the_address() -> None:
    """A decimal IPv4 literal is shown as the dotted address it means, with a warning."""
    view = describe_url("https://3232235777/admin")
    assert view.highlight == "192.168.1.1"
    assert "EG406" in view.codes


def test_hidden_characters_are_made_visible() -> None:
    """A bidi override is displayed as [U+202E], never as itself."""
    view = describe_url("https://evil.example/\u202emoc.lapyap")
    assert "\u202e" not in view.display_url
    assert "[U+202E]" in view.display_url
    assert "EG405" in view.codes
    assert view.blocked


def test_ambiguous_authority_is_not_highlighted() -> None:
    """When parsers disagree about the host, no domain is highlighted and nothing opens."""
    view = describe_url("https://evil.example\\@paypal.com/")
    assert view.highlight is None
    assert not view.can_open


@pytest.mark.parametrize(
    ("url", "env", "can_open"),
    [
        ("https://auth.example.com/", "prod", True),
        ("http://auth.example.com/", "dev", False),
        ("http://127.0.0.1:8765/cb", "prod", False),
        ("http://127.0.0.1:8765/cb", "dev", True),
        ("http://localhost:3000/cb", "dev", True),
        ("javascript:alert(1)", "dev", False),
        ("file:///etc/passwd", "dev", False),
        ("https:///nohost", "prod", False),
    ],
)
def test_can_open_only_https_or_dev_loopback_http(url: str, env: str, can_open: bool) -> None:
    """Only https opens; http only to loopback in the dev environment."""
    assert can_open == describe_url(url, env=env).can_open


def test_policy_decides_the_warnings() -> None:
    """The same URL is blocked by strict, only warned by default, and its warnings vanish
    when the policy turns the rule off."""
    url, text = "https://app.example.com/connect", "Read https://docs.example.com first"
    assert not describe_url(url, message=text).blocked
    warning = next(w for w in describe_url(url, message=text).warnings if w.code == "EG202")
    assert warning.level == "warning"
    assert describe_url(url, "builtin:strict", message=text).blocked
    quiet = load_policy(extra_layers=[{"rules": {"EG202": {"action": "off"}}}], environ={})
    assert "EG202" not in describe_url(url, quiet, message=text).codes


def test_policy_file_is_loaded(tmp_path: object) -> None:
    """A policy file's protected domains are used."""
    from pathlib import Path

    path = Path(str(tmp_path)) / "p.yaml"
    path.write_text("extends: [builtin:default]\nlists:\n  protected_domains: [acme-bank.com]\n")
    assert "EG404" in describe_url("https://acme-bаnk.com/", str(path)).codes
    assert "EG404" not in describe_url("https://acme-bаnk.com/").codes


def test_to_dict_is_json_ready() -> None:
    """The view serialises to plain JSON types."""
    import json

    data = describe_url("https://аррӏе.com/").to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["warnings"][0]["code"].startswith("EG4")


# --- forms ----------------------------------------------------------------------------


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "default": "Alice", "maxLength": 80},
        "guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
        "veg": {"type": "boolean", "title": "Vegetarian", "default": True},
        "seat": {
            "type": "string",
            "enum": ["in", "out"],
            "enumNames": ["Inside", "Outside"],
            "default": "out",
        },
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "extras": {
            "type": "array",
            "items": {
                "anyOf": [{"const": "bread", "title": "Bread"}, {"const": "wine", "title": "Wine"}]
            },
            "default": ["wine"],
        },
        "when": {"type": "string", "format": "date", "description": "Day of the visit"},
    },
    "required": ["name", "when"],
}


def test_form_view_fields_and_defaults() -> None:
    """Fields keep their order, titles, types, options and pre-filled defaults (EL-14)."""
    view = describe_form(
        {"message": "Book a table", "requestedSchema": SCHEMA}, server="restaurant"
    )
    assert isinstance(view, FormView)
    assert view.server == "restaurant"
    assert view.message == "Book a table"
    fields = {f.name: f for f in view.fields}
    assert [f.name for f in view.fields] == [
        "name",
        "guests",
        "veg",
        "seat",
        "size",
        "extras",
        "when",
    ]
    assert fields["name"].default == "Alice"
    assert fields["name"].required
    assert fields["name"].max_length == 80
    assert (
        fields["guests"].type,
        fields["guests"].minimum,
        fields["guests"].maximum,
        fields["guests"].default,
    ) == ("integer", 1.0, 12.0, 2)
    assert (fields["veg"].type, fields["veg"].default) == ("boolean", True)
    assert fields["seat"].options == (("in", "Inside"), ("out", "Outside"))
    assert fields["size"].options == (("s", "Small"), ("l", "Large"))
    assert (fields["extras"].type, fields["extras"].default) == ("multi_enum", ["wine"])
    assert (fields["when"].format, fields["when"].description) == ("date", "Day of the visit")
    assert view.choices == ("accept", "decline", "cancel")
    assert view.can_accept


def test_form_view_accepts_message_shapes() -> None:
    """A JSON-RPC message, an inputRequests entry and bare params give the same fields."""
    params = {"message": "Hi", "requestedSchema": SCHEMA}
    pushed = describe_form(
        {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": params}
    )
    entry = describe_form(
        {"method": "elicitation/create", "params": params}, protocol_version="2026-07-28"
    )
    bare = describe_form(params)
    assert pushed.fields == entry.fields == bare.fields


def test_form_view_without_schema() -> None:
    """A form without a usable schema has no fields but keeps decline and cancel."""
    view = describe_form({"message": "Anything?"})
    assert view.fields == ()
    assert view.choices == ("accept", "decline", "cancel")
