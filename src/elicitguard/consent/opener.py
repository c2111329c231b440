"""``open_url``: open a consented URL in the system browser, and nothing else.

Why so strict (URL-06, URL-08, SB-01): the page behind a URL-mode request is where the user
types a secret, so it must open in the user's own browser, where neither the client nor the
model can see it: never in an embedded web view, and never through a shell, where a crafted
URL becomes a command. :mod:`webbrowser` starts the browser with an argument list (no shell);
this function adds the checks: only ``https`` (or ``http`` to a loopback host in the dev
environment), only a URL the policy did not block, with no hidden characters, and only a
view that is really about this URL.
"""

from __future__ import annotations

import webbrowser

from elicitguard.checks.domains import find_invisible_or_deceptive_chars
from elicitguard.checks.urls import is_loopback_host, parse_url
from elicitguard.consent.views import UrlView
from elicitguard.errors import ElicitguardError

__all__ = ["UnsafeUrlError", "check_openable", "open_url"]


class UnsafeUrlError(ElicitguardError):
    """The URL may not be opened; the message says why (never the URL's query values)."""


def check_openable(view: UrlView) -> str:
    """The URL to open, or raise :class:`UnsafeUrlError`."""
    url = view.url
    if view.blocked:
        msg = "the policy blocks this URL"
        raise UnsafeUrlError(msg)
    if not view.can_open:
        msg = "only https URLs (or http to a loopback host in the dev environment) are opened"
        raise UnsafeUrlError(msg)
    parsed = parse_url(url)
    if not parsed.valid:
        msg = "the URL is malformed: " + ", ".join(parsed.problems)
        raise UnsafeUrlError(msg)
    if url != url.strip() or url.startswith("-"):
        msg = "the URL has leading or trailing characters"
        raise UnsafeUrlError(msg)
    hidden = [
        c
        for c in find_invisible_or_deceptive_chars(url)
        if c.category in ("bidi_control", "invisible", "control", "whitespace")
    ]
    if hidden:
        msg = f"the URL contains hidden characters ({hidden[0].codepoint})"
        raise UnsafeUrlError(msg)
    if parsed.scheme == "https":
        return url
    if parsed.scheme == "http" and view.environment == "dev" and is_loopback_host(parsed.host):
        return url
    msg = f"the scheme {parsed.scheme!r} is never opened"
    raise UnsafeUrlError(msg)


def open_url(view: UrlView, *, browser: webbrowser.BaseBrowser | None = None) -> bool:
    """Open the view's URL in the system browser after the user said yes.

    ``browser`` is a :mod:`webbrowser` controller (default: the system's, honouring
    ``BROWSER``). Returns what the controller returns (``True`` when a browser was started).
    Raises :class:`UnsafeUrlError` for anything but ``https`` (or dev loopback ``http``), a
    blocked view, a malformed URL or one with hidden characters. Consent itself is the
    caller's job: use :class:`~elicitguard.consent.ConsentGate` to record it.
    """
    url = check_openable(view)
    controller = browser if browser is not None else webbrowser.get()
    return bool(controller.open(url, new=2, autoraise=True))
