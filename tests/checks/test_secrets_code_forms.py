"""Keys as code and configuration carry them: SDK calls, XML elements, ``wandb KEY``.

Why: each class widened what EG204 finds; these tests pin the new finds, the look-alikes that
must stay quiet, and (for the XML element, whose regex changed) that every value the old
regex read is read the same way now. Tokens are built at test time from a seeded RNG.
"""

from __future__ import annotations

import random
import string

import pytest
import re2

from elicitguard.checks.secrets import catalogue, hidden_secret, scan_value
from elicitguard.checks.secrets._community import community_enabled, vendor_call_scan

ALNUM = string.ascii_letters + string.digits
HEX = string.digits + "abcdef"

# The xml-element-secret regex before stray punctuation was read as punctuation.
_OLD_XML = (
    r"<(?P<k>[A-Za-z_][A-Za-z0-9_.:-]{0,40})(?:\s[^<>]{0,120})?>\s{0,3}\{?"
    r"(?:[A-Za-z0-9_.-]{1,40}\s{1,3}){0,2}(?P<s>[^<>{}\s]{4,200})\}?\s{0,3}</"
)


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _new_xml() -> re2._Regexp:
    (entry,) = [e for e in catalogue() if e.id == "xml-element-secret"]
    return re2.compile(entry.regex)


def _secret_of(regex: re2._Regexp, text: str) -> tuple[str, str] | None:
    match = regex.search(text)
    if match is None:
        return None
    for name in ("s", "t"):
        if name in regex.groupindex and match.group(name) is not None:
            return match.group("k"), match.group(name)
    raise AssertionError("no secret group matched")


def _xml_value(rng: random.Random) -> str:
    """A value that starts and ends with no '.', ';' or ',' (what the old regex read whole)."""
    inner = "".join(rng.choice(ALNUM + "._+/=;,:!@-") for _ in range(rng.randint(0, 60)))
    return rng.choice(ALNUM) + inner + rng.choice(ALNUM + "=")


def test_xml_element_reads_every_old_value_the_same() -> None:
    rng = random.Random(20261202)
    new = _new_xml()
    old = re2.compile(_OLD_XML)
    for _ in range(3000):
        tag = rng.choice(["secret", "password", "token", "apiKey", "value"])
        prefix = rng.choice(["", "{", "{AQAAABAAA ", "vendor AQAAABAAA "])
        suffix = "}" if prefix.startswith("{") else ""
        text = f"<{tag}>{prefix}{_xml_value(rng)}{suffix}</{tag}>"
        assert _secret_of(new, text) == _secret_of(old, text), text


def test_xml_element_strips_stray_punctuation() -> None:
    rng = random.Random(7)
    new = _new_xml()
    for _ in range(200):
        token = _r(rng, rng.randint(16, 60), ALNUM + "+/")
        for text in (f"<secret>{{AQAAABAAA .{token};}}</secret>", f"<token>{token},</token>"):
            found = _secret_of(new, text)
            assert found is not None, text
            assert found[1] == token, text


@pytest.mark.parametrize(
    "text",
    [
        "<secret>{AQAAABAAA .v9Lm2Rq7XkT4pW8nB3cZ6yH1dF5gJ0sA2eUo7Vi3;}</secret>",
        "<token>Rk7vQ2mX9pLs4TnW8yBc3HdJ6fGa1ZeU5;</token>",
    ],
)
def test_xml_element_with_punctuation_is_found(text: str) -> None:
    assert [m.type for m in scan_value(text, "notes")] == ["xml-element-secret"]


@pytest.mark.parametrize(
    "text",
    ["<password>.env.production</password>", "<secret>./secrets/prod.txt</secret>"],
)
def test_xml_element_files_stay_quiet(text: str) -> None:
    assert scan_value(text, "notes") == []
    assert hidden_secret(text, "notes") is None


def test_wandb_key_after_its_name() -> None:
    rng = random.Random(11)
    for _ in range(50):
        key = _r(rng, 40, HEX)
        for text in (f"wandb {key}", f"wandb: {key}", f"WANDB_KEY='{key}'"):
            assert any(m.type == "wandb-api-key" for m in scan_value(text, "notes")), text


def test_wandb_commit_pins_stay_quiet() -> None:
    rng = random.Random(12)
    for _ in range(20):
        sha = _r(rng, 40, HEX)
        for text in (
            f"pip install git+https://github.com/wandb/wandb@{sha}",
            f"https://github.com/wandb/wandb/commit/{sha}",
        ):
            assert scan_value(text, "notes") == [], text
            assert hidden_secret(text, "notes") is None, text


needs_community = pytest.mark.skipif(not community_enabled(), reason="community catalogue off")


@needs_community
def test_vendor_call_finds_a_literal_key() -> None:
    rng = random.Random(13)
    for _ in range(30):
        key = _r(rng, 37)
        for text in (
            f'client = smartsheet.Smartsheet("{key}")',
            f'sheets := getsmartsheet("{key}")',
            f"client = smartsheet.Client('{key}')",
        ):
            assert [m.type for m in vendor_call_scan(text)] == ["vendor-call-token"], text
            assert hidden_secret(text, "notes") is not None, text


@needs_community
@pytest.mark.parametrize(
    "text",
    [
        'intent = stripe.PaymentIntent.retrieve("pi_3MtwBwLkdIwHu7ix28a3tqPa")',
        'sheet = smartsheet.Sheets.get_sheet("4583173393803140")',
        'report = getsmartsheet("Quarterly_Sales_Report_Final")',
        'repo = getgithub("9fceb02d0ae598e95dc970b74767f19372d61af8")',
        'smartsheet.Smartsheet("SalesForecastReportQuarterly")',
        'oauth.google("104729338105-q3n8vk2m5tq0c7r1xw9d4hfl6ajz8p2e.apps.googleusercontent.com")',
    ],
)
def test_vendor_call_look_alikes_stay_quiet(text: str) -> None:
    assert vendor_call_scan(text) == []
