"""A protected domain shown in the path of a URL on another host (EG406).

Why: people read a URL for the first thing that looks like a site, and a long host is
easy to skip: ``https://evil.example/paypal.com/login`` and
``https://evil.example/https://accounts.google.com/`` show ``paypal.com`` and
``accounts.google.com`` where the eye lands, while the browser goes to evil.example. A path
segment that is a protected domain (or a subdomain of one), after percent-decoding and
with backslashes read as slashes, is reported when the URL's own host is not protected.
A segment that only contains a domain (``/docs/example.com-setup``, ``paypal.com.html``)
is not a host and is not reported; a protected host may name any domain in its paths.
"""

from __future__ import annotations

from urllib.parse import unquote

from elicitguard.checks.domains import _host, _lookalike

__all__ = ["protected_in_path"]

_MAX_DECODES = 3
_MAX_SEGMENTS = 64


def _decoded(path: str) -> str:
    text = path.replace("\\", "/")
    for _ in range(_MAX_DECODES):
        if "%" not in text:
            break
        decoded = unquote(text).replace("\\", "/")
        if decoded == text:
            break
        text = decoded
    return text


def _as_host(segment: str) -> str:
    """A path segment read as a host: after any ``user@``, without ``:port`` or final dot."""
    text = segment.strip().lower().rsplit("@", 1)[-1]
    text = text.split(":", 1)[0] if text.count(":") == 1 else text
    return text.rstrip(".")


def _may_name_domain(path: str) -> bool:
    """False when no segment of ``path`` can spell a domain, even after decoding.

    Why: most paths (``/oauth2/authorize``, ``/elicit/<uuid>``) hold no dot, and a domain
    needs one; only percent-decoding could add one, and backslashes become slashes, never
    dots. The host's protected-domain lookup is skipped with them.
    """
    return "." in path or "%" in path


def protected_in_path(path: str, host: str, protected: frozenset[str] = frozenset()) -> str | None:
    """The protected domain a segment of ``path`` spells, when ``host`` is not protected."""
    if not _may_name_domain(path):
        return None
    index = _host._index(protected)
    if _lookalike.is_covered(host.lower().rstrip("."), index.domains):
        return None
    for segment in _decoded(path).split("/")[:_MAX_SEGMENTS]:
        name = _as_host(segment)
        if "." not in name or not name.isascii():
            continue
        labels = name.split(".")
        for i in range(len(labels) - 1):
            if ".".join(labels[i:]) in index.domains:
                return ".".join(labels[i:])
    return None
