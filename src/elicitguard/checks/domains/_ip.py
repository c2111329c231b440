"""IP literal recognition with the WHATWG URL parser's IPv4 number rules.

Why: browsers resolve ``http://3232235777``, ``http://0x7f.1`` and ``http://0177.0.0.1`` to
real addresses (192.168.1.1, 127.0.0.1, 127.0.0.1).  Those forms hide the destination from a
person reading a consent screen, so we recognise every form a browser accepts, return the
normalised dotted quad, and say which form was used.  The form names:

* ``dotted``: four decimal parts without leading zeros (the canonical form);
* ``decimal``: decimal parts only, fewer than four (``3232235777``, ``127.1``);
* ``octal`` / ``hex``: at least one part in that radix, the others decimal;
* ``mixed``: both octal and hexadecimal parts;
* ``ipv6``: a bracketed or bare IPv6 address (normalised compressed form).
"""

from __future__ import annotations

import ipaddress

__all__ = ["parse_ip_literal"]

_DIGITS = {
    8: frozenset("01234567"),
    10: frozenset("0123456789"),
    16: frozenset("0123456789abcdefABCDEF"),
}


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


def _parse_ipv4(host: str) -> tuple[str, str] | None:
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
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
    return dotted, form


def parse_ip_literal(host: str) -> tuple[str, str] | None:
    """Return ``(normalised_address, form)`` if ``host`` is an IP literal, else ``None``.

    ``host`` is the ASCII host after UTS 46 mapping (so full-width digits are already ASCII).
    """
    if host.startswith("[") and host.endswith("]"):
        try:
            return ipaddress.IPv6Address(host[1:-1]).compressed, "ipv6"
        except ValueError:
            return None
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host).compressed, "ipv6"
        except ValueError:
            return None
    return _parse_ipv4(host)
