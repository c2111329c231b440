"""Tests for the PII detectors: validated candidates only, key-name context raises confidence."""

from __future__ import annotations

import pytest

from elicitguard.checks.pii import pii_context, scan_pii


def kinds(value: str, key: str | None = None) -> set[str]:
    return {m.type for m in scan_pii(value, key)}


@pytest.mark.parametrize(
    ("value", "key", "expected"),
    [
        ("jane.doe@gmail.com", None, "email"),
        ("j.o+tag@sub.example.co.uk", None, "email"),  # plus tag, multi-label suffix
        ("contact: jane@corp.io please", None, "email"),  # inside text
        ("+14155552671", None, "phone"),  # E.164
        ("+44 20 7946 0958", None, "phone"),  # spaced international
        ("(415) 555-2671", "phone", "phone"),  # national format with context
        ("4155552671", "mobile", "phone"),  # context only
        ("4111111111111111", None, "card_number"),  # Visa test number, Luhn-valid
        ("5500 0000 0000 0004", None, "card_number"),  # Mastercard, spaced
        ("3782 822463 10005", None, "card_number"),  # Amex 15 digits
        ("6011000990139424", "card_number", "card_number"),  # Discover
        ("DE89370400440532013000", None, "iban"),
        ("GB82 WEST 1234 5698 7654 32", None, "iban"),  # spaced IBAN
        ("fr1420041010050500013m02606", None, "iban"),  # lower-case IBAN
        ("536-90-4399", None, "us_ssn"),  # dashed SSN
        ("536904399", "ssn", "us_ssn"),  # bare SSN with context
        ("RSSMRA85T10A562S", None, "it_codice_fiscale"),
        ("12345678Z", None, "es_dni"),
        ("131052-308T", None, "fi_hetu"),
        ("44051401458", "pesel", "pl_pesel"),
        ("111222333", "bsn", "nl_bsn"),
        ("1984-07-12", "dob", "date_of_birth"),
        ("12/07/1984", "birthDate", "date_of_birth"),
        ("Jane", "first_name", "person_name"),
        ("221B Baker Street", "street_address", "street_address"),
        ("8.8.8.8", "client_ip", "ip_address"),
    ],
)
def test_detects(value, key, expected):
    assert expected in kinds(value, key)


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("logo@2x.png", None),  # retina asset
        ("pkg@1.2.3", None),  # package version
        ("git@github.com", None),  # SSH remote user
        ("user@localhost", None),  # no public TLD
        ("4111111111111112", None),  # Luhn fails
        ("1234567812345678", None),  # Luhn fails / no IIN
        ("0000000000000000", None),  # all same digits
        ("4111111111111111", "order_id"),  # id-like key: not a card
        ("123456789012345678", "channel_id"),  # snowflake id
        ("1700000000000", None),  # epoch millis
        ("DE89370400440532013001", None),  # IBAN mod-97 fails
        ("078-05-1120", None),  # Woolworth sample SSN
        ("000-12-3456", None),  # area 000
        ("666-12-3456", None),  # area 666
        ("123-00-4567", None),  # group 00
        ("123-45-0000", None),  # serial 0000
        ("123-45 6789", None),  # mismatched delimiters
        ("536904399", None),  # bare 9 digits without context
        ("44051401458", None),  # PESEL without context
        ("12345", "phone"),  # too short for a phone
        ("+1234", None),  # not a valid number
        ("2024-13-45", "dob"),  # impossible date
        ("2024-01-15", None),  # a date without context
        ("550e8400-e29b-41d4-a716-446655440000", None),  # UUID
        ("9f2b6c1e0d3a4b5c6d7e8f90a1b2c3d4e5f60718", None),  # git SHA
        ("10.0.0.1", "client_ip"),  # private address
        ("${FIRST_NAME}", "first_name"),  # template
        ("v1.2.3", None),  # version
    ],
)
def test_ignores(value, key):
    assert scan_pii(value, key) == []


def test_context_raises_confidence():
    assert [m.confidence for m in scan_pii("jane@corp.io")] == ["medium"]
    assert [m.confidence for m in scan_pii("jane@corp.io", "email")] == ["high"]
    assert [m.confidence for m in scan_pii("+14155552671", "phone")] == ["high"]


@pytest.mark.parametrize(
    ("key", "family"),
    [
        ("email", "email"),
        ("userEmail", "email"),
        ("login_hint", "email"),
        ("phoneNumber", "phone"),
        ("msisdn", "phone"),
        ("ssn", "ssn"),
        ("dob", "dob"),
        ("last_name", "person_name"),
        ("page", None),
        ("q", None),
        (None, None),
    ],
)
def test_pii_context(key, family):
    assert pii_context(key) == family


def test_repr_hides_value():
    (match,) = scan_pii("jane.doe@gmail.com")
    assert "jane" not in repr(match)


@pytest.mark.parametrize(
    ("value", "key", "expected"),
    [
        ("4111-1111-1111-1111", "ref", "card_number"),  # printed groups under a neutral name
        ("4111 1111 1111 1111", "order_id", "card_number"),
        ("3782-822463-10005", "ref", "card_number"),  # Amex groups
        ("DE89370400440532013000", "ref", "iban"),
        ("536-90-4399", "ref", "us_ssn"),
        ("+14155552671", "ref", "phone"),
        ("jane.doe@gmail.com", "user_id", "email"),
    ],
)
def test_shapes_found_under_id_like_names(value, key, expected):
    assert expected in kinds(value, key)


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("4111111111111111", "ref"),  # a bare number under an id-like name stays an id
        ("4111-1111-1111-1112", "ref"),  # grouped but Luhn fails
        ("1733011200", "ts"),  # timestamp
        ("2024-0001-0002-0003", "order_id"),  # grouped, not a card prefix or Luhn
        ("550e8400-e29b-41d4-a716-446655440000", "id"),  # UUID
    ],
)
def test_id_like_names_stay_quiet(value, key):
    assert scan_pii(value, key) == []
