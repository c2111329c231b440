"""Registrable domain (eTLD+1) from the bundled Public Suffix List, never the network.

Choice: ``publicsuffixlist``, the project's one Public Suffix List, through its public API
(registrable domains, public suffixes, and whether a label is a TLD), rather than
``tldextract``. ``publicsuffixlist`` ships the list inside the wheel, releases track the list (the version is
the list's date, so pinning it pins the data), it never fetches anything unless its separate
updater is run by hand, and it is pure Python with type hints.  ``tldextract`` fetches the live
list by default and caches it on disk; one forgotten argument and a consent check would open a
socket.  Private-section suffixes (``github.io``, ``herokuapp.com``) count as public suffixes,
so ``evil.github.io`` is its own registrable domain, which is what a consent screen must show.
"""

from __future__ import annotations

from functools import cache, lru_cache

from publicsuffixlist import PublicSuffixList

__all__ = ["is_known_tld", "public_suffix", "registrable_ascii"]


@cache
def _psl() -> PublicSuffixList:
    # source=None reads the copy bundled in the wheel; accept_unknown treats an unknown TLD
    # (``evil.example``, ``host.internal``) as a one-label suffix, as browsers do.
    return PublicSuffixList(source=None, accept_unknown=True, accept_encoded_idn=True)


@cache
def _strict_psl() -> PublicSuffixList:
    # The same bundled list, with unknown TLDs left unknown (what "is this a TLD?" asks).
    return PublicSuffixList(source=None, accept_unknown=False, accept_encoded_idn=True)


@lru_cache(maxsize=4096)
def is_known_tld(label: str) -> bool:
    """True when ``label`` (ASCII or Unicode, any case) is a top-level domain of the list."""
    if not label or "." in label:
        return False
    return bool(_strict_psl().is_public(label.lower()))


@lru_cache(maxsize=8192)
def registrable_ascii(ascii_host: str) -> str | None:
    """eTLD+1 of a lower-case ASCII (punycode) host without trailing dot, or ``None``."""
    if not ascii_host or "." not in ascii_host:
        return None
    result: str | None = _psl().privatesuffix(ascii_host)
    return result


@lru_cache(maxsize=8192)
def public_suffix(ascii_host: str) -> str | None:
    """The public suffix of a lower-case ASCII host, or ``None``."""
    if not ascii_host:
        return None
    result: str | None = _psl().publicsuffix(ascii_host)
    return result
