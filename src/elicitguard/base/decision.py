"""What the engine decides: actions, severities, findings and the decision itself.

Actions are ordered: ``allow < log < warn < redact < block``; the most severe action of all
findings wins. A finding never holds the value that triggered it, only a keyed fingerprint.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "Action",
    "Confidence",
    "Decision",
    "Finding",
    "Hit",
    "Severity",
    "Suppressed",
    "finding_fingerprint",
]


class Action(StrEnum):
    """What to do with a message; compare with :attr:`rank`."""

    ALLOW = "allow"
    LOG = "log"
    WARN = "warn"
    REDACT = "redact"
    BLOCK = "block"

    @property
    def rank(self) -> int:
        return _ACTION_RANK[self]


_ACTION_RANK = {Action.ALLOW: 0, Action.LOG: 1, Action.WARN: 2, Action.REDACT: 3, Action.BLOCK: 4}


class Severity(StrEnum):
    """How bad a finding is."""

    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {
    Severity.INFO: 0,
    Severity.LOW: 1,
    Severity.MEDIUM: 2,
    Severity.HIGH: 3,
    Severity.CRITICAL: 4,
}


class Confidence(StrEnum):
    """How sure a rule is that a finding is real."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


@dataclass(frozen=True, slots=True)
class Hit:
    """What a check returns for one problem.

    ``pointer`` is absolute within the message (defaults to the item's pointer); ``args``
    fill the rule's message template and must never hold a value from traffic that could be
    secret (field names and keywords are fine); ``value`` is the offending value, used only
    to compute a keyed fingerprint; ``severity`` lowers or raises the rule's severity for
    this hit; ``field`` names the answer key a ``redact`` action removes; ``action`` lowers
    (never raises) the rule's action for this hit (a short-lived OAuth ``code`` in a URL
    warns where a long-lived credential blocks).
    """

    pointer: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    value: str | None = None
    severity: Severity | None = None
    field: str | None = None
    action: Action | None = None


def finding_fingerprint(code: str, server: str | None, method: str | None, pointer: str) -> str:
    """A finding's stable identity: rule, operator's server name, method and pointer.

    Never a value: the same defect in the same place keeps its fingerprint across runs, so a
    SARIF upload or a baseline recognises it (``partialFingerprints``), and a suppressed
    finding gets the one a live finding would have had.
    """
    text = f"{code}\x00{server or ''}\x00{method or ''}\x00{pointer}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule violation in one message."""

    code: str
    name: str
    severity: Severity
    confidence: Confidence
    action: Action
    message: str
    pointer: str
    requirements: tuple[str, ...] = ()
    cwe: tuple[str, ...] = ()
    fix: str = ""
    fingerprint: str = ""
    value_fingerprint: str | None = None
    item: str | None = None
    field: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (no values, ever)."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "confidence": self.confidence.value,
            "action": self.action.value,
            "message": self.message,
            "pointer": self.pointer,
            "requirements": list(self.requirements),
            "fingerprint": self.fingerprint,
            "value_fingerprint": self.value_fingerprint,
        }


@dataclass(frozen=True, slots=True)
class Suppressed:
    """A finding an exception in the policy turned off, with the exception's reason."""

    code: str
    pointer: str
    reason: str
    exception_index: int


@dataclass(slots=True)
class Decision:
    """The outcome of evaluating one message.

    ``enforced`` is false in monitor mode: the action is what would have been done.
    ``replacement`` is the message an integration sends instead, when the decision changes
    traffic (filled by the integrations that act on it). ``envelope`` is the message as the
    engine judged it (parsed from bytes, its ``requestState`` opened or sealed), ``None`` on
    the fast path; ``frame_error`` names why a frame could not be read (``too_large``,
    ``not_json``, ...); ``reply`` is an answer the request-state stage sends back to the
    sender instead of judging (a sealed ``requestState`` that did not open).
    """

    action: Action
    findings: tuple[Finding, ...] = ()
    suppressed: tuple[Suppressed, ...] = ()
    decision_id: str = ""
    policy_name: str = ""
    policy_revision: str = ""
    environment: str = ""
    mode: str = "enforce"
    enforced: bool = True
    fast_path: bool = False
    items: tuple[Any, ...] = ()
    era: str | None = None
    replacement: dict[str, Any] | None = None
    errors: tuple[str, ...] = ()
    duration_us: int = 0
    envelope: Any = None
    frame_error: str | None = None
    reply: dict[str, Any] | None = None

    @property
    def blocked(self) -> bool:
        """True when the message must not pass (and the policy enforces)."""
        return self.enforced and self.action is Action.BLOCK

    @property
    def codes(self) -> tuple[str, ...]:
        """The rule codes found, in order, without repeats."""
        return tuple(dict.fromkeys(f.code for f in self.findings))
