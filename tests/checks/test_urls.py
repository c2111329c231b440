"""Tests for URL decomposition, loopback and host-list matching, and URLs in text."""

from __future__ import annotations

import pytest

from elicitguard.checks.urls import find_urls_in_text, host_in, is_loopback_host, parse_url


def comps(url: str) -> dict[str, str]:
    return {c.location: c.value for c in parse_url(url).components()}


def test_components_are_decoded_and_labelled():
    got = comps("HTTPS://User:p%40ss@Example.COM:8443/a/b%20c/;x?Token=a%2Bb&flag#frag")
    assert got["userinfo"] == "p@ss"  # last userinfo entry is the password
    assert got["host"] == "example.com"  # host lower-cased
    assert got["port"] == "8443"
    assert got["path[1]"] == "b c"  # percent-decoded segment
    assert got["query:Token"] == "a+b"  # key kept as written, %2B decoded
    assert got["query:flag"] == ""
    assert got["fragment"] == "frag"
    parsed = parse_url("HTTPS://Example.COM/")
    assert (parsed.scheme, parsed.host) == ("https", "example.com")


def test_user_and_password_are_separate_components():
    parsed = parse_url("https://alice:secret@example.com/")
    assert [(c.location, c.key) for c in parsed.components()][:2] == [
        ("userinfo", "user"),
        ("userinfo", "password"),
    ]


def test_plus_is_kept():
    assert comps("https://e.com/?phone=+14155552671")["query:phone"] == "+14155552671"


def test_fragment_parsed_as_query_when_it_has_equals():
    got = comps("https://app.example.com/cb#access_token=abc&token_type=bearer")
    assert got["fragment:access_token"] == "abc"
    assert got["fragment:token_type"] == "bearer"


def test_spa_fragment_route_with_query():
    got = comps("https://app.example.com/#/reset?token=abc123")
    assert got["fragment"] == "/reset"
    assert got["fragment:token"] == "abc123"


def test_matrix_parameters_in_path():
    got = comps("https://shop.example.com/cart;jsessionid=ABC123XYZ/checkout")
    assert got["path[0];jsessionid"] == "ABC123XYZ"


def test_nested_url_decoded_one_level():
    got = comps("https://a.example/login?next=https%3A%2F%2Fb.example%2Fcb%3Fsig%3Dxyz")
    assert got["query:next>host"] == "b.example"
    assert got["query:next>query:sig"] == "xyz"


def test_double_encoded_nested_url():
    got = comps("https://a.example/?u=https%253A%252F%252Fb.example%252F%253Fk%253Dv")
    assert got["query:u>host"] == "b.example"


def test_nested_only_one_level():
    inner = "https%3A%2F%2Fc.example%2F%3Fx%3D1"
    url = "https://a.example/?next=https%3A%2F%2Fb.example%2F%3Fgo%3D" + inner.replace("%", "%25")
    got = comps(url)
    assert "query:next>query:go" in got
    assert not any(k.count(">") > 1 for k in got)


def test_base64url_json_value_decoded():
    # {"email": "jane@corp.io", "n": {"x": 1}}
    got = comps("https://a.example/?state=eyJlbWFpbCI6ICJqYW5lQGNvcnAuaW8iLCAibiI6IHsieCI6IDF9fQ")
    assert got["query:state>json:email"] == "jane@corp.io"
    assert got["query:state>json:n.x"] == "1"


def test_random_base64_is_not_json():
    got = comps("https://a.example/?state=af0ifjsldkj8Hq3aaaaaaa")
    assert not any(">" in k for k in got)


def test_parse_is_cached_and_hashable():
    a = parse_url("https://example.com/x")
    assert parse_url("https://example.com/x") is a
    assert len({a, parse_url("https://example.com/x")}) == 1


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("//example.com/x", "not-absolute"),  # scheme-relative
        ("/relative/path", "not-absolute"),  # relative
        ("https:///nohost", "no-host"),  # empty host
        ("https:nohost", "no-host"),  # no authority
        ("https://exa mple.com/", "control-or-space"),  # space
        ("https://example.com/\n", "control-or-space"),  # newline
        ("https://example.com:99999/", "bad-port"),  # port out of range
        ("https://example.com:80a/", "bad-port"),  # non-numeric port
        ("https://[::zz]/", "bad-ip-literal"),  # broken IPv6
        ("https://exa<mple.com/", "bad-host"),  # forbidden host char
        ("https://a..b.com/", "bad-host"),  # empty label
        ("http://2130706433/", "ambiguous-ip"),  # decimal IPv4
        ("http://0x7f.0.0.1/", "ambiguous-ip"),  # hex IPv4
        ("http://127.1/", "ambiguous-ip"),  # short IPv4
        ("http://0177.0.0.1/", "ambiguous-ip"),  # octal IPv4
        ("https://evil.com\\@good.com/", "backslash-in-authority"),  # WHATWG reads \ as /
        ("https://a@b@evil.com/", "ambiguous-userinfo"),  # two @
        ("https://example.com/%zz", "bad-percent-encoding"),  # broken escape
        ("1http://example.com", "not-absolute"),  # scheme must start with a letter
    ],
)
def test_problems(url, problem):
    assert problem in parse_url(url).problems


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "https://例え.jp/パス?q=値",  # IRI with Unicode host and path
        "https://xn--r8jz45g.jp/",
        "http://[::1]:8080/cb",
        "https://127.0.0.1/",
        "mailto:someone@example.com",  # no authority expected
        "https://example.com:443/a/b?c=d#e",
    ],
)
def test_valid_urls_have_no_problems(url):
    assert parse_url(url).problems == ()


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("localhost", True),
        ("LOCALHOST.", True),  # case and trailing dot
        ("app.localhost", True),  # RFC 6761 / Secure Contexts
        ("127.0.0.1", True),
        ("127.255.0.9", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost.example.com", False),
        ("127.0.0.1.nip.io", False),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("192.168.1.10", False),
        ("::ffff:127.0.0.1", True),  # mapped: the IPv4 address it carries (EG302 refuses it)
        ("2130706433", True),  # numeric spelling of 127.0.0.1 (EG302 refuses it)
        ("127.1", True),
        ("0x7f.1", True),
        ("[64:ff9b::7f00:1]", True),  # NAT64 of 127.0.0.1
        ("0x7f.1.example", False),  # a name, not an address
        ("128.1", False),
        ("evil.example", False),
    ],
)
def test_is_loopback_host(host, expected):
    assert is_loopback_host(host) is expected


