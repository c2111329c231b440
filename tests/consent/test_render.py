"""render_text and render_html: every string from a server is escaped or made visible, the
domain is emphasised, decline and cancel always exist, and the page holds no link.

The same pages are loaded in a real headless Chromium in tests/consent/test_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

from elicitguard.consent import describe_form, describe_url, render_html, render_text

HOSTILE_SERVER = 'evil<script>alert(1)</script>"\x1b[31m'
HOSTILE_MESSAGE = (
    "Visit https://other.example now\x1b]0;pwned\x07 <img src=x onerror=alert(1)>\u202e"
)


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(page)
    return parser.tags


def test_html_escapes_everything_from_the_server() -> None:
    """No tag, event handler, escape sequence or bidi control from the server survives."""
    view = describe_url(
        'https://auth.example.com/cb?a=<b>&c="d"', server=HOSTILE_SERVER, message=HOSTILE_MESSAGE
    )
    page = render_html(view)
    tags = [t for t, _ in elements(page)]
    assert "script" not in tags
    assert "img" not in tags
    assert "onerror" not in page.replace("onerror=alert(1)&gt;", "")
    assert "\x1b" not in page
    assert "\x07" not in page
    assert "\u202e" not in page
    assert "[U+001B]" in page
    assert "[U+202E]" in page
    assert "&lt;script&gt;" in page


def test_html_has_no_link_and_no_script() -> None:
    """By default the page has no anchor, no href, no script and no inline handler."""
    page = render_html(
        describe_url(
            "https://accounts.example.com/login", server="crm", message="see https://x.example"
        )
    )
    for tag, attrs in elements(page):
        assert tag not in ("a", "script", "iframe", "object", "embed", "link")
        assert "href" not in attrs
        assert "src" not in attrs
        assert not any(name.startswith("on") for name in attrs)


def test_open_link_mode_has_exactly_one_anchor() -> None:
    """With open_link the open button is the only anchor, with noopener and noreferrer."""
    page = render_html(describe_url("https://accounts.example.com/login?x=1&y=2"), open_link=True)
    anchors = [attrs for tag, attrs in elements(page) if tag == "a"]
    assert len(anchors) == 1
    assert anchors[0]["class"] == "eg-open"
    assert anchors[0]["href"] == "https://accounts.example.com/login?x=1&y=2"
    assert anchors[0]["rel"] == "noopener noreferrer"


def test_blocked_view_has_no_open_control_even_as_a_link() -> None:
    """A blocked URL cannot be opened from the page."""
    for open_link in (False, True):
        page = render_html(describe_url("https://аррӏе.com/"), open_link=open_link)
        assert 'value="open"' not in page
        assert "<a " not in page
        assert 'data-eg="blocked"' in page


def test_html_controls_for_url_views() -> None:
    """Open, decline and cancel, then retry and cancel-the-request for after the browser (EL-15)."""
    view = describe_url("https://accounts.example.com/", server="crm", key="eid:42")
    actions = lambda page: [a.get("value") for t, a in elements(page) if t == "button"]  # noqa: E731
    assert actions(render_html(view)) == ["open", "decline", "cancel", "retry", "cancel-request"]
    assert actions(render_html(view, stage="consent")) == ["open", "decline", "cancel"]
    assert actions(render_html(view, stage="returned")) == ["retry", "cancel-request"]
    assert 'name="eg-key" value="eid:42"' in render_html(view)
    assert 'action="/consent"' in render_html(view, action="/consent")


def test_html_emphasises_the_registrable_domain() -> None:
    """The registrable domain is in its own element, in the URL and on its own line."""
    page = render_html(describe_url("https://login.accounts.example.co.uk/x"))
    assert '<strong class="eg-registrable" data-eg="registrable">example.co.uk</strong>' in page
    assert (
        '<span class="eg-url-before">https://login.accounts.</span><strong class="eg-registrable-in-url">example.co.uk</strong>'
        in page
    )


def test_csp_allows_exactly_the_page_style() -> None:
    """The Content-Security-Policy pins the inline style by hash and allows nothing else."""
    page = render_html(describe_url("https://accounts.example.com/"))
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert style is not None
    digest = base64.b64encode(hashlib.sha256(style.group(1).encode()).digest()).decode()
    csp = next(
        a["content"]
        for t, a in elements(page)
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert csp is not None
    assert f"'sha256-{digest}'" in csp
    assert "default-src 'none'" in csp


def test_form_html_prefills_defaults_and_offers_decline_and_cancel() -> None:
    """Defaults are pre-filled (EL-14); decline and cancel skip validation (EL-04)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "Ali <b>"},
            "n": {"type": "integer", "default": 3, "minimum": 1},
            "ok": {"type": "boolean", "default": True},
            "seat": {"type": "string", "enum": ["in", "out"], "default": "out"},
            "extras": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "default": ["a", "c"]},
        },
        "required": ["name"],
    }
    page = render_html(describe_form({"message": "Hi", "requestedSchema": schema}, server="s"))
    tags = elements(page)
    inputs = {a.get("name"): a for t, a in tags if t == "input"}
    assert inputs["name"]["value"] == "Ali <b>"
    assert "required" in inputs["name"]
    assert inputs["n"]["value"] == "3"
    assert inputs["n"]["min"] == "1"
    assert "checked" in inputs["ok"]
    selected = [a.get("value") for t, a in tags if t == "option" and "selected" in a]
    assert selected == ["out", "a", "c"]
    buttons = {a.get("value"): a for t, a in tags if t == "button"}
    assert list(buttons) == ["accept", "decline", "cancel"]
    assert "formnovalidate" in buttons["decline"]
    assert "formnovalidate" in buttons["cancel"]


