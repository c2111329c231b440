"""Whether a URL host is on the user's own machine or network (EG307).

Why: a remote server has no business sending the user's browser to the user's own
network. A URL-mode link to ``192.168.1.1``, ``169.254.169.254`` or ``printer.local`` turns
the browser into the attacker's client inside the firewall: cross-site requests against
routers and admin panels, DNS rebinding against local services, cloud-metadata theft
where a browser proxy forwards it. The address is read with the one WHATWG IP parser
(:func:`elicitguard.checks.ip_literals.effective_address`), so every spelling of an
address (``0xC0A80101``, ``[::ffff:10.0.0.1]``, ``[0000::1]``) is classed alike.

Names count too: ``localhost`` and ``*.localhost`` (RFC 6761), ``*.local`` (mDNS, RFC
6762), ``*.home.arpa`` (RFC 8375), ``*.internal`` (ICANN's private-use TLD, and the
Google metadata server ``metadata.google.internal``), and public names that resolve to
loopback or to the address they spell (``localtest.me``, ``lvh.me``, ``10.0.0.1.nip.io``,
``10-0-0-1.sslip.io``). The unspecified address (``0.0.0.0``, ``::``) is EG302's finding.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from typing import Final, NamedTuple

from elicitguard.checks.ip_literals import effective_address

__all__ = ["LocalTarget", "local_target"]


class LocalTarget(NamedTuple):
    """Where a host leads: ``kind`` is a stable word, ``what`` says it for a message."""

    kind: str  # loopback, private, link-local, cgnat, metadata, local-name
    what: str


_Net = ipaddress.IPv4Network | ipaddress.IPv6Network

# Order matters: the first network that holds the address names it.
_NETWORKS: Final[tuple[tuple[_Net, str, str], ...]] = tuple(
    (ipaddress.ip_network(net), kind, what)
    for net, kind, what in (
        ("169.254.169.254/32", "metadata", "the cloud metadata service"),
        ("169.254.170.2/32", "metadata", "the cloud metadata service"),
        ("fd00:ec2::254/128", "metadata", "the cloud metadata service"),
        ("100.100.100.200/32", "metadata", "the cloud metadata service"),
        ("127.0.0.0/8", "loopback", "a loopback address (this machine)"),
        ("::1/128", "loopback", "a loopback address (this machine)"),
        ("10.0.0.0/8", "private", "a private network address"),
        ("172.16.0.0/12", "private", "a private network address"),
        ("192.168.0.0/16", "private", "a private network address"),
        ("fc00::/7", "private", "a private network address"),
        ("fec0::/10", "private", "a private network address"),
        ("169.254.0.0/16", "link-local", "a link-local address"),
        ("fe80::/10", "link-local", "a link-local address"),
        ("100.64.0.0/10", "cgnat", "a carrier-grade NAT address"),
        ("192.0.0.0/24", "private", "a private network address"),
        ("198.18.0.0/15", "private", "a private network address"),
    )
)

_METADATA_NAMES: Final = frozenset(
    {"metadata.google.internal", "metadata", "instance-data", "metadata.azure.internal"}
)
#: Reserved or private-use suffixes: names that only resolve on the user's own network.
_LOCAL_SUFFIXES: Final = ("localhost", "local", "internal", "home.arpa", "lan", "intranet")
#: Public names whose DNS answers loopback for themselves and every subdomain.
_LOOPBACK_NAMES: Final = ("localtest.me", "lvh.me", "vcap.me", "lacolhost.com", "localho.st")
#: Wildcard DNS services that answer the address spelled in the name.
_SPELLING_SERVICES: Final = ("nip.io", "sslip.io", "xip.io", "traefik.me", "nip.direct")
_SPELLED_V4: Final = re.compile(r"(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})$")


def _address_target(host: str) -> LocalTarget | None:
    address = effective_address(host)
    if address is None:
        return None
    for network, kind, what in _NETWORKS:
        if address.version == network.version and address in network:
            return LocalTarget(kind, what)
    return None


def _under(name: str, suffix: str) -> bool:
    return name == suffix or name.endswith("." + suffix)


def _spelled_address(name: str, service: str) -> LocalTarget | None:
    head = name[: -len(service) - 1]
    match = _SPELLED_V4.search(head)
    if match is None:
        return None
    return _address_target(".".join(match.groups()))


@functools.lru_cache(maxsize=4096)
def local_target(host: str) -> LocalTarget | None:
    """Where ``host`` leads when that is the user's own machine or network, else ``None``.

    ``host`` is the parsed URL's host (ASCII after UTS 46; IPv6 in brackets or not). Kept
    per host: the answer depends on the host alone, hosts repeat across URLs while the rest
    of a URL does not, and reading an address spelling costs more than the rest of EG307.
    """
    text = host.strip().lower().rstrip(".")
    if not text:
        return None
    found = _address_target(text)
    if found is not None or effective_address(text) is not None:
        return found
    if text in _METADATA_NAMES:
        return LocalTarget("metadata", "the cloud metadata service")
    if _under(text, "localhost") or any(_under(text, n) for n in _LOOPBACK_NAMES):
        return LocalTarget("loopback", "a loopback name (this machine)")
    for service in _SPELLING_SERVICES:
        if text.endswith("." + service):
            return _spelled_address(text, service)
    if "." not in text:
        return LocalTarget("local-name", "a single-label name (resolved on the local network)")
    for suffix in _LOCAL_SUFFIXES:
        if _under(text, suffix):
            what = f"a name that only resolves on a local network (.{suffix})"
            return LocalTarget("local-name", what)
    return None
