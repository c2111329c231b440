"""Secrets known by their shape alone, in any field: a wallet seed phrase, a printed card.

Most credentials are known by a format a vendor chose (a prefix, a checksum). Two secrets a
user may paste into any box have none, yet a shape nothing harmless shares: a BIP39 recovery
phrase (12 to 24 words, every one from the standard's 2048-word list; the wordlists and the
checksum come from Trezor's ``mnemonic`` package, the reference implementation), and a payment
card number printed in its groups ("4539 1488 0343 6467": Luhn-valid, a known issuer). Ungrouped
digits need a field about cards (an order number can pass Luhn); processors' published test
cards are never live credentials.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from stdnum import luhn

from elicitguard.checks.secrets._types import SecretMatch

PUBLISHED_TEST_PANS: Final = frozenset(
    (
        "4111111111111111",
        "4242424242424242",
        "4012888888881881",
        "4000056655665556",
        "5555555555554444",
        "5105105105105100",
        "5200828282828210",
        "378282246310005",
        "371449635398431",
        "6011111111111117",
        "3530111333300000",
    )
)
"""Card numbers that payment processors publish for testing; never a live credential."""

_PHRASE_LENGTHS: Final = frozenset((12, 15, 18, 21, 24))
_LATIN_WORDLISTS: Final = ("english", "spanish", "french", "italian", "portuguese", "czech")
_GROUPED: Final = re.compile(r"^\d{4}(?:[ -]\d{4}){3}$|^\d{4}[ -]\d{6}[ -]\d{5}$")
_ISSUER: Final = re.compile(
    r"^(?:4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[47]|6(?:011|5|4[4-9])|35|3[068])"
)
"""Issuer prefixes: Visa, Mastercard (both ranges), American Express, Discover, JCB, Diners."""


@functools.cache
def _wordlists() -> tuple[tuple[str, frozenset[str]], ...]:
    """The BIP39 wordlists (loaded once, on the first phrase-shaped text)."""
    from mnemonic import Mnemonic

    return tuple((lang, frozenset(Mnemonic(lang).wordlist)) for lang in _LATIN_WORDLISTS)


def seed_phrase(text: str) -> SecretMatch | None:
    """A BIP39 recovery phrase: high confidence with a valid checksum, medium without.

    The phrase may stand alone, or be written as people note it down: numbered
    (``1. zoo 2. vault …``), with commas, and under or after a short label (``mnemonic:``,
    ``my seed words are …``, ``… (wallet backup)``): at most four other words.
    """
    words = text.casefold().split()
    if len(words) in _PHRASE_LENGTHS:
        found = _phrase(words)
        if found is not None:
            return SecretMatch("recovery-phrase", 0, len(text), text, found)
    if len(words) > _MAX_NOTED_WORDS:
        return None
    tokens = _LETTERS_RE.findall(text.casefold())
    for length in sorted(_PHRASE_LENGTHS, reverse=True):
        extra = len(tokens) - length
        if not 0 <= extra <= _MAX_LABEL_WORDS:
            continue
        for start in dict.fromkeys((extra, 0)):  # the label before the phrase, or after it
            found = _phrase(tokens[start : start + length])
            if found is not None:
                return SecretMatch("recovery-phrase", 0, len(text), text, found)
    return None


_MAX_LABEL_WORDS: Final = 4
#: A noted-down phrase of 24 words with numbers and a label has at most ~52 words.
_MAX_NOTED_WORDS: Final = 2 * max(_PHRASE_LENGTHS) + _MAX_LABEL_WORDS
_LETTERS_RE: Final = re.compile(r"[^\W\d_]+")


def _phrase(words: list[str]) -> str | None:
    """The confidence when ``words`` are a BIP39 phrase of one wordlist, else None."""
    if len(set(words)) < len(words) // 2:
        return None
    for lang, wordlist in _wordlists():
        if all(word in wordlist for word in words):
            from mnemonic import Mnemonic

            try:
                valid = Mnemonic(lang).check(" ".join(words))
            except (ValueError, LookupError):
                valid = False
            return "high" if valid else "medium"
    return None


def printed_card(text: str) -> SecretMatch | None:
    """A live-looking card number written in its printed groups."""
    stripped = text.strip()
    if _GROUPED.match(stripped) is None:
        return None
    digits = re.sub(r"[ -]", "", stripped)
    if digits in PUBLISHED_TEST_PANS or _ISSUER.match(digits) is None:
        return None
    if not luhn.is_valid(digits):
        return None
    return SecretMatch("payment-card-number", 0, len(text), stripped, "high")


_DER_BASE64: Final = re.compile(r"M[A-Za-z0-9+/]{79,}={0,2}")
_DER_VERSIONS: Final = {0: "high", 1: "high", 3: "medium"}
"""``version`` of PKCS#8 / PKCS#1 (0), OneAsymmetricKey and SEC1 EC keys (1): a private key;
PKCS#12 (3): a keystore that holds one behind its password."""


def _der_length(raw: bytes, at: int) -> int | None:
    """The offset just past a DER length field starting at ``raw[at]``, else None."""
    if at >= len(raw):
        return None
    first = raw[at]
    if first < 0x80:
        return at + 1
    count = first & 0x7F
    return at + 1 + count if 1 <= count <= 3 else None


def der_private_key(text: str) -> SecretMatch | None:
    """A private key pasted as base64 DER without its PEM lines (``MIIEvQIBADANBgkq…``).

    Private keys are a SEQUENCE whose first element is a small INTEGER version; public keys
    (SubjectPublicKeyInfo) and certificates start with a nested SEQUENCE instead, so they
    never match.
    """
    compact = "".join(text.split())
    if len(compact) < 80 or not compact.startswith("M"):
        return None
    match = _DER_BASE64.match(compact)
    if match is None:
        return None
    import base64
    import binascii

    try:
        raw = base64.b64decode(match.group(0)[:32], validate=True)
    except (binascii.Error, ValueError):
        return None
    body = _der_length(raw, 1) if raw[:1] == b"\x30" else None
    if body is None or raw[body : body + 2] != b"\x02\x01" or len(raw) <= body + 3:
        return None
    confidence = _DER_VERSIONS.get(raw[body + 2])
    if confidence is None or raw[body + 3] not in (0x02, 0x04, 0x30):
        return None  # after the version: a modulus, an octet string or an algorithm
    return SecretMatch("private-key-der", 0, len(text), match.group(0), confidence)
