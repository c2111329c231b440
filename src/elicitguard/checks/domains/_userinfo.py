"""Userinfo that imitates a host (EG406): ``https://paypal.com@evil.example/``.

Why: people read a URL from the left, and ``paypal.com`` before the ``@`` is the first host
name they see, while the browser goes to ``evil.example``.  Legitimate userinfo is a user name
(``git``, ``alice``, ``alice.smith``) or a token; we call it host-like when the user part, after
percent-decoding and UTS 46 mapping, is an IP literal in any form, or a dotted name of valid
host labels whose last label is a public suffix from the bundled list (``john.smith`` is not,
``paypal.com`` and ``accounts.google.co.uk`` are).
"""

from __future__ import annotations

import urllib.parse
from functools import lru_cache

import idna

from elicitguard.checks.domains._psl import _psl
from elicitguard.checks.ip_literals import parse_ip_literal

__all__ = ["userinfo_looks_like_host"]

_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")


@lru_cache(maxsize=4096)
def userinfo_looks_like_host(userinfo: str) -> bool:
    """Whether the user part of ``userinfo`` (before any ``:password``) looks like a host."""
    user = urllib.parse.unquote(userinfo, errors="replace").split(":", 1)[0].strip()
    if not user:
        return False
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
    psl = _psl()
    suffix = psl.publicsuffix(ascii_host, accept_unknown=False)
    return suffix is not None and suffix != ascii_host
