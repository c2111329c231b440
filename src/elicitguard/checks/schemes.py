"""The one table of URL schemes: what each scheme is, as every URL check needs to know it.

Why: EG301 (which schemes are never allowed), EG202 (which schemes a renderer makes a link
of, and which are dangerous as soon as a link carries them), EG308 (which schemes run
script), the URL parser (which schemes have an authority) and the messages (which scheme
names may be echoed) each kept their own set, and a scheme added to one was missed by
the others. Each set below is read off this table.

Sources: the WHATWG URL and Fetch standards (special schemes, ``about:``/``blob:``/
``data:``/``file:``), OWASP's XSS filter evasion cheat sheet (``javascript:``,
``vbscript:``, ``livescript:``, ``mocha:``), GitHub-flavoured Markdown and linkify-it
(auto-linked schemes).
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = [
    "AUTHORITY_SCHEMES",
    "AUTOLINKED_SCHEMES",
    "DANGEROUS_LINK_SCHEMES",
    "NAMED_SCHEMES",
    "NEVER_ALLOWED_SCHEMES",
    "SCHEMES",
    "SCRIPT_SCHEMES",
    "WEB_SCHEMES",
    "Scheme",
]


class Scheme(NamedTuple):
    """What one scheme is. Each flag answers the question of one check."""

    #: Runs script in the page that opens it (EG308 reports it in any parameter).
    script: bool = False
    #: Never allowed as a URL-mode target, in any environment (EG301).
    never_allowed: bool = False
    #: Named in messages as itself (others read "a non-https scheme"; never echoed).
    named: bool = False
    #: Dangerous as soon as a link carries it, wherever it appears in a form's text (EG202).
    dangerous_link: bool = False
    #: Made a clickable link in plain text by auto-linking renderers (EG202).
    autolinked: bool = False
    #: Has an authority (``scheme://host``): a URL of it without a host is invalid (EG302).
    authority: bool = False


SCHEMES: Final[dict[str, Scheme]] = {
    "https": Scheme(autolinked=True, authority=True),
    "http": Scheme(named=True, autolinked=True, authority=True),
    "javascript": Scheme(script=True, never_allowed=True, named=True, dangerous_link=True),
    "vbscript": Scheme(script=True, never_allowed=True, named=True, dangerous_link=True),
    "livescript": Scheme(script=True, never_allowed=True),
    "mocha": Scheme(script=True, never_allowed=True),
    "data": Scheme(never_allowed=True, named=True, dangerous_link=True),
    "file": Scheme(never_allowed=True, named=True, dangerous_link=True, authority=True),
    "blob": Scheme(never_allowed=True, named=True, dangerous_link=True),
    "filesystem": Scheme(never_allowed=True, named=True),
    "about": Scheme(never_allowed=True, named=True),
    "view-source": Scheme(never_allowed=True, named=True),
    "jar": Scheme(never_allowed=True, named=True),
    "ftp": Scheme(never_allowed=True, named=True, autolinked=True, authority=True),
    "ftps": Scheme(never_allowed=True, named=True, autolinked=True, authority=True),
    "ws": Scheme(never_allowed=True, named=True, authority=True),
    "wss": Scheme(named=True, authority=True),
    "sftp": Scheme(named=True, authority=True),
    "ssh": Scheme(named=True, authority=True),
    "git": Scheme(named=True, authority=True),
    "mailto": Scheme(named=True, autolinked=True),
    "xmpp": Scheme(autolinked=True),
    "tel": Scheme(named=True),
    "sms": Scheme(named=True),
    "intent": Scheme(named=True),
}


def _with(flag: str) -> frozenset[str]:
    return frozenset(name for name, scheme in SCHEMES.items() if getattr(scheme, flag))


SCRIPT_SCHEMES: Final = _with("script")
NEVER_ALLOWED_SCHEMES: Final = _with("never_allowed")
NAMED_SCHEMES: Final = _with("named")
DANGEROUS_LINK_SCHEMES: Final = _with("dangerous_link")
AUTOLINKED_SCHEMES: Final = _with("autolinked")
AUTHORITY_SCHEMES: Final = _with("authority")
#: The schemes of the web; most URLs are one of these (the parser's fast path).
WEB_SCHEMES: Final = frozenset({"https", "http"})
