"""``render_html``: a self-contained consent page for a URL view or a form view.

Why these constraints (EL-03, EL-04, EL-06, EL-15, URL-07, URL-09, URL-10):

* every string from the server is HTML-escaped and shown with invisible and bidi characters
  made visible; the server's message is plain text, never turned into links;
* the page holds no link at all: the open button is a submit button whose value the host
  handles (and opens with :func:`elicitguard.consent.open_url`, in the system browser).
  With ``open_link=True`` the open button is the one anchor on the page, with
  ``rel="noopener noreferrer"``; there is never another;
* the registrable domain is emphasised (bold, highlighted) in the full URL and repeated on
  its own line, the server that asks is named at the top, and decline and cancel are
  buttons of the same size as the accept button;
* for URL mode, explicit retry and cancel controls for after the user returns from the
  browser (EL-15);
* no script, and a Content-Security-Policy that allows only the page's own style (by hash),
  so the page can neither load nor send anything by itself.

Controls are ``<button type="submit" name="eg-action" value="open|decline|cancel|retry|
cancel-request|accept">`` inside ``<form method="post">``; ``action`` sets where the form
posts (the host's own handler), and ``data-eg-action`` carries the same value for hosts that
wire clicks themselves.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from typing import Literal

from elicitguard.consent.views import FormField, FormView, UrlView, ViewWarning
from elicitguard.consent.words import NOT_OPENABLE, visible

__all__ = ["render_html"]

Stage = Literal["consent", "returned", "both"]

_STYLE = """
:root { color-scheme: light; }
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
  background: #f4f5f7; color: #1d1f23; }
