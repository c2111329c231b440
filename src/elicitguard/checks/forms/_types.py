"""Result types and class names of the form classifier (no logic, so every module can import)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Confidence = Literal["low", "medium", "high"]

ALL_LANGUAGES: Final[tuple[str, ...]] = ("en", "zh-Hans", "zh-Hant", "ja", "es", "de", "fr")
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


@dataclass(frozen=True, slots=True)
class MessageAsk:
    """A request message that tells the user to type or paste a secret (rule EG206)."""

    secret_class: str
    language: str | None
    reasons: tuple[str, ...]
