"""Userinfo that imitates a host (EG406): ``https://paypal.com@evil.example/``.

Why: people read a URL from the left, and ``paypal.com`` before the ``@`` is the first host
name they see, while the browser goes to ``evil.example``.  Legitimate userinfo is a user name
(``git``, ``alice``, ``alice.smith``) or a token; we call it host-like when the user part, after
percent-decoding and UTS 46 mapping, is an IP literal in any form, or a dotted name of valid
host labels whose last label is a public suffix from the bundled list or a special-use name
(``john.smith`` is not, ``paypal.com``, ``accounts.google.co.uk`` and ``good.example`` are),
or when it holds a percent-encoded ``/``, ``?``, ``#``, ``@`` or backslash
(``evil.example%2F@good.example``).
"""

from __future__ import annotations

import urllib.parse
from functools import lru_cache

import idna

from elicitguard.checks.domains._psl import _psl
from elicitguard.checks.ip_literals import parse_ip_literal

__all__ = ["userinfo_looks_like_host"]

_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")
#: Delimiters that, percent-encoded in the user-info, make it read as a host and a path.
_DELIMITERS = frozenset("/?#@\\")
#: Special-use top-level names (RFC 2606, RFC 6761, RFC 7686, RFC 8375) the PSL omits.
_SPECIAL_USE_TLDS = frozenset(
    {"example", "test", "invalid", "localhost", "local", "onion", "internal"}
)


@lru_cache(maxsize=4096)
def userinfo_looks_like_host(userinfo: str) -> bool:
    """Whether the user part of ``userinfo`` (before any ``:password``) looks like a host."""
    decoded = urllib.parse.unquote(userinfo, errors="replace")
    user = decoded.split(":", 1)[0].strip()
    if not user:
        return False
    if any(c in decoded for c in _DELIMITERS):
        return True  # ``evil.example%2F@good.example`` reads as the host evil.example
    if user.startswith("[") and parse_ip_literal(user.lower()) is not None:
        return True
    try:
        mapped = idna.uts46_remap(user, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError):
        return False
    mapped = mapped.rstrip(".")
    if "." not in mapped:
        return False
    if parse_ip_literal(mapped) is not None:
        return True
    try:
        ascii_host = idna.encode(mapped, uts46=False).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        if not (mapped.isascii() and set(mapped) <= _HOST_CHARS):
            return False
        ascii_host = mapped
    labels = ascii_host.split(".")
    if any(not label or len(label) > 63 for label in labels):
        return False
    if labels[-1] in _SPECIAL_USE_TLDS and len(labels) > 1:
        return True  # ``good.example``, ``bank.test``: the names documentation and tests use
    psl = _psl()
    suffix = psl.publicsuffix(ascii_host, accept_unknown=False)
    return suffix is not None and suffix != ascii_host
