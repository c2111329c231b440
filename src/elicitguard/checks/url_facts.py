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

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from elicitguard.checks.domains import HostAnalysis, analyze_host, registrable_domain
from elicitguard.checks.urls import ParsedUrl, parse_url

__all__ = [
    "UrlFacts",
    "bare_host",
    "protected_domains_for",
    "server_domains",
    "site_of",
    "url_facts",
]


@dataclass(frozen=True, slots=True)
class UrlFacts:
    """The parsed URL and the analysis of its host (``None`` when it has no host)."""

    url: str
    parsed: ParsedUrl
    host: HostAnalysis | None


def url_facts(
    url: str, protected: frozenset[str] = frozenset(), parsed: ParsedUrl | None = None
) -> UrlFacts:
    """Parse ``url`` (unless ``parsed`` is given) and analyse its host against the bundled
    and ``protected`` domains."""
    parsed = parse_url(url) if parsed is None else parsed
    host = parsed.host if parsed.has_authority else ""
    analysis = analyze_host(host, protected=protected) if host else None
    return UrlFacts(url, parsed, analysis)


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
    if server:
        host = _host_of_server(server)
        domain = registrable_domain(host) if host is not None else None
        if domain is not None:
            out.append(domain)
    return tuple(out)


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
