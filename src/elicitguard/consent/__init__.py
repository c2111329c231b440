"""Consent helpers for client UIs: what to show before a user opens a URL or answers a form.

The spec asks clients to name the server that asks (EL-03, EL-21), to show the full URL and
its domain and warn on suspicious hosts before consent (EL-06, URL-07, URL-09), to open the
page outside the client (URL-08, SB-01), to pre-fill defaults (EL-14), to offer decline and
cancel (EL-04, EL-22), and retry and cancel after the browser step (EL-15). This package gives
client developers those pieces:

* :func:`describe_url` -> :class:`UrlView` and :func:`describe_form` -> :class:`FormView`:
  the facts and every EG2xx/EG3xx/EG4xx finding in plain words, decided by the policy's rules;
* :func:`render_text` (terminals, rich) and :func:`render_html` (a self-contained page);
* :func:`open_url`: the system browser, ``https`` only (``http`` to loopback in dev);
* :class:`ConsentGate`: lets an ``accept`` for a URL elicitation through only after a view
  was shown and the user said yes.

Nothing here fetches a URL: hosts are parsed and compared with bundled data, never resolved.
"""

from __future__ import annotations

from elicitguard.consent.describe import describe_form, describe_url
from elicitguard.consent.gate import Choice, ConsentGate, ConsentRecord, Presenter
from elicitguard.consent.html import render_html
from elicitguard.consent.opener import UnsafeUrlError, check_openable, open_url
from elicitguard.consent.text import render_text
from elicitguard.consent.views import FormField, FormView, UrlView, ViewWarning

__all__ = [
    "Choice",
    "ConsentGate",
    "ConsentRecord",
    "FormField",
    "FormView",
    "Presenter",
    "UnsafeUrlError",
    "UrlView",
    "ViewWarning",
    "check_openable",
    "describe_form",
    "describe_url",
    "open_url",
    "render_html",
    "render_text",
]
