"""The URL path's pre-checks change no result: each run with and without them must agree.

Why: a new URL on every URL-mode request is the common case, so the URL checks skip work
a cheap test proves useless (a path with no dot cannot name a protected domain, a token
whose first bytes are not text is not base64 text) and keep per-host answers by host. A
pre-check that skipped a value it should not would lose a finding silently; these tests
run every URL check over the URL corpora in ``benchmarks/data``, the benchmark's URL
generator and generated or mutated URLs, once as shipped and once with every pre-check
forced to "may hold something" and the per-host cache bypassed, and compare the results.
"""

from __future__ import annotations

import base64
import importlib.util
import string
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elicitguard.checks import local_network, pii, redirect_params, url_layers, urls
from elicitguard.checks.domains import _path
from elicitguard.checks.domains import protected_in_path as _protected_in_path
from elicitguard.checks.redirect_params import _redirects
from elicitguard.checks.url_facts import UrlFacts
from elicitguard.checks.url_preauth import preauth_issues
from elicitguard.checks.url_safety import _credentials, _pii, binding_handle

ROOT = Path(__file__).resolve().parents[2]
PROTECTED = frozenset({"example.com", "paypal.com"})


def _tsv_urls(name: str) -> list[str]:
    lines = (ROOT / "benchmarks" / "data" / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t", 1)[0] for line in lines if line and not line.startswith("#")]


def _generated_urls() -> list[str]:
    spec = importlib.util.spec_from_file_location(
        "_bench_urls", ROOT / "benchmarks" / "bench_urls.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    pool: list[str] = module.url_pool(400, seed=3)
    return pool


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


#: Values whose decoding is text (of every first character), so the base64 pre-check has
#: something to wrongly skip, and paths that name a domain only once decoded.
HAND = [
    *(f"https://app.example.net/connect?state={_b64(c + 'text=abcdefgh12345')}" for c in " !~aZ0"),
    f"https://app.example.net/c?next={_b64(' https://evil.example/')}&eg_bind=x",
    f"https://app.example.net/p/{_b64('~user=admin&token=ghp_x')}",
    "https://app.example.net/x?t=" + _b64('  {"token": "abcdefgh"}'),
    "https://evil.example/paypal%2Ecom/login",
    "https://evil.example/https:%2F%2Faccounts.paypal.com%2F",
    "https://evil.example/a\\paypal.com\\b",
    "https://evil.example/paypal.com",
    "https://paypal.com/evil.example",
    "http://10.0.0.1.nip.io/x",
    "http://printer.local/",
    "https://[::ffff:127.0.0.1]/",
    "https://app.example.net/p?x=javascript:alert(1)&img=data:text/html,x&y=%09java%0Ascript:1",
    "https://app.example.net/p?x=" + _b64("javascript:alert(1)") + "&n=vbscript:msgbox",
]

#: Personal data of each context-free shape, at the least digits each can have.
PII_VALUES = [
    "4111111111111111",
    "4111-1111-1111-1111",
    "4111 1111 1111 1111",
    "378282246310005",
    "DE89370400440532013000",
    "GB82 WEST 1234 5698 7654 32",
    "RSSMRA85T10A562S",
    "12345678Z",
    "X1234567L",
    "X-1234567-L",
    "131052-308T",
    "811218-9876",
    "900101-1234568",
    "11010519491231002X",
    "GODE561231GR8W",
    "GOAE561231HDFRRN09",
    "123.456.789-09",
    "078-05-1121",
    "536-90-4399",
]
SCRIPT_VALUES = [
    "javascript:alert(1)",
    "data:text/html,x",
    "vbscript:x",
    "java%09script:1",
    "//evil.example/",
]
HAND += [f"https://app.example.net/p?{k}={p}" for k in ("x", "ref", "order_id") for p in PII_VALUES]
HAND += [f"https://app.example.net/p?x=ab_{p}-cd" for p in PII_VALUES]

CORPUS = [
    *_tsv_urls("url_mode_cases.tsv"),
    *_tsv_urls("url_host_cases.tsv"),
    *_generated_urls(),
    *HAND,
]


def _results(url: str) -> tuple[Any, ...]:
    """Every URL check's answer for ``url``, from a fresh parse (no shared facts)."""
    parsed = urls._parse(url)
    facts = UrlFacts(url, parsed, PROTECTED)
    host = parsed.host if parsed.has_authority else ""
    return (
        parsed.parts,
        parsed.problems,
        _credentials(facts),
        _pii(facts),
        _redirects(facts),
        preauth_issues(facts),
        binding_handle(facts),
        local_network.local_target.__wrapped__(host) if host else None,
        _protected_in_path(parsed.path, host, PROTECTED),
    )


def _cached_results(url: str) -> tuple[Any, ...]:
    """As :func:`_results`, with the per-host cache in use (asked twice: once to fill it)."""
    parsed = urls._parse(url)
    host = parsed.host if parsed.has_authority else ""
    if host:
        local_network.local_target(host)
    facts = UrlFacts(url, parsed, PROTECTED)
    return (
        parsed.parts,
        parsed.problems,
        _credentials(facts),
        _pii(facts),
        _redirects(facts),
        preauth_issues(facts),
        binding_handle(facts),
        local_network.local_target(host) if host else None,
        _protected_in_path(parsed.path, host, PROTECTED),
    )


class _FullScans:
    """Every pre-check answers "may hold something": the checks do their whole work."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch

    def __enter__(self) -> None:
        self.monkeypatch.setattr(url_layers, "_may_be_text", lambda value: True)
        self.monkeypatch.setattr(_path, "_may_name_domain", lambda path: True)
        self.monkeypatch.setattr(pii, "_may_hold_number_shape", lambda value: True)
        self.monkeypatch.setattr(redirect_params, "_may_hold_scheme", lambda value: True)

    def __exit__(self, *exc: object) -> None:
        self.monkeypatch.undo()


def _compare(urls_: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [_cached_results(url) for url in urls_]
    with _FullScans(monkeypatch):
        full = [_results(url) for url in urls_]
    for url, got, expected in zip(urls_, fast, full, strict=True):
        assert got == expected, f"pre-checks changed a result for a URL of {len(url)} chars"


def test_the_corpora_have_urls_that_exercise_each_pre_check() -> None:
    """The corpus holds base64 text values and dotted and encoded paths (else the test is vacuous)."""
    assert len(CORPUS) > 500
    layered = [u for u in CORPUS if any(">decoded" in c.location for c in urls._parse(u).parts)]
    assert len(layered) >= 5
    assert sum("%" in urls._parse(u).path for u in CORPUS) >= 3


def test_pre_checks_change_no_result_on_the_corpora(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check over the tsv corpora, the benchmark's URLs and the hand cases agrees."""
    _compare(CORPUS, monkeypatch)


_TEXT = st.text(alphabet=string.printable.strip("\x0b\x0c") + " ", min_size=6, max_size=40)
_AFFIX = st.text(alphabet="aZ09-_. ", max_size=3)
_HOSTS = st.sampled_from(
    ["app.example.net", "paypal.com", "10.0.0.7", "localhost", "a.local", "x.nip.io", "[::1]"]
)


@st.composite
def _mutated_urls(draw: st.DrawFn) -> str:
    """URLs whose values are base64 or percent-encoded text, with dotted or encoded paths."""
    host = draw(_HOSTS)
    segments = draw(
        st.lists(
            st.one_of(
                st.sampled_from(["paypal.com", "paypal%2Ecom", "a.b", "docs", "x%2F.y", "v1"]),
                _TEXT.map(_b64),
            ),
            max_size=3,
        )
    )
    values = draw(
        st.lists(
            st.one_of(
                _TEXT.map(_b64),
                _TEXT.map(lambda t: base64.b64encode(t.encode()).decode()),
                st.text(
                    alphabet=string.ascii_letters + string.digits + "-_", min_size=12, max_size=60
                ),
                _TEXT.map(lambda t: "".join(f"%{b:02X}" for b in t.encode())),
                st.tuples(_AFFIX, st.sampled_from(PII_VALUES), _AFFIX).map("".join),
                st.sampled_from(SCRIPT_VALUES),
            ),
            min_size=1,
            max_size=4,
        )
    )
    keys = draw(
        st.lists(
            st.sampled_from(["state", "next", "t", "email", "token", "q", "img"]),
            min_size=len(values),
            max_size=len(values),
        )
    )
    query = "&".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))
    return f"https://{host}/{'/'.join(segments)}?{query}"


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_mutated_urls(), min_size=1, max_size=5))
def test_pre_checks_change_no_result_on_generated_urls(
    monkeypatch: pytest.MonkeyPatch, generated: list[str]
) -> None:
    """Generated and mutated URLs agree too (values that decode to text of any first byte)."""
    _compare(generated, monkeypatch)


def _first_bytes(values: Iterator[str]) -> set[int]:
    return {url_layers.decode_b64(v[:4])[0] for v in values}


def test_base64_pre_check_agrees_with_the_whole_decoding() -> None:
    """For any base64 value, a text decoding implies the pre-check said "may be text"."""
    printable = "".join(chr(c) for c in range(0x20, 0x7F))
    samples = [_b64(a + b + c + "rest-of-text") for a in printable for b in " ~Az" for c in "!9"]
    assert len(_first_bytes(iter(samples))) == len(printable)
    for value in samples:
        assert url_layers._b64_text(value) is not None
        assert url_layers._may_be_text(value)
