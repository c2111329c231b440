"""The HTML consent pages in a real headless Chromium, driven by chromedriver through selenium.

What a person sees is asserted through the DOM and computed styles, not pixels: the asking
server is named, the registrable domain is emphasised (bold and highlighted, the rest of the
URL is not), decline and cancel exist and are visible, and no link exists other than the
explicit open button. The page's Content-Security-Policy pins its style by hash, so the
computed-style checks also prove the CSP lets the page's own style through. A screenshot
of every page is kept under the test's tmp folder as a record, never as the assertion.

Skips on a laptop without chromium, chromedriver or selenium; fails in CI
(ELICITGUARD_REQUIRE_INTEGRATION=1, set by .ci/run, which installs them).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration_support import require, require_module

from elicitguard.consent import describe_form, describe_url, render_html

pytestmark = pytest.mark.integration

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1000,1200",
)


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    chromium = require("chromium")
    chromedriver = require("chromedriver")
    require_module("selenium")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="eg-chromium-profile-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        browser = webdriver.Chrome(options=options, service=Service(chromedriver))
        try:
            yield browser
        finally:
            browser.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("consent-pages")


def load(driver: Any, folder: Path, name: str, page: str) -> Any:
    path = folder / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    driver.get(path.as_uri())
    driver.save_screenshot(str(folder / f"{name}.png"))
    return driver


def style(driver: Any, css: str, prop: str) -> str:
    return str(
        driver.execute_script(
            "return getComputedStyle(document.querySelector(arguments[0]))[arguments[1]];",
            css,
            prop,
        )
    )


def texts(driver: Any, css: str) -> list[str]:
    return [
        str(t)
        for t in driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0]), e => e.textContent.trim());",
            css,
        )
    ]


def links(driver: Any) -> list[dict[str, str]]:
    """Every element a click could navigate with: anchors, areas, anything with href, forms' formaction."""
    script = """
    return Array.from(document.querySelectorAll('a, area, [href], [formaction], [onclick]'), e => ({
        tag: e.tagName.toLowerCase(), cls: e.className || '', href: e.getAttribute('href') || ''}));
    """
    return list(driver.execute_script(script))


def visible_buttons(driver: Any) -> list[str]:
    script = """
    return Array.from(document.querySelectorAll('button'))
        .filter(b => b.offsetParent !== null && !b.disabled)
        .map(b => b.value);
    """
    return [str(v) for v in driver.execute_script(script)]


def assert_emphasised(driver: Any) -> None:
    assert int(style(driver, ".eg-registrable-in-url", "fontWeight")) >= 700
    assert int(style(driver, ".eg-registrable", "fontWeight")) >= 700
    assert int(style(driver, ".eg-url-before", "fontWeight")) < 600
    highlight = style(driver, ".eg-registrable-in-url", "backgroundColor")
    assert highlight not in ("rgba(0, 0, 0, 0)", "transparent")
    assert highlight != style(driver, ".eg-url-before", "backgroundColor")


def test_url_view_in_chromium(driver: Any, pages: Path) -> None:
    """Server named, registrable domain emphasised, decline/cancel/retry present, no link."""
    view = describe_url(
        "https://login.accounts.example.co.uk/oauth?client_id=abc",
        server="crm-prod",
        message="Connect your account",
        key="eid:1",
    )
    load(driver, pages, "url-ascii", render_html(view))
    assert texts(driver, "[data-eg=server]") == ["crm-prod"]
    assert texts(driver, "[data-eg=registrable]") == ["example.co.uk"]
    assert texts(driver, ".eg-registrable-in-url") == ["example.co.uk"]
    assert (
        texts(driver, "[data-eg=url]")[0]
        == "https://login.accounts.example.co.uk/oauth?client_id=abc"
    )
    assert_emphasised(driver)
    assert visible_buttons(driver) == ["open", "decline", "cancel", "retry", "cancel-request"]
    assert links(driver) == []