def test_loopback_uses_host_after_userinfo():
    assert not is_loopback_host(parse_url("http://localhost@evil.example/").host)


@pytest.mark.parametrize(
    ("host", "entries", "expected"),
    [
        ("localhost", ["localhost", "127.0.0.0/8", "::1"], True),
        ("127.0.0.9", ["127.0.0.0/8"], True),
        ("::1", ["::1"], True),
        ("[::1]", ["::1/128"], True),
        ("dev.internal", ["*.internal"], True),
        ("internal", ["*.internal"], False),
        ("Example.COM.", ["example.com"], True),
        ("10.1.2.3", ["127.0.0.0/8"], False),
        ("127.0.0.1.nip.io", ["127.0.0.0/8"], False),
        ("localhost.example.com", ["localhost"], False),
    ],
)
def test_host_in(host, entries, expected):
    assert host_in(host, entries) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Open https://example.com/a.", ["https://example.com/a"]),  # trailing dot trimmed
        ("(see https://example.com/a_(b))", ["https://example.com/a_(b)"]),  # balanced parens
        ("go to www.example.org now", ["www.example.org"]),
        ("[click](javascript:alert(1))", ["javascript:alert(1)"]),
        ("data:text/html;base64,PHNjcmlwdD4=", ["data:text/html;base64,PHNjcmlwdD4="]),
        ("visit evil-login.com/reset today", ["evil-login.com/reset"]),  # bare domain, real TLD
        ("app://open and vscode://x", ["app://open", "vscode://x"]),
        ("ftp://files.example.com", ["ftp://files.example.com"]),
    ],
)
def test_find_urls(text, expected):
    assert find_urls_in_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Upload main.py and README.md",  # file names with TLD-like extensions
        "Built with ASP.NET and Node.js",  # product names
        "Contact bob@example.com",  # email, not a URL
        "Meeting at 10:30, version 1.2.3",  # times and versions
        "data: none yet",  # the word data followed by a colon
        "e.g. this, i.e. that",  # abbreviations
        "Enter your full name",
    ],
)
def test_find_urls_ignores_look_alikes(text):
    assert find_urls_in_text(text) == []


def _values(url: str) -> dict[str, str]:
    return {comp.location: comp.value for comp in parse_url(url).parts}


def test_values_are_decoded_until_stable():
    """A value encoded twice or thrice is added once more as its final reading."""
    parts = _values("https://a.example/cb?x=%2567hp_token&y=%252567hp_token")
    assert parts["query:x>decoded"] == "ghp_token"
    assert parts["query:y>decoded"] == "ghp_token"


def test_base64_query_is_split_into_decoded_pairs():
    import base64

    wrapped = base64.urlsafe_b64encode(
        b"password=hunter2&next=https%253A%252F%252Fb.example%252Fx"
    ).decode()
    parts = _values(f"https://a.example/cb?ref={wrapped}")
    assert parts["query:ref>decoded:password"] == "hunter2"
    assert parts["query:ref>decoded:next>decoded"] == "https://b.example/x"


def test_fragment_and_path_are_decoded():
    import base64

    segment = base64.b64encode(b"ssn=078-05-1121!").decode()
    parts = _values(f"https://a.example/u/{segment}/x#e=jane%2540gmail.com")
    assert parts["path[1]>decoded:ssn"] == "078-05-1121!"
    assert parts["fragment:e>decoded"] == "jane@gmail.com"


def test_plain_values_add_nothing():
    url = "https://a.example/cb?state=af0ifjsldkj8Q3ZbD2mNxkVR&utm_source=mail&id=550e8400-e29b-41d4-a716-446655440000"
    assert not any(">" in comp.location for comp in parse_url(url).parts)


def test_decoded_pairs_count_as_parameters():
    import base64

    wrapped = base64.urlsafe_b64encode(b"token=abc123def456&type=magiclink").decode()
    assert (
        parse_url(f"https://a.example/verify?ref={wrapped}").query_params()["type"] == "magiclink"
    )


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://0xC0A80101/", "ambiguous-ip"),
        ("https://[::ffff:192.168.1.1]/", "ambiguous-ip"),
        ("https://[64:ff9b::c0a8:101]/", "ambiguous-ip"),
        ("https://10.1.1/", "ambiguous-ip"),
        ("https://example.256/", "bad-ipv4"),
        ("https://0.0.0.0/", "unspecified-address"),
        ("https://[::]/", "unspecified-address"),
        ("https://ⓔⓧⓐⓜⓟⓛⓔ.ⓒⓞⓜ/", "compat-host"),
        ("https://a.example/#x\\@b.example", "backslash-in-query-or-fragment"),
    ],
)
def test_host_spelling_problems(url, problem):
    assert problem in parse_url(url).problems
