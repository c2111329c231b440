"""Linting captures: evaluate every message of every file and collect the findings.

The linter is the engine seen from the side of a capture: one engine per run, one session
per (file, session label), and the same decisions the middleware would make. Memory stays
flat in the size of the capture (only findings and error entries are kept).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elicitguard.engine.decision import Decision, Finding, Severity
from elicitguard.engine.engine import Engine
from elicitguard.errors import FrameError
from elicitguard.lint.envelopes import LineError, read_envelopes
from elicitguard.protocol.envelope import Direction, Envelope, Side

__all__ = ["SEVERITY_THRESHOLDS", "LintError", "LintFinding", "LintResult", "Linter"]

SEVERITY_THRESHOLDS = ("info", "low", "medium", "high", "critical", "never")


@dataclass(frozen=True, slots=True)
class LintFinding:
    """A finding with where it was seen in the capture."""

    finding: Finding
    file: str
    line: int | None
    direction: str | None
    method: str | None
    jsonrpc_id: Any
    session: str | None

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape (``lint --format json``)."""
        f = self.finding
        return {
            "code": f.code,
            "name": f.name,
            "severity": f.severity.value,
            "action": f.action.value,
            "message": f.message,
            "file": self.file,
            "line": self.line,
            "pointer": f.pointer,
            "direction": self.direction,
            "method": self.method,
            "jsonrpc_id": self.jsonrpc_id,
            "session": self.session,
            "fingerprint": f.fingerprint,
        }


@dataclass(frozen=True, slots=True)
class LintError:
    """A line or file that could not be linted (never its content)."""

    file: str
    line: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "message": self.message}


@dataclass(slots=True)
class LintResult:
    """Everything a reporter needs."""

    findings: list[LintFinding] = field(default_factory=list)
    errors: list[LintError] = field(default_factory=list)
    messages: int = 0
    unknown_era: int = 0
    files: list[str] = field(default_factory=list)

    def by_severity(self) -> dict[str, int]:
        counts = Counter(f.finding.severity.value for f in self.findings)
        return {s.value: counts.get(s.value, 0) for s in Severity}

    def summary(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "findings": len(self.findings),
            "by_severity": self.by_severity(),
            "unknown_era": self.unknown_era,
        }

    def fails(self, threshold: str) -> bool:
        """True when a finding is at or above ``threshold`` (``never`` never fails)."""
        if threshold == "never":
            return False
        rank = Severity(threshold).rank
        return any(f.finding.severity.rank >= rank for f in self.findings)


class Linter:
    """Runs one engine over capture files."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def lint_paths(
        self, paths: Iterable[Path], progress: Callable[[int], None] | None = None
    ) -> LintResult:
        """Lint each file; a file that cannot be opened is an error entry (exit 2 upstream)."""
        result = LintResult()
        for path in paths:
            result.files.append(str(path))
            self.lint_file(path, result, progress)
        self._exception_findings(result)
        result.unknown_era = self.engine.unknown_era_messages
        return result

    def lint_file(
        self, path: Path, result: LintResult, progress: Callable[[int], None] | None = None
    ) -> None:
        limits = self.engine.policy.limits
        label = str(path)
        with path.open("rb") as stream:
            for line, entry in read_envelopes(
                stream, max_bytes=limits.max_message_bytes, max_depth=limits.max_depth
            ):
                if progress is not None:
                    progress(stream.tell())
                result.messages += 1
                if isinstance(entry, LineError):
                    self._line_error(label, entry, result)
                    continue
                self._evaluate(label, line, entry, result)

    def _line_error(self, label: str, entry: LineError, result: LintResult) -> None:
        result.errors.append(LintError(label, entry.line, str(entry.error)))
        envelope = Envelope(message={}, direction=Direction.SERVER_TO_CLIENT, session=label)
        decision = self.engine.frame_decision(entry.error, envelope)
        for finding in decision.findings:
            result.findings.append(LintFinding(finding, label, entry.line, None, None, None, None))

    def _evaluate(self, label: str, line: int, envelope: Envelope, result: LintResult) -> None:
        session_label = envelope.session
        envelope.session = f"{label}\x00{session_label or ''}"
        try:
            decision = self.engine.evaluate(envelope)
        except FrameError as exc:  # pragma: no cover - evaluate never raises for traffic
            result.errors.append(LintError(label, line, str(exc)))
            return
        if not decision.findings:
            return
        message = envelope.message
        method = _method(message, decision)
        for finding in decision.findings:
            result.findings.append(
                LintFinding(
                    finding,
                    label,
                    line,
                    envelope.direction.value,
                    method,
                    _safe_id(message.get("id")),
                    session_label,
                )
            )

    def _exception_findings(self, result: LintResult) -> None:
        """EG902 for exceptions that expired or never matched during the run."""
        rule = self.engine.policy.rule("EG902")
        if rule is None:
            return
        action = rule.action_for(Side.CAPTURE)
        if action is None:
            return
        for exception, why in [
            *[(e, "expired on " + str(e.spec.expires)) for e in self.engine.expired_exceptions()],
            *[(e, "never matched a finding in this run") for e in self.engine.unused_exceptions()],
        ]:
            finding = Finding(
                code="EG902",
                name=rule.name,
                severity=rule.severity,
                confidence=rule.confidence,
                action=action,
                message=f"exception for {', '.join(exception.spec.rules)} {why}; remove or renew it",
                pointer=f"/exceptions/{exception.index}",
                requirements=rule.requirements,
                fix=rule.fix,
                fingerprint=f"EG902:{exception.index}",
            )
            result.findings.append(
                LintFinding(finding, exception.file, exception.line, None, None, None, None)
            )


def _method(message: dict[str, Any], decision: Decision) -> str | None:
    method = message.get("method")
    if isinstance(method, str):
        return method
    for item in decision.items:
        item_method = getattr(item, "method", None)
        if isinstance(item_method, str):
            return item_method
    return None


def _safe_id(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else str(value)
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        return value[:64]
    return None