def test_url_view_with_open_link_in_chromium(driver: Any, pages: Path) -> None:
    """In link mode the open button is the one and only link, and it opens a new context."""
    view = describe_url("https://accounts.example.com/authorize?x=1", server="crm")
    load(driver, pages, "url-open-link", render_html(view, open_link=True))
    found = links(driver)
    assert len(found) == 1
    assert found[0]["cls"] == "eg-open"
    assert found[0]["href"] == "https://accounts.example.com/authorize?x=1"
    assert (
        driver.execute_script("return document.querySelector('a.eg-open').rel;")
        == "noopener noreferrer"
    )
    assert {"decline", "cancel", "retry", "cancel-request"} <= set(visible_buttons(driver))


def test_idn_view_in_chromium(driver: Any, pages: Path) -> None:
    """A legitimate IDN is emphasised in Unicode and both forms are listed."""
    view = describe_url("https://例え.jp/ログイン", server="shop")
    load(driver, pages, "url-idn", render_html(view))
    assert texts(driver, "[data-eg=registrable]") == ["例え.jp"]
    assert_emphasised(driver)
    facts = " ".join(texts(driver, ".eg-facts dd"))
    assert "xn--r8jz45g.jp" in facts
    assert "例え.jp" in facts


def test_spoofed_view_in_chromium(driver: Any, pages: Path) -> None:
    """A blocked look-alike: punycode emphasised, danger shown, no way to open it."""
    view = describe_url(
        "https://аррӏе.com/signin", server="mcp.acme.example", message="Confirm your Apple ID"
    )
    load(driver, pages, "url-spoof", render_html(view, open_link=True))
    assert texts(driver, "[data-eg=registrable]") == ["xn--80ak6aa92e.com"]
    assert_emphasised(driver)
    assert driver.execute_script(
        "return document.querySelector('[data-eg=blocked]').offsetParent !== null;"
    )
    codes = texts(driver, ".eg-warning .eg-code")
    assert "EG404" in codes
    assert "EG403" in codes
    assert "open" not in visible_buttons(driver)
    assert {"decline", "cancel"} <= set(visible_buttons(driver))
    assert links(driver) == []


def test_hostile_server_strings_stay_text_in_chromium(driver: Any, pages: Path) -> None:
    """Markup in the server name and message is text: no element, no script, no dialog."""
    view = describe_url(
        "https://auth.example.com/x",
        server='<img src=x onerror="document.title=1">',
        message="<script>document.title='pwned'</script>\u202e",
    )
    load(driver, pages, "url-hostile", render_html(view))
    assert "pwned" not in driver.title
    assert driver.title != "1"
    assert driver.execute_script("return document.querySelectorAll('img, script').length;") == 0
    assert texts(driver, "[data-eg=server]")[0].startswith("<img")


def test_form_view_in_chromium(driver: Any, pages: Path) -> None:
    """Server named, defaults pre-filled, decline and cancel present, no link."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name", "default": "Alice"},
            "guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
            "veg": {"type": "boolean", "title": "Vegetarian", "default": True},
            "seat": {
                "type": "string",
                "enum": ["in", "out"],
                "enumNames": ["Inside", "Outside"],
                "default": "out",
            },
        },
        "required": ["name"],
    }
    view = describe_form(
        {"message": "Book a table at https://bistro.example", "requestedSchema": schema},
        server="bistro",
    )
    load(driver, pages, "form", render_html(view))
    assert texts(driver, "[data-eg=server]") == ["bistro"]
    def value(name):
        return driver.execute_script(
            "return document.querySelector(`[name='${arguments[0]}']`).value;", name
        )
    assert value("name") == "Alice"
    assert value("guests") == "2"
    assert value("seat") == "out"
    assert driver.execute_script("return document.querySelector(\"[name='veg']\").checked;")
    assert visible_buttons(driver) == ["accept", "decline", "cancel"]
    assert links(driver) == []
    # Decline and cancel work even when a required field is empty (EL-04).
    driver.execute_script("document.querySelector(\"[name='name']\").value = '';")
    assert not driver.execute_script("return document.querySelector('form').checkValidity();")
    assert driver.execute_script(
        "return document.querySelector('button[value=decline]').formNoValidate && document.querySelector('button[value=cancel]').formNoValidate;"
    )