def test_blocked_form_cannot_be_sent() -> None:
    """A form the policy blocks offers only decline and cancel, and says why."""
    request = {
        "message": "Paste your GitHub token",
        "requestedSchema": {
            "type": "object",
            "properties": {"token": {"type": "string", "title": "Personal access token"}},
        },
    }
    view = describe_form(request, server="gh")
    assert view.blocked  # EG201 and EG206 block a form asking for a token
    page = render_html(view)
    buttons = [a.get("value") for t, a in elements(page) if t == "button"]
    assert buttons == ["decline", "cancel"]
    flagged = [a for t, a in elements(page) if t == "div" and a.get("data-field") == "token"]
    assert "eg-field-flagged" in (flagged[0].get("class") or "")


def test_text_rendering_is_safe_for_terminals() -> None:
    """No escape sequence or bidi control reaches the terminal; markup is not interpreted."""
    view = describe_url(
        "https://auth.example.com/[bold]x[/bold]", server=HOSTILE_SERVER, message=HOSTILE_MESSAGE
    )
    text = render_text(view)
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "\x07" not in text
    assert "[U+001B]" in text
    assert "[bold]x[/bold]" in text


def test_text_rendering_names_server_site_and_choices() -> None:
    """The text view names the server and the site and lists the choices."""
    text = render_text(
        describe_url("https://login.example.co.uk/a", server="crm", message="Connect")
    )
    assert "The server crm asks you to open a web page" in text
    assert re.search(r"Site:\s+example\.co\.uk", text)
    assert "[o] open in browser" in text
    assert "[d] decline" in text
    assert "[c] cancel" in text
    assert "[r] retry" in text
    spoof = render_text(describe_url("https://аррӏе.com/"))
    assert "[o] open" not in spoof
    assert "Disguised as:" in spoof
    assert "EG404" in spoof


def test_text_colour_emphasises_the_domain() -> None:
    """With colour the registrable domain is bold and reversed (ANSI 1 and 7)."""
    text = render_text(describe_url("https://login.example.com/a"), color=True)
    assert re.search(r"\x1b\[[0-9;]*1;7m(?:\x1b\[[0-9;]*m)*example\.com", text) or re.search(
        r"\x1b\[[0-9;]*7;1m(?:\x1b\[[0-9;]*m)*example\.com", text
    )


def test_form_text_shows_prefilled_defaults() -> None:
    """Terminal forms show each field with its default."""
    text = render_text(
        describe_form(
            {
                "message": "m",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "title": "City", "default": "Zürich"}
                    },
                },
            }
        )
    )
    assert "City (city, string) [pre-filled: Zürich]" in text
    assert "[s] send" in text
    assert "[d] decline" in text
    assert "[c] cancel" in text
