"""IP literals as the WHATWG URL standard reads them: the one IP-spelling parser of elicitguard.

Why: browsers resolve ``http://3232235777``, ``http://0xC0A80101``, ``http://0x7f.1``,
``http://0177.0.0.1`` and ``http://127.1`` to real addresses, and an IPv6 literal such as
``[::ffff:192.168.1.1]`` or ``[64:ff9b::c0a8:101]`` carries an IPv4 address a person cannot
read in it.  Every check that looks at a host (URL syntax, loopback, host lists, homograph
forms, user-info) must agree on what address a spelling is, so they all call this module.

The IPv4 rules are the standard's "IPv4 parser" and "ends in a number" steps: one to four
parts, each decimal, octal (leading ``0``) or hexadecimal (``0x``/``0X``; ``0x`` alone is
0), the last part filling the bytes the others leave, one trailing dot allowed.  The IPv6
rules are the standard's IPv6 parser (as :mod:`ipaddress` implements it, without zone ids),
and the IPv4 address an IPv6 literal embeds is taken out of the IPv4-mapped
(``::ffff:0:0/96``), IPv4-translated (``::ffff:0:0:0/96``), IPv4-compatible (``::/96``),
NAT64 well-known prefix (``64:ff9b::/96``) and 6to4 (``2002::/16``) forms.

Form names: ``dotted`` (four decimal parts, no leading zeros: the canonical IPv4 form),
``decimal`` (decimal parts only, fewer than four), ``octal``, ``hex``, ``mixed`` (octal and
hex parts), ``ipv6`` (an IPv6 address embedding no IPv4 one), and ``mapped``,
``translated``, ``compatible``, ``nat64``, ``6to4`` for the embedding IPv6 forms.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "EMBEDDING_WORDS",
    "IpLiteral",
    "effective_address",
    "ends_in_number",
    "parse_ip",
    "parse_ip_literal",
]

_DIGITS = {
    8: frozenset("01234567"),
    10: frozenset("0123456789"),
    16: frozenset("0123456789abcdefABCDEF"),
}
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")

#: How each embedding IPv6 form is named in messages.
EMBEDDING_WORDS = {
    "mapped": "an IPv4-mapped IPv6 address",
    "translated": "an IPv4-translated IPv6 address",
    "compatible": "an IPv4-compatible IPv6 address",
    "nat64": "a NAT64 IPv6 address",
    "6to4": "a 6to4 IPv6 address",
}


class IpLiteral(NamedTuple):
    """One IP literal: its normalised address, the spelling used, and the IPv4 it carries.

    ``address`` is a dotted quad for IPv4 spellings and the compressed form for IPv6;
    ``ipv4`` is the IPv4 address the host reaches or embeds (``None`` for plain IPv6).
    """

    address: str
    form: str
    ipv4: str | None

    @property
    def canonical(self) -> bool:
        """True for a dotted quad and for an IPv6 address that embeds no IPv4 address."""
        return self.form in ("dotted", "ipv6")

    @property
    def is_ipv6(self) -> bool:
        """True when the literal is written as IPv6 (bracketed in a URL)."""
        return self.form in ("ipv6", *EMBEDDING_WORDS)


def _parse_part(part: str) -> tuple[int, str] | None:
    if part[:2] in ("0x", "0X"):
        digits, radix, form = part[2:], 16, "hex"
        if digits == "":
            return 0, form
    elif len(part) > 1 and part[0] == "0":
        digits, radix, form = part[1:], 8, "octal"
    else:
        digits, radix, form = part, 10, "decimal"
    if not digits or not set(digits) <= _DIGITS[radix]:
        return None
    return int(digits, radix), form


def _parts(host: str) -> list[str]:
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def ends_in_number(host: str) -> bool:
    """The WHATWG "ends in a number" test: the host must then parse as IPv4 or is invalid."""
    last = _parts(host)[-1]
    if last and last.isascii() and last.isdigit():
        return True
    return bool(last) and _parse_part(last) is not None and last[:2] in ("0x", "0X")


def _parse_ipv4(host: str) -> IpLiteral | None:
    parts = _parts(host)
    if not parts or len(parts) > 4 or any(p == "" for p in parts):
        return None
    parsed = [_parse_part(p) for p in parts]
    if any(p is None for p in parsed):
        return None
    numbers = [p[0] for p in parsed if p is not None]
    forms = {p[1] for p in parsed if p is not None}
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n << (8 * (3 - i))
    dotted = str(ipaddress.IPv4Address(value))
    if "hex" in forms and "octal" in forms:
        form = "mixed"
    elif "hex" in forms:
        form = "hex"
    elif "octal" in forms:
        form = "octal"
    elif len(numbers) == 4:
        form = "dotted"
    else:
        form = "decimal"
    return IpLiteral(dotted, form, dotted)


def _embedded(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    if address.ipv4_mapped is not None:
        return "mapped", address.ipv4_mapped
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _TRANSLATED:
        return "translated", low
    if address in _NAT64:
        return "nat64", low
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address in _COMPATIBLE and int(address) > 1:
        return "compatible", low
    return None


def _parse_ipv6(text: str) -> IpLiteral | None:
    if "%" in text or not text.isascii():
        return None  # zone ids are not part of a URL host (WHATWG), nor are non-ASCII digits
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        return None
    embedded = _embedded(address)
    if embedded is None:
        return IpLiteral(address.compressed, "ipv6", None)
    form, ipv4 = embedded
    return IpLiteral(address.compressed, form, str(ipv4))


@lru_cache(maxsize=8192)
def parse_ip(host: str) -> IpLiteral | None:
    """Read ``host`` as an IP literal (``[v6]``, bare v6, or any WHATWG IPv4 spelling).

    ``host`` is ASCII after UTS 46 mapping (full-width digits already folded); a name that
    does not end in a number is not an IPv4 literal and gives ``None``.
    """
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        return _parse_ipv6(text[1:-1])
    if ":" in text:
        return _parse_ipv6(text)
    if not text or not text.isascii():
        return None
    return _parse_ipv4(text)


def parse_ip_literal(host: str) -> tuple[str, str] | None:
    """``(normalised_address, form)`` when ``host`` is an IP literal, else ``None``."""
    parsed = parse_ip(host)
    return None if parsed is None else (parsed.address, parsed.form)


def effective_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host reaches, with an embedded IPv4 address taken out of its IPv6 form.

    ``0x7f.1``, ``2130706433`` and ``[::ffff:127.0.0.1]`` all give ``127.0.0.1``, so that
    loopback tests and CIDR lists see one host whatever the spelling.
    """
    parsed = parse_ip(host)
    if parsed is None:
        return None
    if parsed.ipv4 is not None:
        return ipaddress.IPv4Address(parsed.ipv4)
    return ipaddress.IPv6Address(parsed.address)
