"""Result types and class names of the form classifier (no logic, so every module can import)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Confidence = Literal["low", "medium", "high"]

FULL_LANGUAGES: Final[tuple[str, ...]] = (
    "en", "zh-Hans", "zh-Hant", "ja", "es", "de", "fr",
    "ko", "ru", "uk", "pt", "it", "ar", "he", "fa", "hi", "bn", "tr", "vi", "th", "id",
    "pl", "cs", "nl", "sv", "el", "ro", "da", "fi", "hu", "nb",
)  # fmt: skip
"""Languages with a full lexicon: field labels, ask verbs, negations, modifiers, traps."""

LABEL_LANGUAGES: Final[tuple[str, ...]] = (
    "af", "am", "az", "be", "bg", "bs", "ca", "cy", "et", "eu", "ga", "gl", "gu", "hr",
    "hy", "is", "ka", "kk", "km", "kn", "ky", "lo", "lt", "lv", "mk", "ml", "mn", "mr",
    "ms", "my", "ne", "pa", "si", "sk", "sl", "sq", "sr", "sr-Latn", "sw", "ta", "te", "tg", "tl",
    "tk", "ur", "uz",
)  # fmt: skip
"""Languages known from translation catalogues only: the labels a sign-in form puts on its
fields ("Password", "New password", "Token", codes) and, where the catalogues give them,
ask verbs. A password field labelled in Swahili is caught; a request message in it may not be."""

ALL_LANGUAGES: Final[tuple[str, ...]] = FULL_LANGUAGES + LABEL_LANGUAGES
"""The languages whose lexicons ship with elicitguard (the default for ``languages``)."""

SECRET_CLASSES: Final[tuple[str, ...]] = (
    "password",
    "api_key",
    "private_key",
    "otp",
    "card_number",
    "cvv",
    "security_answer",
)
"""Secrets that form mode must never collect (EL-01, EL-02; rule EG201)."""

SENSITIVE_CLASSES: Final[tuple[str, ...]] = ("government_id", "bank_account", "health")
"""Personal data the spec allows in forms but a strict policy may forbid (rule EG203)."""


@dataclass(frozen=True, slots=True)
class FieldVerdict:
    """What one property of a ``requestedSchema`` collects, and why we think so.

    ``secret_class`` and ``sensitive_class`` are ``None`` when the field is harmless; the
    ``reasons`` name sources and matched lexicon terms, never a value the form carries.
    """

    field: str
    pointer: str
    secret_class: str | None
    sensitive_class: str | None
    language: str | None
    confidence: Confidence
    reasons: tuple[str, ...]
    disguised: bool = False
    """The secret word appears only once look-alike letters, digits, spacing or HTML
    references are undone: a sign of evasion in itself."""


@dataclass(frozen=True, slots=True)
class MessageAsk:
    """Text the user reads that tells them to type or paste a secret (rule EG206).

    ``source`` says where: ``message``, or the pointer suffix of a description or option
    label (``/properties/x/description``, ``/properties/x/oneOf/0/title``).
    """

    secret_class: str
    language: str | None
    reasons: tuple[str, ...]
    disguised: bool = False
    source: str = "message"
    verbless: bool = False
    """The sentence names the secret without an ask verb ("Your API key:", "New API key")."""
