"""One problem with a URL, as every URL check (EG301-EG306) reports it.

Why: the checks live in several modules (one a concept) but the engine adapters read one
shape of result; its ``value`` is for fingerprinting only and never shown.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["UrlIssue"]


@dataclass(frozen=True, slots=True)
class UrlIssue:
    """One problem with a URL. ``value`` is for fingerprinting only: never print it."""

    kind: str
    location: str
    detail: str
    value: str | None = None
    severity: str | None = None
    what: str | None = None  # what was found, in words from our tables (never the value)

    def __repr__(self) -> str:
        """Keep the offending value out of reprs and assertion messages."""
        shown = "None" if self.value is None else f"<{len(self.value)} chars>"
        return (
            f"UrlIssue(kind={self.kind!r}, location={self.location!r}, detail={self.detail!r}, "
            f"value={shown}, severity={self.severity!r})"
        )
