"""Host tests shared by the URL checks: loopback, and membership of a host list.

Why: EG301 (http only to loopback or dev hosts), EG307 (local-network targets) and the
policy's host lists all ask whether a host is one of a set, and must agree on what a host
is: every IPv4 spelling a browser reads as one address (:mod:`elicitguard.checks.ip_literals`),
case, brackets and a final dot folded.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Sequence

from elicitguard.checks.ip_literals import effective_address, ends_in_number

__all__ = ["host_in", "is_loopback_host", "strip_host"]


def strip_host(host: str) -> str:
    """``host`` lower case, without brackets or one final dot (``[::1]`` reads ``::1``)."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host[:-1] if host.endswith(".") and not host.endswith("..") else host


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` reaches in any WHATWG spelling (embedded IPv4 taken out)."""
    if ":" not in host and not ends_in_number(host):
        return None
    return effective_address(host)


@functools.lru_cache(maxsize=4096)
def is_loopback_host(host: str) -> bool:
    """True for ``localhost``, ``*.localhost``, ``127.0.0.0/8`` and ``::1``.

    An IPv4 address is loopback in every spelling a browser reads as one (``127.1``,
    ``0x7f.0.0.1``, ``[::ffff:127.0.0.1]``): the check is about where the URL goes; EG302
    refuses the odd spellings themselves.
    """
    name = strip_host(host)
    if name == "localhost" or name.endswith(".localhost"):
        return all(name.split("."))
    address = _ip(name)
    if address is None:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        return address == ipaddress.IPv6Address("::1")
    return address.is_loopback


@functools.lru_cache(maxsize=256)
def _compile_entries(
    entries: tuple[str, ...],
) -> tuple[
    frozenset[str], tuple[str, ...], tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
]:
    names: set[str] = set()
    suffixes: list[str] = []
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for entry in entries:
        text = strip_host(entry)
        if text.startswith("*."):
            suffixes.append(text[1:])
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            names.add(text)
    return frozenset(names), tuple(suffixes), tuple(networks)


def host_in(host: str, entries: Sequence[str]) -> bool:
    """True when ``host`` equals a listed name, is under a ``*.suffix``, or is in a CIDR.

    Names compare case-insensitively without a trailing dot; an IP literal matches a
    network entry (``127.0.0.0/8``, ``::1``) in every spelling, an IPv6 literal that embeds
    an IPv4 address (``[::ffff:10.0.0.1]``) as that IPv4 address.
    """
    names, suffixes, networks = _compile_entries(tuple(entries))
    name = strip_host(host)
    if name in names or any(name.endswith(s) and len(name) > len(s) for s in suffixes):
        return True
    if not networks:
        return False
    address = _ip(name)
    return address is not None and any(
        address.version == net.version and address in net for net in networks
    )
