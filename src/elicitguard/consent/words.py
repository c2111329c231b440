"""Findings in plain words for the person deciding (not for the operator's log).

Why separate from the rule messages: a rule message is written for an operator reading a
report ("EG404 ... looks like the protected domain"); a consent screen speaks to someone
about to type a password. These sentences name the real site, the site it imitates and what
to do, and they may name the host, because the person is looking at that host anyway. Codes
without a sentence here fall back to the rule's own message.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from elicitguard.base.decision import Action, Finding
from elicitguard.checks.domains import HostAnalysis, find_invisible_or_deceptive_chars, script_of
from elicitguard.checks.urls import ParsedUrl
from elicitguard.consent.views import Level, ViewWarning

__all__ = [
    "HIDDEN_FROM_USERS",
    "NOT_OPENABLE",
    "SPOOF_KINDS",
    "level_of",
    "visible",
    "warnings_for",
]

#: Host issues after which the host is shown in ASCII (punycode), as Chromium does.
SPOOF_KINDS = frozenset({"mixed_script", "whole_script_confusable", "lookalike", "invalid_idn"})

NOT_OPENABLE = (
    "This address cannot be opened from here: only well-formed https addresses are opened "
    "(and http to this computer while developing)."
)

#: Findings about the server's own hygiene that mean nothing to the person deciding.
HIDDEN_FROM_USERS = frozenset({"EG306"})

_SCRIPT_NAMES = {
    "Latn": "Latin",
    "Cyrl": "Cyrillic",
    "Grek": "Greek",
    "Armn": "Armenian",
    "Geor": "Georgian",
    "Hebr": "Hebrew",
    "Arab": "Arabic",
    "Thai": "Thai",
    "Hani": "Chinese",
    "Hira": "Japanese",
    "Kana": "Japanese",
    "Hang": "Korean",
    "Deva": "Devanagari",
    "Beng": "Bengali",
    "Taml": "Tamil",
    "Ethi": "Ethiopic",
    "Mymr": "Myanmar",
    "Cher": "Cherokee",
    "Lisu": "Lisu",
}

_TITLES = {
    "EG301": "Not a secure link",
    "EG302": "Broken link",
    "EG303": "The link carries a password or key",
    "EG304": "The link carries personal information",
    "EG305": "A pre-signed or one-time link",
    "EG307": "A link into your own network",
    "EG308": "A link that redirects elsewhere",
    "EG107": "Broken link",
    "EG202": "A link inside the message",
    "EG901": "Not fully checked",
}

#: Plain words for form findings; the flagged field is marked in the field list.
_FORM_TEXTS = {
    "EG201": (
        "Asks for a secret",
        "This form asks for a password, key, token or payment detail. Answers to a form pass "
        "through the app and may be seen by the AI model: do not type secrets here.",
    ),
    "EG203": (
        "Asks for sensitive personal data",
        "This form asks for sensitive personal information. Only answer if you trust this "
        "server with it.",
    ),
    "EG205": (
        "A secret is pre-filled",
        "A field already holds what looks like a password, key or token. Do not send it.",
    ),
    "EG206": (
        "The message asks for a secret",
        "The message asks you to type a password, key or token into a form. Answers to a "
        "form pass through the app and may be seen by the AI model: do not type secrets "
        "here.",
    ),
}

_VISIBLE_CATEGORIES = frozenset({"bidi_control", "invisible", "control", "whitespace"})


def visible(text: str, *, lookalikes: bool = False, newlines: bool = False) -> str:
    """``text`` with invisible, bidi and control characters shown as ``[U+XXXX]``.

    With ``lookalikes`` slash, dot and delimiter look-alikes are shown that way too (used for
    host names, where they are never legitimate); with ``newlines`` a line feed stays a line
    feed (messages). Terminal escape sequences and bidi overrides from a server must never
    reach the screen as themselves.
    """
    issues = find_invisible_or_deceptive_chars(text)
    if not issues:
        return text
    marked = {
        i.index: i.codepoint
        for i in issues
        if (lookalikes or i.category in _VISIBLE_CATEGORIES)
        and not (newlines and text[i.index] == "\n")
    }
    if not marked:
        return text
    return "".join(f"[{marked[n]}]" if n in marked else ch for n, ch in enumerate(text))


def level_of(finding: Finding) -> Level:
    """``danger`` for a block, ``warning`` for warn or redact, ``notice`` for log."""
    if finding.action is Action.BLOCK:
        return "danger"
    if finding.action in (Action.WARN, Action.REDACT):
        return "warning"
    return "notice"


def _scripts(label: str) -> str:
    names: list[str] = []
    for ch in label:
        code = script_of(ch)
        if code in ("Zyyy", "Zinh", "Zzzz"):
            continue
        name = _SCRIPT_NAMES.get(code, code)
        if name not in names:
            names.append(name)
    return " and ".join(names) if len(names) <= 2 else ", ".join(names)


def _first_script(label: str) -> str:
    for ch in label:
        code = script_of(ch)
        if code not in ("Zyyy", "Zinh", "Zzzz"):
            return _SCRIPT_NAMES.get(code, code)
    return "other"


def _site(host: HostAnalysis | None) -> str:
    if host is None:
        return "an unknown site"
    if host.ip_literal is not None:
        return host.ip_literal
    return host.registrable_domain or host.ascii_host


def _domain_text(
    code: str, host: HostAnalysis | None, parsed: ParsedUrl, url: str
) -> tuple[str, str] | None:
    site = _site(host)
    if code == "EG401" and host is not None:
        if host.kinds & SPOOF_KINDS:
            return (
                "International address",
                f"This address uses international characters; its real form is {host.ascii_host}.",
            )
        return (
            "International address",
            f"This address uses international characters: {host.unicode_host} is sent as "
            f"{host.ascii_host}.",
        )
    if code == "EG402" and host is not None:
        issue = next((i for i in host.issues if i.kind == "mixed_script"), None)
        label = issue.label if issue is not None else host.unicode_host
        return (
            "Mixed alphabets in the address",
            f"Part of the address ({visible(label, lookalikes=True)}) mixes "
            f"{_scripts(label)} characters, which is how look-alike addresses are made. "
            f"The site is {site}.",
        )
    if code == "EG403" and host is not None:
        issue = next((i for i in host.issues if i.kind == "whole_script_confusable"), None)
        if issue is not None and issue.lookalike_of:
            return (
                "Disguised address",
                f"“{issue.label}” is written in {_first_script(issue.label)} characters that "
                f"look like the Latin “{issue.lookalike_of}”. The real address is "
                f"{host.ascii_host}.",
            )
        return (
            "Disguised address",
            "Part of the address is written with characters that imitate other letters, "
            f"digits or punctuation. The real address is {host.ascii_host}.",
        )
    if code == "EG404" and host is not None:
        issue = next((i for i in host.issues if i.kind == "lookalike"), None)
        target = issue.lookalike_of if issue is not None else "a well-known site"
        return (
            f"Look-alike of {target}",
            f"This address looks like {target} but it is a different site: {site}. "
            f"Do not enter anything you would give {target}.",
        )
    if code == "EG405":
        chars = find_invisible_or_deceptive_chars(url)
        names = ", ".join(dict.fromkeys(f"{c.codepoint} {c.name.lower()}" for c in chars[:3]))
        detail = f" ({names})" if names else ""
        return (
            "Hidden or look-alike characters",
            f"The address contains characters that hide or imitate parts of an address"
            f"{detail}. It may not go where it seems to.",
        )
    if code == "EG406":
        return ("Misleading address", _deceptive_text(host, parsed, site))
    if code == "EG407":
        return (
            "Invalid international address",
            "The address is not a valid international domain name; browsers may refuse it "
            "or go somewhere else than it appears.",
        )
    return None


def _deceptive_text(host: HostAnalysis | None, parsed: ParsedUrl, site: str) -> str:
    parts: list[str] = []
    if parsed.user:
        parts.append(
            f"The text before “@” ({visible(parsed.user, lookalikes=True)}) is not where you "
            f"will go: the browser goes to {site}."
        )
    for issue in host.issues if host is not None else ():
        if issue.kind != "deceptive_form":
            continue
        if host is not None and host.ip_form is not None:
            parts.append(
                f"The address is the IP address {host.ip_literal} written in a form people "
                f"cannot read ({host.ip_form})."
            )
        elif issue.lookalike_of:
            parts.append(f"{issue.lookalike_of} appears in the address, but the site is {site}.")
        else:
            parts.append(issue.detail)
    return " ".join(parts) or f"The address hides where it goes; the site is {site}."


def _title_from_name(name: str) -> str:
    text = name.replace("-", " ").strip()
    return text[:1].upper() + text[1:]


def warnings_for(
    findings: Iterable[Finding],
    *,
    host: HostAnalysis | None = None,
    parsed: ParsedUrl | None = None,
    url: str = "",
) -> tuple[ViewWarning, ...]:
    """One :class:`ViewWarning` per rule code, most severe first."""
    seen: dict[str, ViewWarning] = {}
    for finding in findings:
        if finding.code in HIDDEN_FROM_USERS or finding.code in seen:
            continue
        words = (
            _domain_text(finding.code, host, parsed, url)
            if parsed is not None and finding.code.startswith("EG4")
            else None
        )
        if words is None:
            words = _FORM_TEXTS.get(finding.code)
        if words is None:
            title = _TITLES.get(finding.code, _title_from_name(finding.name))
            words = (title, finding.message)
        title, text = words
        seen[finding.code] = ViewWarning(
            code=finding.code,
            name=finding.name,
            level=level_of(finding),
            title=unicodedata.normalize("NFC", title),
            text=text,
            severity=finding.severity.value,
            action=finding.action.value,
        )
    order = {"danger": 0, "warning": 1, "notice": 2}
    return tuple(sorted(seen.values(), key=lambda w: (order[w.level], w.code)))
