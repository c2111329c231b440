"""Seed phrases and printed card numbers are secrets by their shape, in any field."""

from __future__ import annotations

import pytest

from elicitguard.checks.secrets import hidden_secret

VALID = "legal winner thank year wave sausage worth useful legal winner thank yellow"


@pytest.mark.parametrize(
    ("text", "kind", "confidence"),
    [
        (VALID, "recovery-phrase", "high"),
        (
            "zoo bright orbit canal ladder humble sketch output random vessel almost pitch",
            "recovery-phrase",
            "medium",
        ),
        ("4539 1488 0343 6467", "payment-card-number", "high"),
        ("4539-1488-0343-6467", "payment-card-number", "high"),
        ("3782 822463 10013", "payment-card-number", "high"),
    ],
)
def test_shapes_found(text: str, kind: str, confidence: str) -> None:
    found = hidden_secret(text)
    assert found is not None
    assert found.how == "shape"
    assert (found.match.type, found.match.confidence) == (kind, confidence)
    assert text not in repr(found)


@pytest.mark.parametrize(
    "text",
    [
        "the new release fixed my issue and the app feels much faster than before",
        "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon",
        "4242 4242 4242 4242",  # a processor's published test card
        "4539 1488 0343 6468",  # Luhn fails
        "9539 1488 0343 6467",  # no issuer starts with 9
        "1234 5678 9012 3456",
    ],
)
def test_shapes_traps(text: str) -> None:
    found = hidden_secret(text)
    assert found is None or found.how != "shape"
