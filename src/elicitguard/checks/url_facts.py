"""What one URL is, as the EG4xx rules, the match operators, the audit record and the consent
view all need it: the careful parse, the host analysis, and the domains to protect.

One place for these so that a ``match:`` rule, an EG3xx/EG4xx check, an audit record and a
consent view cannot see different hosts for one URL (they all start from
:func:`~elicitguard.checks.urls.parse_url`, never from ``urllib.parse.urlsplit``).

Protected domains are the bundled list, the policy's ``lists.protected_domains``, the servers'
own domains from ``lists.server_domains``, and the operator's name for the server when that
name is a host or a URL: a server is the first thing its own users are phished with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final, TypeVar, cast

from elicitguard.checks.domains import HostAnalysis, analyze_host, registrable_domain
from elicitguard.checks.urls import ParsedUrl, parse_url

__all__ = [
    "UrlFacts",
    "bare_host",
    "facts_of",
    "protected_domains_for",
    "server_domains",
    "site_of",
    "url_facts",
]

T = TypeVar("T")

#: Longer URLs are not kept between messages (the parse cache stops at the same length).
_MAX_CACHED_URL: Final = 8192
_UNSET: Final[Any] = object()


class UrlFacts:
    """One URL as every check of it reads it: parsed once, each derived part computed once.

    Why: a URL-mode request runs about twenty rules over one URL (EG301-EG308, EG401-EG407,
    EG107, EG202), and each needs some part of it: the scheme, the host analysis, the query
    parameters, the path segments, the credential scan. Computing each part here, the first
    time a check asks, means no rule re-derives what another already has. The parts are
    lazy (a URL with no host never has its host analysed) and cached on the object; results
    of a check function that other checks reuse (the pre-authentication scan that EG303
    consults) are kept with :meth:`derive`.

    ``protected`` are the domains to protect beyond the bundled list; the host analysis
    depends on them, nothing else does. Facts objects for URLs up to 8 KiB are shared
    between messages (:func:`url_facts`): every part is a pure function of the URL.
    """

    __slots__ = (
        "_derived",
        "_host",
        "_path_segments",
        "_query_params",
        "_site",
        "parsed",
        "protected",
        "url",
    )

    def __init__(
        self, url: str, parsed: ParsedUrl, protected: frozenset[str] = frozenset()
    ) -> None:
        self.url = url
        self.parsed = parsed
        self.protected = protected
        self._host: HostAnalysis | None = _UNSET
        self._query_params: dict[str, str] | None = None
        self._path_segments: list[str] | None = None
        self._site: str | None = None
        self._derived: dict[Callable[[UrlFacts], Any], Any] = {}

    def __repr__(self) -> str:
        return f"UrlFacts({self.parsed!r})"

    @property
    def host(self) -> HostAnalysis | None:
        """The analysis of the host against the bundled and ``protected`` domains (``None``
        when the URL has no host)."""
        if self._host is _UNSET:
            parsed = self.parsed
            host = parsed.host if parsed.has_authority else ""
            self._host = analyze_host(host, protected=self.protected) if host else None
        return self._host

    @property
    def bare_host(self) -> str:
        """The host as a name or address (see :func:`bare_host`)."""
        return bare_host(self.parsed)

    @property
    def site(self) -> str:
        """The registrable domain of the host ("" when the URL has no host)."""
        if self._site is None:
            host = self.parsed.host
            self._site = site_of(host.strip("[]").lower()) if host else ""
        return self._site

    @property
    def query_params(self) -> dict[str, str]:
        """:meth:`ParsedUrl.query_params`, computed once (read it, never change it)."""
        if self._query_params is None:
            self._query_params = self.parsed.query_params()
        return self._query_params

    @property
    def path_segments(self) -> list[str]:
        """:meth:`ParsedUrl.path_segments`, computed once (read it, never change it)."""
        if self._path_segments is None:
            self._path_segments = self.parsed.path_segments()
        return self._path_segments

    def derive(self, compute: Callable[[UrlFacts], T]) -> T:
        """``compute(self)``, computed the first time any check asks for it.

        ``compute`` must be a pure function of the URL (a module-level function, so that
        each derived fact has one key).
        """
        derived = self._derived
        if compute in derived:
            return cast("T", derived[compute])
        value = compute(self)
        derived[compute] = value
        return value


@lru_cache(maxsize=_MAX_CACHED_URL)
def _shared_facts(url: str, protected: frozenset[str]) -> UrlFacts:
    return UrlFacts(url, parse_url(url), protected)


def url_facts(
    url: str, protected: frozenset[str] = frozenset(), parsed: ParsedUrl | None = None
) -> UrlFacts:
    """The facts of ``url`` with its host analysed against the bundled and ``protected``
    domains; shared between callers for URLs up to 8 KiB. ``parsed``, when given, must be
    ``parse_url(url)``."""
    if len(url) <= _MAX_CACHED_URL:
        return _shared_facts(url, protected)
    return UrlFacts(url, parse_url(url) if parsed is None else parsed, protected)


@lru_cache(maxsize=_MAX_CACHED_URL)
def _facts_of_parsed(parsed: ParsedUrl) -> UrlFacts:
    return UrlFacts(parsed.raw, parsed)


def facts_of(url: UrlFacts | ParsedUrl) -> UrlFacts:
    """``url`` as facts: the check functions take either, so callers that hold only a
    :class:`ParsedUrl` still share the derived parts between checks."""
    return url if isinstance(url, UrlFacts) else _facts_of_parsed(url)


def bare_host(parsed: ParsedUrl) -> str:
    """The host of ``parsed`` as a name or address: lower case, no brackets, no final dot.

    What ``match:`` conditions on ``url.host`` compare and host lists are matched against
    (an IPv6 literal reads ``::1``, not ``[::1]``).
    """
    return parsed.host.strip("[]") if parsed.has_authority else ""


@lru_cache(maxsize=4096)
def site_of(host: str) -> str:
    """The registrable domain (eTLD+1) of ``host``; the host itself for IPs and single labels."""
    return (registrable_domain(host) if host else None) or host


def _host_of_server(server: str) -> str | None:
    """The host in an operator's server name (``api.acme.com``, ``https://mcp.acme.com/mcp``)."""
    text = server.strip()
    if "://" in text:
        parsed = parse_url(text)
        if not parsed.has_authority:
            return None
        return parsed.host.strip("[]") or None
    if "." not in text or any(c in text for c in " /@:"):
        return None
    return text.lower().rstrip(".")


def server_domains(server: str | None, lists: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The servers' own domains: ``lists.server_domains`` plus the registrable domain of the
    server's name when that name is a host (``mcp.acme.com`` protects ``acme.com``)."""
    out = list(lists.get("server_domains", ()))
    domain = _server_site(server) if server else None
    if domain is not None:
        out.append(domain)
    return tuple(out)


@lru_cache(maxsize=256)
def _server_site(server: str) -> str | None:
    """The registrable domain of an operator's server name (asked once per message)."""
    host = _host_of_server(server)
    return registrable_domain(host) if host is not None else None


@lru_cache(maxsize=256)
def _normalised(entries: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for entry in entries:
        text = entry.strip().lower().removeprefix("*.").removeprefix(".")
        if text and "/" not in text:
            out.add(text)
    return frozenset(out)


def protected_domains_for(
    server: str | None, lists: Mapping[str, tuple[str, ...]]
) -> frozenset[str]:
    """Domains to protect beyond the bundled list (policy list and the servers' own domains)."""
    entries = tuple(lists.get("protected_domains", ())) + server_domains(server, lists)
    return _normalised(entries)
