"""PII detection for single values: emails, phones, cards, IBANs, SSNs, national ids.

Why: URL-01 forbids personal data in the URLs that servers send users to, and other rules
reuse the same detectors on form content. Personal data detectors are noisy unless every
candidate is validated, so each detector here follows Presidio's shape (candidate regex,
validation that can invalidate, key-name context that raises confidence) with the
well-kept libraries doing the validation: ``phonenumbers`` for phones and
``python-stdnum`` for Luhn, IBAN mod-97, US SSN ranges and national ids. A failing
checksum means no finding; numbers that are only plausible with context (bare 9-digit
SSNs, 11-digit national ids, phones without ``+``) need a key name such as ``ssn`` or
``phone`` (:mod:`elicitguard.checks.pii_keys`). Nothing here logs or raises with a value.
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib
import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import phonenumbers
from stdnum import iban as _iban
from stdnum import luhn as _luhn
from stdnum.us import ssn as _us_ssn

from elicitguard.checks.pii_keys import id_like, pii_context
from elicitguard.checks.secrets import is_placeholder
from elicitguard.checks.urls import is_known_tld

__all__ = ["PiiMatch", "pii_context", "scan_pii"]


@dataclass(frozen=True, slots=True)
class PiiMatch:
    """One piece of personal data. ``value`` is used only for a keyed fingerprint."""

    type: str
    value: str
    confidence: str

    def __repr__(self) -> str:
        """Keep personal data out of reprs and assertion messages."""
        return f"PiiMatch(type={self.type!r}, value=<{len(self.value)} chars>, confidence={self.confidence!r})"


# --------------------------------------------------------------------------- emails


_EMAIL_RE: Final = re.compile(
    r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@"
    r"((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24}))(?![A-Za-z0-9-])"
)
_NON_PERSONAL_LOCALS: Final = frozenset(
    {"git", "noreply", "no-reply", "donotreply", "mailer-daemon"}
)


def _emails(value: str, context: str | None) -> Iterator[PiiMatch]:
    for match in _EMAIL_RE.finditer(value):
        local, _domain, tld = match.groups()
        if not is_known_tld(tld) or local.lower() in _NON_PERSONAL_LOCALS:
            continue
        if is_placeholder(match.group(0)) and "@" not in match.group(0):
            continue
        yield PiiMatch("email", match.group(0), "high" if context == "email" else "medium")


# --------------------------------------------------------------------------- phones

_PHONE_CANDIDATE_RE: Final = re.compile(r"^\+?[0-9][0-9 ().-]{6,20}[0-9]$")
_PHONE_REGIONS: Final = ("US", "GB", "DE", "FR", "IN", "CA", "BR", "AU", "ES", "IT", "NL", "JP")


def _phones(value: str, context: str | None) -> Iterator[PiiMatch]:
    text = value.strip()
    if context == "phone" or text.startswith("+"):
        if not _PHONE_CANDIDATE_RE.match(text):
            yield from _phones_in_text(value, context)
            return
        regions: tuple[str | None, ...] = (None,) if text.startswith("+") else _PHONE_REGIONS
        for region in regions:
            try:
                number = phonenumbers.parse(text, region)
            except phonenumbers.NumberParseException:
                continue
            if phonenumbers.is_valid_number(number):
                yield PiiMatch("phone", text, "high" if context == "phone" else "medium")
                return
    elif "+" in text:
        yield from _phones_in_text(value, context)


def _phones_in_text(value: str, context: str | None) -> Iterator[PiiMatch]:
    if not re.search(r"\+[0-9]", value) and context != "phone":
        return
    region = "US" if context == "phone" else None
    matcher = phonenumbers.PhoneNumberMatcher(value, region, leniency=phonenumbers.Leniency.VALID)
    for found in matcher:
        if found.raw_string.lstrip().startswith("+") or context == "phone":
            yield PiiMatch("phone", found.raw_string, "high" if context == "phone" else "medium")


# --------------------------------------------------------------------------- cards, IBAN

_CARD_RE: Final = re.compile(r"(?<![0-9])(?:[0-9][ -]?){11,18}[0-9](?![0-9])")
_CARD_PREFIXES: Final = re.compile(
    r"^(?:4|5[1-5]|2(?:2[2-9][1-9]|2[3-9]|[3-6]|7[01]|720)|3[47]|3(?:0[0-5]|[68])|6(?:011|5|4[4-9])"
    r"|35(?:2[89]|[3-8])|62|5[06-9]|6[0-9])"
)


def _card_ok(digits: str, context: str | None) -> bool:
    if len(set(digits)) == 1 or not _CARD_PREFIXES.match(digits):
        return False
    if context != "card" and not (
        len(digits) == 16 or (len(digits) == 15 and digits[:2] in {"34", "37"})
    ):
        return False
    return bool(_luhn.is_valid(digits))


def _cards(value: str, context: str | None) -> Iterator[PiiMatch]:
    for match in _CARD_RE.finditer(value):
        raw = match.group(0)
        digits = re.sub(r"[ -]", "", raw)
        if 12 <= len(digits) <= 19 and _card_ok(digits, context):
            yield PiiMatch("card_number", raw, "high" if context == "card" else "medium")


_IBAN_RE: Final = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2}(?: ?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])"
)


def _ibans(value: str, context: str | None) -> Iterator[PiiMatch]:
    for match in _IBAN_RE.finditer(value):
        raw = match.group(0)
        compact = raw.replace(" ", "").upper()
        if _iban.is_valid(compact):
            yield PiiMatch("iban", raw, "high")


# --------------------------------------------------------------------------- SSN

_SSN_DASHED_RE: Final = re.compile(r"(?<![0-9-])([0-9]{3})([- ])([0-9]{2})\2([0-9]{4})(?![0-9-])")
_SSN_BARE_RE: Final = re.compile(r"(?<![0-9])[0-9]{9}(?![0-9])")
_SSN_SAMPLES: Final = frozenset({"123456789", "078051120", "219099999", "111111111"})


def _ssn_valid(digits: str) -> bool:
    return digits not in _SSN_SAMPLES and bool(_us_ssn.is_valid(digits))


def _ssns(value: str, context: str | None) -> Iterator[PiiMatch]:
    for match in _SSN_DASHED_RE.finditer(value):
        digits = match.group(1) + match.group(3) + match.group(4)
        if _ssn_valid(digits):
            yield PiiMatch("us_ssn", match.group(0), "high" if context == "ssn" else "medium")
    if context == "ssn":
        for match in _SSN_BARE_RE.finditer(value):
            if _ssn_valid(match.group(0)):
                yield PiiMatch("us_ssn", match.group(0), "high")


# --------------------------------------------------------------------------- national ids


@dataclass(frozen=True, slots=True)
class _NationalId:
    type: str
    module: str
    pattern: re.Pattern[str]
    needs_context: bool


def _nid(kind: str, module: str, pattern: str, needs_context: bool) -> _NationalId:
    return _NationalId(
        kind, module, re.compile(rf"(?<![A-Za-z0-9]){pattern}(?![A-Za-z0-9])"), needs_context
    )


# Distinctive shapes with a checksum (and often a birth date) are reported without context;
# all-digit ids that collide with ordinary numbers need a key name such as ``national_id``.
_NATIONAL_IDS: Final = (
    _nid(
        "it_codice_fiscale",
        "stdnum.it.codicefiscale",
        r"[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]",
        False,
    ),
    _nid("es_dni", "stdnum.es.dni", r"[0-9]{8}-?[A-Z]", False),
    _nid("es_nie", "stdnum.es.nie", r"[XYZ]-?[0-9]{7}-?[A-Z]", False),
    _nid("fi_hetu", "stdnum.fi.hetu", r"[0-9]{6}[-+A-FU-Y][0-9]{3}[0-9A-Y]", False),
    _nid("se_personnummer", "stdnum.se.personnummer", r"(?:[0-9]{2})?[0-9]{6}[-+][0-9]{4}", False),
    _nid("kr_rrn", "stdnum.kr.rrn", r"[0-9]{6}-[0-9]{7}", False),
    _nid("cn_ric", "stdnum.cn.ric", r"[0-9]{17}[0-9X]", False),
    _nid("sg_nric", "stdnum.sg.uen", r"[STFGM][0-9]{7}[A-Z]", True),
    _nid("mx_curp", "stdnum.mx.curp", r"[A-Z]{4}[0-9]{6}[HM][A-Z]{5}[0-9A-Z][0-9]", False),
    _nid("br_cpf", "stdnum.br.cpf", r"[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}", False),
    _nid("br_cpf", "stdnum.br.cpf", r"[0-9]{11}", True),
    _nid("in_aadhaar", "stdnum.in_.aadhaar", r"[2-9][0-9]{3} ?[0-9]{4} ?[0-9]{4}", True),
    _nid("pl_pesel", "stdnum.pl.pesel", r"[0-9]{11}", True),
    _nid("nl_bsn", "stdnum.nl.bsn", r"[0-9]{9}", True),
    _nid("be_nn", "stdnum.be.nn", r"[0-9]{2}\.?[0-9]{2}\.?[0-9]{2}-?[0-9]{3}\.?[0-9]{2}", True),
    _nid(
        "fr_nir",
        "stdnum.fr.nir",
        r"[12][0-9]{2}(?:0[1-9]|1[0-2])[0-9]{2}[0-9AB][0-9]{7}[0-9]{2}",
        True,
    ),
    _nid("no_fodselsnummer", "stdnum.no.fodselsnummer", r"[0-9]{11}", True),
    _nid("dk_cpr", "stdnum.dk.cpr", r"[0-9]{6}-?[0-9]{4}", True),
    _nid("ca_sin", "stdnum.ca.sin", r"[0-9]{3}[ -]?[0-9]{3}[ -]?[0-9]{3}", True),
    _nid("za_idnr", "stdnum.za.idnr", r"[0-9]{13}", True),
    _nid("il_idnr", "stdnum.il.idnr", r"[0-9]{9}", True),
    _nid("tr_tckimlik", "stdnum.tr.tckimlik", r"[1-9][0-9]{10}", True),
    _nid("gb_nhs", "stdnum.gb.nhs", r"[0-9]{3} ?[0-9]{3} ?[0-9]{4}", True),
    _nid("au_tfn", "stdnum.au.tfn", r"[0-9]{3} ?[0-9]{3} ?[0-9]{2,3}", True),
    _nid("de_idnr", "stdnum.de.idnr", r"[0-9]{11}", True),
    _nid("us_itin", "stdnum.us.itin", r"9[0-9]{2}-?[0-9]{2}-?[0-9]{4}", True),
)


@functools.cache
def _validator(module: str) -> Callable[[str], bool] | None:
    try:
        loaded = importlib.import_module(module)
    except ImportError:
        return None
    check = getattr(loaded, "is_valid", None)
    return check if callable(check) else None


_CONTEXT_FREE_IDS: Final = tuple(spec for spec in _NATIONAL_IDS if not spec.needs_context)


def _national_ids(value: str, context: str | None) -> Iterator[PiiMatch]:
    seen: set[str] = set()
    specs = _NATIONAL_IDS if context in {"national_id", "ssn"} else _CONTEXT_FREE_IDS
    for spec in specs:
        validate = _validator(spec.module)
        if validate is None:
            continue
        for match in spec.pattern.finditer(value):
            raw = match.group(0)
            if raw in seen or not validate(raw):
                continue
            seen.add(raw)
            yield PiiMatch(spec.type, raw, "high" if context == "national_id" else "medium")
            break


# --------------------------------------------------------------------------- context-only


_DATE_RE: Final = re.compile(
    r"^([0-9]{4})[-/.]([0-9]{1,2})[-/.]([0-9]{1,2})$|^([0-9]{1,2})[-/.]([0-9]{1,2})[-/.]([0-9]{4})$"
)


def _birth_date(value: str) -> bool:
    match = _DATE_RE.match(value.strip())
    if not match:
        return False
    if match.group(1):
        year, first, second = int(match.group(1)), int(match.group(2)), int(match.group(3))
    else:
        year, first, second = int(match.group(6)), int(match.group(4)), int(match.group(5))
    for month, day in ((first, second), (second, first)):
        try:
            _dt.date(year, month, day)
        except ValueError:
            continue
        return 1900 <= year <= _dt.date.today().year
    return False


_WORDS_RE: Final = re.compile(r"^[^\W\d_][^\W\d_'’. -]*(?:[ '’.-]+[^\W\d_]+)*\.?$")


def _context_only(value: str, context: str | None) -> Iterator[PiiMatch]:
    text = value.strip()
    if not text or (context in {"person_name", "address"} and is_placeholder(text)):
        return
    if context == "dob" and _birth_date(text):
        yield PiiMatch("date_of_birth", text, "high")
    elif context == "person_name" and _WORDS_RE.match(text) and len(text) >= 2:
        yield PiiMatch("person_name", text, "medium")
    elif context == "address" and re.search(r"[^\W\d_]", text) and len(text) >= 5:
        yield PiiMatch("street_address", text, "medium")
    elif context == "ip_address":
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            return
        if address.is_global:
            yield PiiMatch("ip_address", text, "medium")


# --------------------------------------------------------------------------- entry point

_DETECTORS: Final[tuple[Callable[[str, str | None], Iterator[PiiMatch]], ...]] = (
    _emails,
    _ibans,
    _cards,
    _ssns,
    _national_ids,
    _phones,
    _context_only,
)
_MAX_VALUE: Final = 4096
_UUID_RE: Final = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z"
)


def _min_width(pattern: re.Pattern[str]) -> int:
    parser: Any = importlib.import_module("re._parser")  # private: only its width is used
    return int(parser.parse(pattern.pattern).getwidth()[0])


# The shortest match of the detectors that need no key context, ``@`` or ``+``.
_MIN_NUMBER_SHAPE: Final = min(
    _min_width(p)
    for p in (_IBAN_RE, _CARD_RE, _SSN_DASHED_RE, *(s.pattern for s in _CONTEXT_FREE_IDS))
)
_ASCII_ALNUM_RE: Final = re.compile(r"[A-Za-z0-9]")
_ASCII_DIGIT_RE: Final = re.compile(r"[0-9]")


# Under an id-like key (``ref``, ``order_id``) only shapes no counter or order number has
# are reported: an e-mail, an IBAN (mod-97), a dashed SSN, a ``+`` phone number and a card
# number written in its printed groups (Luhn-valid, ``4111-1111-1111-1111``).
_GROUPED_CARD_RE: Final = re.compile(
    r"^(?:[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{4}(?:-[0-9]{1,3})?"
    r"|[0-9]{4} [0-9]{4} [0-9]{4} [0-9]{4}(?: [0-9]{1,3})?"
    r"|[0-9]{4}-[0-9]{6}-[0-9]{5}|[0-9]{4} [0-9]{6} [0-9]{5})$"
)


def _shaped_under_id_key(detector: Callable[..., Any], match: PiiMatch, value: str) -> bool:
    if detector in (_emails, _ibans, _ssns):
        return True
    if detector is _cards:
        return _GROUPED_CARD_RE.match(match.value) is not None
    return detector is _phones and value.lstrip().startswith("+")


@functools.lru_cache(maxsize=16384)
def _scan_cached(value: str, key_name: str | None) -> tuple[PiiMatch, ...]:
    context = pii_context(key_name)
    numeric_ok = context is not None or not id_like(key_name)
    found: list[PiiMatch] = []
    for detector in _DETECTORS:
        if not numeric_ok and detector in (_national_ids, _context_only):
            continue
        for match in detector(value, context):
            if not numeric_ok and not _shaped_under_id_key(detector, match, value):
                continue
            if not any(match.value in f.value or f.value in match.value for f in found):
                found.append(match)
    return tuple(found)


_DIGIT_TRIPLE_RE: Final = re.compile(r"[0-9](?:[0-9]{2}|[ -][0-9])")
_LETTER_SHAPE_RE: Final = re.compile(r"(?<![A-Za-z0-9])(?:[A-Za-z]{2}[0-9]{2}|[A-Z]{6})")
#: The fewest ASCII digits a context-free number shape other than the IBAN and the codice
#: fiscale holds (``es_nie`` and ``mx_curp``: seven).
_MIN_SHAPE_DIGITS: Final = 7


def _may_hold_number_shape(value: str) -> bool:
    """False when no detector that runs without ``@``, ``+`` or a key's context can match.

    Why: random tokens (``state``, ``code_challenge``, ``eg_bind``) hold a few digits, and
    each used to run every card, SSN and national-id pattern. Those patterns need seven
    ASCII digits or more, three of them in a row or split by one space or dash (a card's
    first three digits, ``[0-9]{3}`` in every other); the IBAN needs two letters and two
    digits where a word starts, and the codice fiscale six capitals there. Phones and the
    context-only detectors need a ``+`` or a context, which the caller has ruled out.
    """
    if _LETTER_SHAPE_RE.search(value):
        return True
    digits = sum(map(value.count, "0123456789"))
    return digits >= _MIN_SHAPE_DIGITS and _DIGIT_TRIPLE_RE.search(value) is not None


def scan_pii(value: str, key_name: str | None = None) -> list[PiiMatch]:
    """Personal data in one value, using ``key_name`` (``email``, ``phone``, ``ssn`` …) as context.

    Values under id-like keys (``*_id``, ``ref``, ``timestamp``) are checked only for shapes
    no order number or snowflake id has (e-mails, IBANs, dashed SSNs, ``+`` phones, cards in
    printed groups), so that bare numbers there are never read as cards or phones.
    """
    if not value or len(value) > _MAX_VALUE:
        return []
    if value.isascii():
        # Same tests as below, in C: most URL components are short ASCII.
        has_alnum = _ASCII_ALNUM_RE.search(value) is not None
        has_digit = has_alnum and _ASCII_DIGIT_RE.search(value) is not None
    else:
        has_alnum = any(c.isalnum() for c in value)
        has_digit = any(c.isdigit() for c in value)
    if not has_alnum:
        return []
    plain = "@" not in value and pii_context(key_name) is None
    if plain and not has_digit:
        return []
    # Without a telling key, an ``@`` or a ``+`` only the number-shaped detectors run, and
    # none matches in fewer characters than the shortest of them or inside a canonical
    # UUID (an identifier, never personal data).
    if plain and "+" not in value:
        if len(value) < _MIN_NUMBER_SHAPE or _UUID_RE.match(value):
            return []
        if not _may_hold_number_shape(value):
            return []
    return list(_scan_cached(value, key_name))
