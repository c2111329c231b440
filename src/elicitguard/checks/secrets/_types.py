"""The two records the secret catalogue hands out: a format and a match.

Why apart: every other part of the package (catalogue, validators, scanner, answer reader)
speaks in these types, and a match's ``repr`` must never show the secret it holds.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One credential found in a string.

    ``value`` is the secret itself; callers use it only to compute a keyed fingerprint and
    must never log or display it. ``confidence`` is ``high``, ``medium`` or ``low``.
    """

    type: str
    start: int
    end: int
    value: str
    confidence: str

    def __repr__(self) -> str:
        """Keep the secret out of reprs, tracebacks and assertion messages."""
        return (
            f"SecretMatch(type={self.type!r}, start={self.start}, end={self.end}, "
            f"value=<{len(self.value)} chars>, confidence={self.confidence!r})"
        )


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One credential format of ``data/secrets.yaml``."""

    id: str
    name: str
    keywords: tuple[str, ...]
    regex: str
    wrapped: str
    check: str | None
    structure: str | None
    entropy: float
    confidence: str
    whole_url: bool
    source: str
    min_length: int = 0
    requires: tuple[tuple[str, ...], ...] = ()
