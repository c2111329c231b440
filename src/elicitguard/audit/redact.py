"""The one redaction boundary every sink sits behind.

Records are built from metadata only, so nothing secret should reach here; this boundary
is the second line. It replaces the values of sensitive keys anywhere in an event with a
marker, and masks anything in a string that the secret catalogue recognises. It is
idempotent (redacting twice changes nothing more) and total (every string is visited).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from elicitguard.checks import secrets

__all__ = ["GENERATED_TEXT", "REDACTED", "SENSITIVE_KEYS", "Redactor", "redact_value"]

REDACTED = "[REDACTED]"
#: What a value elicitguard generates looks like (ids, keyed hashes, times).
GENERATED_TEXT = re.compile(r"[0-9A-Za-z:._+-]{0,80}")
_GENERATED = GENERATED_TEXT

#: Keys whose values are never written, at any depth (compared case-insensitively).
SENSITIVE_KEYS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api_key",
        "apikey",
        "password",
        "passwd",
        "secret",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "client_secret",
        "requeststate",
        "request_state",
        "content",
        "value",
        "values",
        "default",
        "arguments",
        "inputresponses",
        "structuredcontent",
        "contents",
    }
)


def _no_scan(text: str) -> list[tuple[int, int]]:
    return []


class Redactor:
    """Callable redaction with an optional text scanner returning spans to mask."""

    __slots__ = ("_scan",)

    def __init__(self, scan: Callable[[str], list[tuple[int, int]]] | None = None) -> None:
        self._scan = scan or _DEFAULT_SCAN

    def __call__(self, value: Any) -> Any:
        return redact_value(value, self._scan)

    def finds_secret(self, text: str) -> bool:
        """True when the scanner recognises a secret anywhere in ``text``."""
        return bool(self._scan(text))

    def keep_shape(self, value: Any) -> Any:
        """Like calling the redactor, but a sensitive key keeps its value's structure.

        Recordings are linted later: an answer's ``content`` must stay an object with the
        same keys and JSON types for the shape rules to judge it, while every leaf under a
        sensitive key is replaced (strings by the marker, numbers by 0, booleans by false).
        """
        return _keep_shape(value, self._scan)


#: Keys whose values elicitguard itself generates (ids, hashes, times): never scanned.
GENERATED_KEYS = frozenset(
    {"ts", "decision_id", "fingerprint", "value_fingerprint", "revision", "session", "sub", "seq"}
)


def redact_value(value: Any, scan: Callable[[str], list[tuple[int, int]]] = _no_scan) -> Any:
    """Return ``value`` with sensitive keys replaced and recognised secrets masked."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            key = str(k).lower()
            if key in SENSITIVE_KEYS and v is not None:
                out[k] = REDACTED
            elif (
                key in GENERATED_KEYS and isinstance(v, (str, int)) and _GENERATED.fullmatch(str(v))
            ):
                out[k] = v
            else:
                out[k] = redact_value(v, scan)
        return out
    if isinstance(value, (list, tuple)):
        return [redact_value(v, scan) for v in value]
    if isinstance(value, str):
        return _mask(value, scan)
    return value


#: Sensitive keys that hold answers rather than values: their sensitive parts are deeper.
_STRUCTURAL = frozenset({"inputresponses"})


def _keep_shape(value: Any, scan: Callable[[str], list[tuple[int, int]]]) -> Any:
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            key = str(k).lower()
            if key in SENSITIVE_KEYS and key not in _STRUCTURAL and v is not None:
                out[k] = _blank(v)
            else:
                out[k] = _keep_shape(v, scan)
        return out
    if isinstance(value, (list, tuple)):
        return [_keep_shape(v, scan) for v in value]
    if isinstance(value, str):
        return _mask(value, scan)
    return value


def _blank(value: Any) -> Any:
    """Every leaf of ``value`` replaced, containers and JSON types kept."""
    if isinstance(value, Mapping):
        return {k: _blank(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_blank(v) for v in value]
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return 0
    if value is None:
        return None
    return REDACTED


def _mask(text: str, scan: Callable[[str], list[tuple[int, int]]]) -> str:
    if len(text) < 8 or text == REDACTED:
        return text
    spans = _cached_scan(text, scan) if len(text) <= 512 else scan(text)
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in sorted(spans):
        if start < last:
            start = last
        if start >= end:
            continue
        out.append(text[last:start])
        out.append(REDACTED)
        last = end
    out.append(text[last:])
    return "".join(out)


@lru_cache(maxsize=8192)
def _cached_scan(
    text: str, scan: Callable[[str], list[tuple[int, int]]]
) -> tuple[tuple[int, int], ...]:
    """Record metadata repeats (codes, field names, pointers): scan each string once."""
    return tuple(scan(text))


def _default_scanner() -> Callable[[str], list[tuple[int, int]]]:
    """The secret catalogue's scanner (a plain import: a redactor that scans nothing is a leak)."""
    scan_text = secrets.scan_text

    def scan(text: str) -> list[tuple[int, int]]:
        return [(m.start, m.end) for m in scan_text(text)]

    return scan


_DEFAULT_SCAN = _default_scanner()
