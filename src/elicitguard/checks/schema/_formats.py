"""String formats of the restricted schema (email, uri, date, date-time), as values are checked."""

from __future__ import annotations

import datetime
import re
from typing import Final

# --------------------------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------------------------

_EMAIL_RE: Final = re.compile(
    r"[^@\s\x00-\x1f\x7f]+@(?:\[[^\[\]\s]+\]|[^@\s\x00-\x1f\x7f.\[\]]+(?:\.[^@\s\x00-\x1f\x7f.\[\]]+)*)"
)
_URI_RE: Final = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*"
)
_DATE_RE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATE_TIME_RE: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|[+\-]([0-9]{2}):([0-9]{2}))"
)
_EMAIL_MAX: Final = 320


def _valid_date(year: str, month: str, day: str) -> bool:
    """A real calendar date (leap years included)."""
    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def _is_email(value: str) -> bool:
    """Light syntax: one ``@``, a non-empty local part, dotted labels or an address literal."""
    return len(value) <= _EMAIL_MAX and _EMAIL_RE.fullmatch(value) is not None


def _is_uri(value: str) -> bool:
    """An absolute URI (RFC 3986): a scheme, then only URI characters or ``%XX`` escapes."""
    return _URI_RE.fullmatch(value) is not None


def _is_date(value: str) -> bool:
    """RFC 3339 ``full-date``: ``YYYY-MM-DD`` and a valid calendar date."""
    match = _DATE_RE.fullmatch(value)
    return match is not None and _valid_date(*match.group(1, 2, 3))


def _is_date_time(value: str) -> bool:
    """RFC 3339 ``date-time``: date, ``T``, time with seconds, and ``Z`` or an offset."""
    match = _DATE_TIME_RE.fullmatch(value)
    if match is None or not _valid_date(*match.group(1, 2, 3)):
        return False
    hour, minute, second = (int(g) for g in match.group(4, 5, 6))
    if hour > 23 or minute > 59 or second > 60:  # 60: a leap second
        return False
    off_hour, off_minute = match.group(7, 8)
    return off_hour is None or (int(off_hour) <= 23 and int(off_minute) <= 59)


_FORMAT_CHECKS: Final = {
    "email": _is_email,
    "uri": _is_uri,
    "date": _is_date,
    "date-time": _is_date_time,
}