main { max-width: 44rem; margin: 2rem auto; background: #fff; border-radius: 10px;
  padding: 1.5rem 1.75rem; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
h1 { font-size: 1.25rem; margin: 0 0 .75rem; font-weight: 600; }
h2 { font-size: 1rem; margin: 1.25rem 0 .5rem; font-weight: 600; }
.eg-server-name { font-weight: 700; }
.eg-message { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f9;
  border-left: 3px solid #c7cbd3; padding: .5rem .75rem; margin: .75rem 0; }
.eg-site { font-size: 1.5rem; margin: .25rem 0 .75rem; }
.eg-url { font: 15px/1.5 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  overflow-wrap: anywhere; word-break: break-all; background: #f7f7f9; padding: .5rem .75rem;
  border-radius: 6px; margin: 0; }
.eg-url-before, .eg-url-after { color: #5f6570; font-weight: 400; }
.eg-registrable, .eg-registrable-in-url { font-weight: 700; color: #000;
  background-color: #ffe98a; padding: 0 .15em; border-radius: 3px; }
.eg-facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem;
  margin: .75rem 0; font-size: .9rem; }
.eg-facts dt { color: #5f6570; }
.eg-facts dd { margin: 0; overflow-wrap: anywhere; }
.eg-warnings ul { list-style: none; padding: 0; margin: 0; }
.eg-warning { border-radius: 6px; padding: .5rem .75rem; margin: .4rem 0; }
.eg-danger { background: #fde2e1; border-left: 4px solid #c62828; }
.eg-warning-level { background: #fff4d6; border-left: 4px solid #b26a00; }
.eg-notice { background: #eef3fb; border-left: 4px solid #4a6fa5; }
.eg-code { color: #5f6570; font-size: .8rem; margin-left: .5rem; }
.eg-blocked { background: #c62828; color: #fff; padding: .6rem .75rem; border-radius: 6px; }
.eg-controls { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1.25rem; }
.eg-controls button, .eg-controls a { font: inherit; font-size: 1rem; min-width: 9rem;
  padding: .55rem 1rem; border-radius: 6px; border: 1px solid #9aa0aa; background: #fff;
  color: #1d1f23; cursor: pointer; text-align: center; text-decoration: none; }
.eg-controls .eg-open, .eg-controls .eg-accept { background: #1f5fbf; color: #fff;
  border-color: #1f5fbf; }
.eg-after { border-top: 1px solid #dde0e5; margin-top: 1.5rem; }
.eg-field { margin: .9rem 0; }
.eg-field label { display: block; font-weight: 600; }
.eg-field .eg-description { color: #5f6570; font-size: .9rem; margin: .1rem 0 .3rem; }
.eg-field input[type=text], .eg-field input[type=number], .eg-field input[type=email],
.eg-field input[type=url], .eg-field input[type=date], .eg-field input[type=datetime-local],
.eg-field select { font: inherit; width: 100%; box-sizing: border-box; padding: .4rem; }
.eg-field-flagged { border-left: 4px solid #c62828; padding-left: .6rem; }
.eg-required { color: #c62828; }
"""
_STYLE_HASH = base64.b64encode(hashlib.sha256(_STYLE.encode("utf-8")).digest()).decode("ascii")
_CSP = (
    f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; img-src 'none'; "
    "base-uri 'none'; object-src 'none'"
)
_LEVEL_CLASS = {"danger": "eg-danger", "warning": "eg-warning-level", "notice": "eg-notice"}
_LEVEL_WORD = {"danger": "Danger", "warning": "Warning", "notice": "Note"}


def _e(text: str | None) -> str:
    """Escape text from traffic, with hidden characters made visible first."""
    return html.escape(visible(text or ""), quote=True)


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html>\n"
        '<html lang="en" dir="ltr">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(_CSP)}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _server_line(server: str | None, what: str) -> str:
    if server:
        name = f'<strong class="eg-server-name" data-eg="server">{_e(server)}</strong>'
        return f'<h1 class="eg-server">The server {name} {what}</h1>'
    return (
        '<h1 class="eg-server"><strong class="eg-server-name" data-eg="server">'
        f"An unnamed server</strong> {what}</h1>"
    )


def _message(message: str | None) -> str:
    if not message:
        return ""
    text = html.escape(visible(message, newlines=True), quote=True)
    return f'<p class="eg-message" dir="auto" data-eg="message">{text}</p>'


def _warnings(warnings: tuple[ViewWarning, ...]) -> str:
    if not warnings:
        return ""
    items = []
    for w in warnings:
        items.append(
            f'<li class="eg-warning {_LEVEL_CLASS[w.level]}" data-code="{_e(w.code)}" '
            f'data-level="{w.level}"><strong>{_LEVEL_WORD[w.level]}: {_e(w.title)}</strong>. '
            f'<span class="eg-warning-text">{_e(w.text)}</span>'
            f'<span class="eg-code">{_e(w.code)}</span></li>'
        )
    return (
        '<section class="eg-warnings" aria-label="Warnings"><h2>Warnings</h2>'
        f"<ul>{''.join(items)}</ul></section>"
    )


def _button(value: str, label: str, css: str, *, novalidate: bool = False) -> str:
    extra = " formnovalidate" if novalidate else ""
    return (
        f'<button type="submit" name="eg-action" value="{value}" data-eg-action="{value}" '
        f'class="{css}"{extra}>{html.escape(label)}</button>'
    )


def _form_open(action: str | None, key: str | None, css: str = "eg-controls") -> str:
    target = f' action="{html.escape(action, quote=True)}"' if action else ""
    hidden = f'<input type="hidden" name="eg-key" value="{_e(key)}">' if key is not None else ""
    return f'<form method="post"{target} class="{css}">{hidden}'


def _open_control(view: UrlView, open_link: bool) -> str:
    if not view.can_open:
        return ""
    if open_link:
        return (
            f'<a class="eg-open" data-eg-action="open" role="button" href="{html.escape(view.url, quote=True)}" '
            'rel="noopener noreferrer" target="_blank" referrerpolicy="no-referrer">'
            "Open in browser</a>"
        )
    return _button("open", "Open in browser", "eg-open")


def _url_body(view: UrlView, stage: Stage, open_link: bool, action: str | None) -> str:
    parts: list[str] = ['<main class="eg-consent eg-url-view" data-eg-view="url">']
    parts.append(_server_line(view.server, "asks you to open a web page"))
    parts.append(_message(view.message))
    if view.blocked:
        parts.append(
            '<p class="eg-blocked" role="alert" data-eg="blocked">elicitguard blocked this '
            "address: it cannot be opened from here.</p>"
        )
    elif not view.can_open:
        parts.append(f'<p class="eg-not-openable" data-eg="not-openable">{NOT_OPENABLE}</p>')
    before, highlight, after = view.display_parts
    if highlight:
        parts.append('<p class="eg-site-label">You would go to</p>')
        parts.append(
            f'<p class="eg-site"><strong class="eg-registrable" data-eg="registrable">'
            f"{_e(highlight)}</strong></p>"
        )
    else:
        parts.append('<p class="eg-site-label">elicitguard cannot tell which site this is.</p>')
    parts.append(
        '<p class="eg-url" dir="ltr" data-eg="url"><code>'
        f'<span class="eg-url-before">{_e(before)}</span>'
        + (f'<strong class="eg-registrable-in-url">{_e(highlight)}</strong>' if highlight else "")
        + f'<span class="eg-url-after">{_e(after)}</span></code></p>'
    )
    facts = [("Scheme", view.scheme or "(none)")]
    if view.ascii_host is not None:
        facts.append(("Host (ASCII)", view.ascii_host))
    if view.unicode_host is not None and view.unicode_host != view.ascii_host:
        label = "Disguised as (Unicode)" if view.disguised else "Host (Unicode)"
        facts.append((label, view.unicode_host))
    if view.reads_as:
        facts.append(("Reads like", view.reads_as))
    parts.append(
        '<dl class="eg-facts">'
        + "".join(f'<dt>{_e(k)}</dt><dd dir="ltr">{_e(v)}</dd>' for k, v in facts)
        + "</dl>"
    )
    parts.append(_warnings(view.warnings))
    if stage in ("consent", "both"):
        parts.append(
            _form_open(action, view.key)
            + _open_control(view, open_link)
            + _button("decline", "Decline", "eg-decline")
            + _button("cancel", "Cancel", "eg-cancel")
            + "</form>"
        )
    if stage == "returned" or (stage == "both" and view.can_open):
        parts.append(
            '<section class="eg-after" aria-label="After the browser">'
            "<h2>After you come back from the browser</h2>"
            "<p>When you have finished on the page, retry the original request. If you did "
            "not finish, or changed your mind, cancel it.</p>"
            + _form_open(action, view.key)
            + _button("retry", "Retry the request", "eg-retry")
            + _button("cancel-request", "Cancel the request", "eg-cancel-request")
            + "</form></section>"
        )
    parts.append("</main>")
    return "\n".join(p for p in parts if p)


def _input(field: FormField) -> str:
    name = _e(field.name)
    ident = "eg-f-" + hashlib.sha256(field.name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    required = " required" if field.required else ""
    default = field.default
    if field.type == "boolean":
        checked = " checked" if default is True else ""
        control = f'<input type="checkbox" id="{ident}" name="{name}" value="true"{checked}>'
    elif field.type in ("enum", "multi_enum"):
        chosen = (
            {str(v) for v in default}
            if isinstance(default, list)
            else ({str(default)} if default is not None else set())
        )
        multiple = " multiple" if field.type == "multi_enum" else ""
        options = "".join(
            f'<option value="{_e(v)}"{" selected" if v in chosen else ""}>{_e(label)}</option>'
            for v, label in field.options
        )
        if field.type == "enum" and not chosen:
            options = '<option value="">(choose)</option>' + options
        control = f'<select id="{ident}" name="{name}"{multiple}{required}>{options}</select>'
    else:
        kind = "text"
        attrs = ""
        if field.type in ("number", "integer"):
            kind = "number"
            attrs += ' step="1"' if field.type == "integer" else ' step="any"'
            if field.minimum is not None:
                attrs += f' min="{field.minimum:g}"'
            if field.maximum is not None:
                attrs += f' max="{field.maximum:g}"'
        else:
            kind = {"email": "email", "date": "date", "date-time": "datetime-local"}.get(
                field.format or "", "text"
            )
            if field.min_length is not None:
                attrs += f' minlength="{field.min_length}"'
            if field.max_length is not None:
                attrs += f' maxlength="{field.max_length}"'
        value = (
            f' value="{_e(json.dumps(default) if not isinstance(default, str) else default)}"'
            if default is not None
            else ""
        )
        control = (
            f'<input type="{kind}" id="{ident}" name="{name}"{value}{attrs}{required} '
            'autocomplete="off">'
        )
    star = ' <span class="eg-required" aria-label="required">*</span>' if field.required else ""
    flagged = " eg-field-flagged" if field.warnings else ""
    codes = f' data-warnings="{_e(" ".join(field.warnings))}"' if field.warnings else ""
    description = (
        f'<p class="eg-description">{_e(field.description)}</p>' if field.description else ""
    )
    return (
        f'<div class="eg-field{flagged}" data-field="{name}"{codes}>'
        f'<label for="{ident}">{_e(field.title)}{star}</label>{description}{control}</div>'
    )


def _form_body(view: FormView, action: str | None) -> str:
    parts: list[str] = ['<main class="eg-consent eg-form-view" data-eg-view="form">']
    parts.append(_server_line(view.server, "asks you for information"))
    parts.append(_message(view.message))
    if view.blocked:
        parts.append(
            '<p class="eg-blocked" role="alert" data-eg="blocked">elicitguard blocked this '
            "request: you can decline or cancel it.</p>"
        )
    parts.append(_warnings(view.warnings))
    fields = "".join(_input(f) for f in view.fields)
    accept = _button("accept", "Send", "eg-accept") if view.can_accept else ""
    parts.append(
        _form_open(action, view.key, "eg-answers")
        + f'<fieldset class="eg-fields"><legend>Review and change the answers before sending</legend>{fields}</fieldset>'
        + '<div class="eg-controls">'
        + accept
        + _button("decline", "Decline", "eg-decline", novalidate=True)
        + _button("cancel", "Cancel", "eg-cancel", novalidate=True)
        + "</div></form>"
    )
    parts.append("</main>")
    return "\n".join(p for p in parts if p)


def render_html(
    view: UrlView | FormView,
    *,
    stage: Stage = "both",
    open_link: bool = False,
    action: str | None = None,
) -> str:
    """A complete HTML document for ``view``.

    ``stage`` (URL views): ``consent`` shows open, decline and cancel; ``returned`` shows
    retry and cancel-the-request for after the user comes back from the browser (EL-15);
    ``both`` (the default) shows both sections (the second only when the URL can be opened). ``open_link`` renders the open button as the
    page's only anchor instead of a submit button. ``action`` is where the forms post.
    """
    if isinstance(view, UrlView):
        title = "Open a web page? (elicitguard)"
        return _page(title, _url_body(view, stage, open_link, action))
    return _page("Answer a request? (elicitguard)", _form_body(view, action))
