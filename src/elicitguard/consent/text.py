"""``render_text``: the consent view for terminals, through rich.

Why rich and why care: terminal clients and ``elicitguard check-url`` show the same facts as
the HTML page. Text from a server never reaches the terminal raw: escape sequences and bidi
controls are shown as ``[U+XXXX]``, rich markup in it is not interpreted, and without colour
the registrable domain still stands out on its own "Site" line.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from elicitguard.consent.views import FormField, FormView, UrlView, ViewWarning
from elicitguard.consent.words import NOT_OPENABLE, visible

__all__ = ["render_text"]

_MARK = {"danger": "✖", "warning": "!", "notice": "·"}
_STYLE = {"danger": "bold red", "warning": "yellow", "notice": "cyan"}


def _line(label: str, value: str, style: str = "") -> Text:
    text = Text(f"  {label:<17}")
    text.append(visible(value), style=style)
    return text


def _warnings(warnings: tuple[ViewWarning, ...]) -> list[Text]:
    if not warnings:
        return [Text("No warnings.", style="green")]
    out = [Text("Warnings:", style="bold")]
    for w in warnings:
        text = Text(f"  {_MARK[w.level]} ")
        text.append(f"{w.code} {visible(w.title)}", style=_STYLE[w.level])
        text.append(f": {visible(w.text)}")
        out.append(text)
    return out


def _asking(server: str | None, what: str) -> Text:
    text = Text("The server ")
    text.append(visible(server) if server else "(unnamed)", style="bold")
    text.append(f" {what}")
    return text


def _url_lines(view: UrlView) -> list[Text]:
    lines = [_asking(view.server, "asks you to open a web page")]
    if view.message:
        lines.append(_line("Message:", view.message.replace("\n", " ")))
    before, highlight, after = view.display_parts
    if highlight:
        lines.append(_line("Site:", highlight, "bold reverse"))
    else:
        lines.append(_line("Site:", "(cannot tell: the address is malformed)", "bold"))
    address = Text("  Address:         ")
    address.append(before)
    address.append(highlight, style="bold reverse")
    address.append(after)
    lines.append(address)
    lines.append(_line("Scheme:", view.scheme or "(none)"))
    if view.ascii_host is not None:
        lines.append(_line("Host (ASCII):", view.ascii_host))
    if view.unicode_host is not None and view.unicode_host != view.ascii_host:
        label = "Disguised as:" if view.disguised else "Host (Unicode):"
        lines.append(_line(label, view.unicode_host))
    if view.reads_as:
        lines.append(_line("Reads like:", view.reads_as))
    lines.extend(_warnings(view.warnings))
    if view.blocked:
        lines.append(Text("elicitguard blocked this address: it cannot be opened.", "bold red"))
    elif not view.can_open:
        lines.append(Text(NOT_OPENABLE, "bold"))
    choices = ["[o] open in browser"] if view.can_open else []
    choices += ["[d] decline", "[c] cancel"]
    lines.append(Text("Choices: " + "   ".join(choices), style="bold"))
    if view.can_open:
        lines.append(Text("After you return: [r] retry the request   [x] cancel the request"))
    return lines


def _field_line(field: FormField) -> Text:
    text = Text("  ")
    text.append(visible(field.title), style="bold")
    text.append(f" ({visible(field.name)}, {field.type}")
    text.append(", required)" if field.required else ")")
    if field.options:
        labels = ", ".join(visible(label) for _, label in field.options[:12])
        text.append(f" options: {labels}")
    if field.default is not None:
        text.append(f" [pre-filled: {visible(str(field.default))}]")
    if field.warnings:
        text.append(f"  ← {', '.join(field.warnings)}", style="bold red")
    return text


def _form_lines(view: FormView) -> list[Text]:
    lines = [_asking(view.server, "asks you for information")]
    if view.message:
        lines.append(_line("Message:", view.message.replace("\n", " ")))
    lines.append(Text("Fields:", style="bold"))
    lines.extend(_field_line(f) for f in view.fields)
    lines.extend(_warnings(view.warnings))
    if view.blocked:
        lines.append(Text("elicitguard blocked this request: decline or cancel it.", "bold red"))
    choices = ["[s] send"] if view.can_accept else []
    choices += ["[d] decline", "[c] cancel"]
    lines.append(Text("Choices: " + "   ".join(choices), style="bold"))
    return lines


def render_text(
    view: UrlView | FormView,
    *,
    color: bool = False,
    width: int = 100,
    console: Console | None = None,
) -> str:
    """The view as terminal text; printed to ``console`` when one is given.

    Returns the rendered text (with ANSI colour codes when ``color`` is true).
    """
    lines = _url_lines(view) if isinstance(view, UrlView) else _form_lines(view)
    if console is not None:
        for line in lines:
            console.print(line, highlight=False, markup=False, emoji=False)
    buffer = io.StringIO()
    sink = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        color_system="standard" if color else None,
        no_color=not color,
        highlight=False,
        emoji=False,
        soft_wrap=True,
    )
    for line in lines:
        sink.print(line, markup=False)
    return buffer.getvalue()
