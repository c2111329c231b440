"""What a key name says about the personal data under it (the context of PII detection).

Why: numbers that are only plausible with context (bare 9-digit SSNs, 11-digit national
ids, phones without ``+``) need a key name such as ``ssn`` or ``phone``, and a value under
an identifier key (``user_id``) is not a phone number however it is shaped. The word
tables live here, beside the two questions asked of them.
"""

from __future__ import annotations

import functools
from typing import Final

from elicitguard.checks.secrets import normalize_key_name

__all__ = ["id_like", "pii_context"]

_CONTEXT_WORDS: Final[dict[str, frozenset[str]]] = {
    "email": frozenset({"email", "mail", "e_mail", "emailaddress", "login_hint", "recipient"}),
    "phone": frozenset(
        {
            "phone",
            "tel",
            "telephone",
            "mobile",
            "cell",
            "msisdn",
            "sms",
            "whatsapp",
            "fax",
            "phone_number",
            "phonenumber",
            "mobile_number",
            "cellphone",
        }
    ),
    "card": frozenset(
        {
            "card",
            "cc",
            "pan",
            "card_number",
            "cardnumber",
            "ccnum",
            "credit_card",
            "creditcard",
            "cc_number",
        }
    ),
    "ssn": frozenset({"ssn", "social_security", "social_security_number", "ssn_number", "itin"}),
    "national_id": frozenset(
        {
            "national_id",
            "nationalid",
            "nid",
            "id_number",
            "idnumber",
            "tax_id",
            "taxid",
            "tin",
            "nino",
            "nif",
            "nie",
            "dni",
            "cpf",
            "aadhaar",
            "pesel",
            "bsn",
            "personnummer",
            "hetu",
            "nric",
            "curp",
            "rrn",
            "sin",
            "tfn",
            "nhs",
            "nhs_number",
            "steuer_id",
            "codice_fiscale",
            "fiscal_code",
            "personal_id",
            "personal_number",
            "citizen_id",
            "resident_id",
        }
    ),
    "iban": frozenset({"iban", "bank_account", "account_number"}),
    "dob": frozenset({"dob", "birthdate", "birth_date", "date_of_birth", "birthday", "bday"}),
    "person_name": frozenset(
        {
            "first_name",
            "last_name",
            "full_name",
            "given_name",
            "family_name",
            "surname",
            "firstname",
            "lastname",
            "fullname",
            "middle_name",
            "maiden_name",
            "legal_name",
        }
    ),
    "address": frozenset(
        {
            "street",
            "street_address",
            "address_line1",
            "address_line_1",
            "address1",
            "home_address",
            "postal_address",
            "mailing_address",
            "billing_address",
        }
    ),
    "ip_address": frozenset(
        {"ip", "ip_address", "ipaddress", "client_ip", "remote_addr", "user_ip", "remote_ip"}
    ),
}
_ID_LIKE_TAILS: Final = frozenset(
    {
        "id",
        "ids",
        "count",
        "ts",
        "timestamp",
        "time",
        "version",
        "page",
        "offset",
        "limit",
        "size",
        "seq",
        "order",
        "ref",
    }
)


@functools.lru_cache(maxsize=4096)
def pii_context(key_name: str | None) -> str | None:
    """Which PII family a key name announces (``email``, ``phone`` …), if any."""
    if not key_name:
        return None
    normal = normalize_key_name(key_name)
    words = normal.split("_")
    for family, names in _CONTEXT_WORDS.items():
        if normal in names or words[-1] in names:
            return family
    return None


def id_like(key_name: str | None) -> bool:
    """The key name ends in an identifier word (``user_id``, ``ref``): its value is an id."""
    if not key_name:
        return False
    return normalize_key_name(key_name).split("_")[-1] in _ID_LIKE_TAILS
