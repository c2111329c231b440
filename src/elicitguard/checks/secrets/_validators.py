"""Validators a candidate credential must pass: entropy, JWT structure, checksums.

Why: a regex finds shapes; these say whether the shape is a real credential (a JWT whose
header and payload decode to JSON objects, a GitHub/npm token whose CRC32 matches, a PyPI
macaroon whose location is pypi.org). They run on the community catalogue's findings too.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Final

import orjson

from elicitguard.checks.secrets._placeholders import is_placeholder

_XLOGX: Final = tuple([0.0] + [c * math.log2(c) for c in range(1, 4097)])


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for the empty string)."""
    if not value:
        return 0.0
    size = len(value)
    counts = Counter(value).values()
    if size < len(_XLOGX):
        # H = log2(n) - sum(c * log2(c)) / n, with c * log2(c) looked up (hot path).
        return max(0.0, math.log2(size) - math.fsum(map(_XLOGX.__getitem__, counts)) / size)
    return -sum(c / size * math.log2(c / size) for c in counts)


def _b64decode(text: str) -> bytes | None:
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return None


_BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62_crc32(text: str) -> str:
    """The 6-character base62 CRC32 that GitHub and npm tokens end with."""
    number = binascii.crc32(text.encode("ascii"))
    digits = ""
    while number:
        number, rest = divmod(number, 62)
        digits = _BASE62[rest] + digits
    return digits.rjust(6, "0")


def _check_jwt(secret: str) -> bool:
    parts = secret.split(".")
    if len(parts) not in (2, 3):
        return False  # two parts: unsigned, or its signature cut off (still a bearer token)
    header, payload = (_b64decode(p) for p in parts[:2])
    if header is None or payload is None:
        return False
    try:
        head = orjson.loads(header)
        body = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return False
    return isinstance(head, dict) and "alg" in head and isinstance(body, dict)


def _check_pypi(secret: str) -> bool:
    raw = _b64decode(secret.removeprefix("pypi-")[:64])
    if raw is None or len(raw) < 4 or raw[0] != 2 or raw[1] != 1:
        return False
    location = raw[3 : 3 + raw[2]]
    return location.endswith(b"pypi.org")


def _check_discord(secret: str) -> bool:
    """The first segment is a base64 snowflake id: mostly decimal digits (a few damaged
    bytes, as in hand-edited examples, still leave the token's shape unmistakable)."""
    raw = _b64decode(secret.split(".", 1)[0])
    if raw is None or not 15 <= len(raw) <= 21:
        return False
    return sum(48 <= b <= 57 for b in raw) >= len(raw) - 4


def _check_url_password(secret: str) -> bool:
    """Not a placeholder, and not a port read as a password (``host:8000";…@…``)."""
    return not is_placeholder(secret) and not _PORT_RE.fullmatch(secret)


_PORT_RE: Final = re.compile(r"[0-9]{1,5}[\"';,)\]]+")


_STRUCTURES: Final[dict[str, Callable[[str], bool]]] = {
    "jwt": _check_jwt,
    "pypi-macaroon": _check_pypi,
    "discord-token": _check_discord,
    "url-password": _check_url_password,
}


def _check_github_crc32(secret: str) -> bool:
    body = secret.split("_", 1)[1] if "_" in secret else secret
    return len(body) > 6 and base62_crc32(body[:-6]) == body[-6:]


_CHECKSUMS: Final[dict[str, Callable[[str], bool]]] = {"github-crc32": _check_github_crc32}
