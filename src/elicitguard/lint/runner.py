"""Linting captures: evaluate every message of every file and collect the findings.

The linter is the engine seen from the side of a capture: one engine per run, one session
per (file, session label), and the same decisions the middleware would make. Memory stays
flat in the size of the capture (only findings and error entries are kept).

Three readers feed it (``--input-format``): envelope JSONL (:mod:`.envelopes`), raw
JSON-RPC JSONL (:mod:`.jsonrpc_reader`) and HAR (:mod:`.har_reader`). ``auto`` picks HAR by
the ``.har`` extension, else sniffs the first line that is a JSON object: one with
``direction`` and ``message`` is an envelope capture, anything else raw JSON-RPC.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elicitguard.audit.records import safe_jsonrpc_id
from elicitguard.base.decision import Action, Decision, Finding, Severity
from elicitguard.base.pointer import unescape_pointer
from elicitguard.engine.engine import Engine
from elicitguard.errors import FrameError
from elicitguard.lint.capture import CaptureStream, InputFormat, Location, Skipped
from elicitguard.lint.envelopes import (
    LineError,
    envelope_from_dict,
    plain_envelope,
    read_envelopes,
    read_lines,
    too_large,
)
from elicitguard.lint.lane import OrdinaryLane, server_hint
from elicitguard.lint.parallel import Marks, Partition, line_owner_hint
from elicitguard.protocol.envelope import Direction, Envelope, Side, Transport
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.parsing import mentions_elicitation, parse_frame

__all__ = [
    "SEVERITY_THRESHOLDS",
    "LintError",
    "LintFinding",
    "LintResult",
    "LintSuppressed",
    "Linter",
    "detect_format",
]

SEVERITY_THRESHOLDS = ("info", "low", "medium", "high", "critical", "never")


@dataclass(frozen=True, slots=True)
class LintFinding:
    """A finding with where it was seen in the capture.

    ``entry`` and ``event`` locate a HAR finding (see :class:`.capture.Location`); line-based
    captures leave them ``None`` and the JSON report then omits the keys.
    """

    finding: Finding
    file: str
    line: int | None
    direction: str | None
    method: str | None
    jsonrpc_id: Any
    session: str | None
    entry: int | None = None
    event: int | None = None
    server: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape (``lint --format json``)."""
        f = self.finding
        return _located(self.entry, self.event) | {
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


def _located(entry: int | None, event: int | None) -> dict[str, Any]:
    located: dict[str, Any] = {}
    if entry is not None:
        located["entry"] = entry
    if event is not None:
        located["event"] = event
    return located


@dataclass(frozen=True, slots=True)
class LintError:
    """A line or file that could not be linted (never its content)."""

    file: str
    line: int | None
    message: str
    entry: int | None = None
    event: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "message": self.message} | _located(
            self.entry, self.event
        )


@dataclass(frozen=True, slots=True)
class LintSuppressed:
    """A finding that a policy exception turned off, where it would have been reported.

    Only the SARIF report shows these (as results with ``suppressions``), so that code
    scanning keeps the alert closed as "accepted" instead of forgetting it.
    """

    code: str
    pointer: str
    reason: str
    exception_index: int
    file: str
    line: int | None
    method: str | None
    server: str | None
    entry: int | None = None
    event: int | None = None


@dataclass(slots=True)
class LintResult:
    """Everything a reporter needs."""

    findings: list[LintFinding] = field(default_factory=list)
    errors: list[LintError] = field(default_factory=list)
    suppressed: list[LintSuppressed] = field(default_factory=list)
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
    """Runs one engine over capture files.

    ``input_format`` is ``auto``, ``envelope``, ``jsonrpc`` or ``har``; ``server_name`` names
    the server for messages whose capture does not (raw JSON-RPC; HAR, where it replaces
    the URL's host).
    """

    def __init__(
        self,
        engine: Engine,
        *,
        input_format: str = "auto",
        server_name: str | None = None,
        partition: Partition | None = None,
    ) -> None:
        self.engine = engine
        self.input_format = input_format
        self.server_name = server_name
        #: One worker of ``lint --jobs N`` (:mod:`.parallel`): judge only the sessions it
        #: owns, and note where each finding came from so the parent can merge in order.
        self.partition = partition
        self.marks = Marks()
        self._file_index = 0
        engine.warm_up(serving=False)  # lexicons, tables and lists before the first file
        self._lane = OrdinaryLane(engine)
        self._canonical: dict[Finding, Finding] = {}

    def lint_paths(
        self, paths: Iterable[Path], progress: Callable[[int], None] | None = None
    ) -> LintResult:
        """Lint each file; a file that cannot be opened is an error entry (exit 2 upstream)."""
        result = LintResult()
        for index, path in enumerate(paths):
            result.files.append(str(path))
            self._file_index = index
            self.lint_file(path, result, progress)
        if self.partition is None:  # a worker's parent adds these for the whole run
            self.add_run_findings(result)
        result.unknown_era = self.engine.unknown_era_messages
        return result

    def add_run_findings(self, result: LintResult) -> None:
        """The findings of the run as a whole (EG902: expired or unused exceptions)."""
        self._exception_findings(result)

    def _entries(self, entries: Iterable[Any], result: LintResult) -> Iterable[Any]:
        """``entries`` as they are, or tracked for the merge in a ``--jobs`` worker."""
        if self.partition is None:
            return entries
        return self.marks.track(entries, result, self._file_index)

    def _skips(self, prefix: str, session: object) -> bool:
        """True when a ``--jobs`` worker leaves this session's line to another worker."""
        partition = self.partition
        return partition is not None and not partition.owns(prefix, session)

    def _skips_error(self) -> bool:
        """True when a ``--jobs`` worker leaves a line outside any session to worker 0."""
        return self.partition is not None and not self.partition.reports_errors

    def lint_file(
        self, path: Path, result: LintResult, progress: Callable[[int], None] | None = None
    ) -> None:
        label = str(path)
        input_format = self.input_format
        if input_format == "auto":
            input_format = detect_format(path, self.engine.policy.limits.max_message_bytes)
        with path.open("rb") as stream:
            if input_format == "envelope":
                self._lint_envelopes(stream, label, result, progress)
                return
            prefix = label + "\x00"
            for where, entry in self._entries(self._read(stream, input_format), result):
                if progress is not None:
                    progress(stream.tell())
                if isinstance(entry, Skipped):
                    if self._skips_error():
                        result.messages += where.line is not None or where.entry is not None
                        continue
                    if entry.report:
                        result.errors.append(
                            LintError(label, where.line, entry.message, where.entry, where.event)
                        )
                    if where.line is not None or where.entry is not None:
                        result.messages += 1
                    continue
                result.messages += 1
                if isinstance(entry, LineError):
                    if not self._skips_error():
                        self._line_error(label, where, entry, result)
                    continue
                if not self._skips(prefix, entry.session):
                    self._evaluate(label, where, entry, result)

    def _lint_envelopes(
        self,
        stream: Any,
        label: str,
        result: LintResult,
        progress: Callable[[int], None] | None,
    ) -> None:
        """Envelope JSONL, the common case, with lanes for plain lines.

        A plain server's line (no headers, no protocol version) is first offered to the
        raw-bytes lane (:mod:`.lane`), which calls most of them ordinary without parsing
        them; any other plain line is parsed and, unless the lane's classification calls
        it ordinary, goes to :meth:`Engine.evaluate` as its parsed message, so that
        traffic is decided without an :class:`Envelope`; every other line goes the way
        :func:`read_envelopes` and :meth:`_evaluate` take it.
        """
        limits = self.engine.policy.limits
        max_bytes, max_depth = limits.max_message_bytes, limits.max_depth
        evaluate = self.engine.evaluate
        prefix = label + "\x00"
        capture = Side.CAPTURE
        partition = self.partition
        spread = partition is not None
        prefix_bytes = prefix.encode("utf-8", "surrogatepass")
        # A --jobs worker notes what each line it judged added, by line number, when it
        # moves on (lines left to other workers add nothing and cost no note).
        mark = self.marks.mark
        noted = 0  # the line whose additions are not noted yet (0: none)
        file_index = self._file_index
        lane = self._lane if self._lane.usable else None
        mentions = mentions_elicitation
        server = Direction.SERVER_TO_CLIENT
        for captured in read_lines(stream, max_bytes):
            if noted:
                mark(result, file_index, noted)
                noted = 0
            if progress is not None:
                progress(stream.tell())
            result.messages += 1
            line = captured.data
            if line is None:
                if spread and self._skips_error():
                    continue
                noted = captured.line if spread else 0
                self._line_error(
                    label, Location(line=captured.line), too_large(captured, max_bytes), result
                )
                continue
            owned = False  # a --jobs worker: the line's session is known to be ours
            if partition is not None and (hint := line_owner_hint(line)) is not None:
                # Whose line it is first: another worker's costs only this read.
                if not partition.owns_hint(prefix_bytes, hint):
                    continue  # another worker's: not even parsed here
                owned = True
            if lane is not None and server_hint(line):
                # The raw-bytes lane (lint/lane.py): a plain server's line decoded in one
                # pass and classified; only a line it cannot call ordinary goes on.
                read = lane.server_line(line)
                if read is not None:
                    label_read, stand_in = read
                    if partition is not None and not owned:  # pragma: no cover - read above
                        if not partition.owns(prefix, label_read):
                            continue  # another worker's: the same owner as its hint's
                        owned = True
                    if lane.ordinary(prefix + (label_read or ""), stand_in, server):
                        continue
            if spread:
                noted = captured.line
            try:
                value = parse_frame(line, max_bytes=max_bytes, max_depth=max_depth + 1)
                if spread and not owned:
                    if self._skips(prefix, value.get("session") if type(value) is dict else None):
                        continue
                    owned = True
                plain = plain_envelope(value)
                envelope = envelope_from_dict(value, raw=line) if plain is None else None
            except FrameError as exc:
                if spread and not owned and self._skips_error():
                    continue
                where = Location(line=captured.line)
                self._line_error(label, where, LineError(captured.line, exc), result)
                continue
            if envelope is not None:
                self._evaluate(label, Location(line=captured.line), envelope, result)
                continue
            assert plain is not None  # for the type checker: one of the two was made
            message, direction, session = plain
            if (
                lane is not None
                and not mentions(line)  # else may_hide_elicitation could be true: evaluate
                and lane.ordinary(prefix + (session or ""), message, direction)
            ):
                continue  # what evaluate() decides first, without its call (lint/lane.py)
            transport, named = value.get("transport"), value.get("server")
            decision = evaluate(
                message,
                direction,
                side=capture,
                session=prefix + (session or ""),
                raw=line,
                server=named if named is not None else self.server_name,
                transport=Transport(transport) if transport is not None else None,
                ts=value.get("ts"),
            )
            if decision.findings or decision.suppressed:
                where = Location(line=captured.line)
                self._report(label, where, decision.envelope, decision, session, result)
        if noted:
            mark(result, file_index, noted)

    def _read(self, stream: Any, input_format: str) -> CaptureStream:
        limits = self.engine.policy.limits
        options: dict[str, Any] = {
            "max_bytes": limits.max_message_bytes,
            "max_depth": limits.max_depth,
        }
        if input_format == "jsonrpc":
            from elicitguard.lint.jsonrpc_reader import read_jsonrpc

            return read_jsonrpc(stream, server=self.server_name, **options)
        if input_format == "har":
            from elicitguard.lint.har_reader import read_har

            return read_har(stream, server=self.server_name, **options)
        return ((Location(line=line), entry) for line, entry in read_envelopes(stream, **options))

    def _line_error(
        self, label: str, where: Location, entry: LineError, result: LintResult
    ) -> None:
        result.errors.append(
            LintError(label, where.line, str(entry.error), where.entry, where.event)
        )
        decision = self.engine.evaluate(entry.error, Direction.SERVER_TO_CLIENT, session=label)
        for finding in decision.findings:
            result.findings.append(
                LintFinding(
                    finding, label, where.line, None, None, None, None, where.entry, where.event
                )
            )

    def _evaluate(
        self, label: str, where: Location, envelope: Envelope, result: LintResult
    ) -> None:
        if envelope.server is None and self.server_name is not None:
            envelope.server = self.server_name
        session_label = envelope.session
        envelope.session = f"{label}\x00{session_label or ''}"
        try:
            decision = self.engine.evaluate(envelope)
        except FrameError as exc:  # pragma: no cover - evaluate never raises for traffic
            result.errors.append(LintError(label, where.line, str(exc)))
            return
        if decision.findings or decision.suppressed:
            self._report(
                label, where, decision.envelope or envelope, decision, session_label, result
            )

    def _report(
        self,
        label: str,
        where: Location,
        envelope: Envelope,
        decision: Decision,
        session_label: str | None,
        result: LintResult,
    ) -> None:
        """Add one decision's findings and suppressions to ``result``."""
        line = where.line
        self._remember_blocked_entries(envelope, decision)
        message = envelope.message
        method = _method(message, decision)
        for skipped in decision.suppressed:
            result.suppressed.append(
                LintSuppressed(
                    skipped.code,
                    skipped.pointer,
                    skipped.reason,
                    skipped.exception_index,
                    label,
                    line,
                    method,
                    envelope.server,
                    where.entry,
                    where.event,
                )
            )
        canonical = self._canonical
        for finding in decision.findings:
            # A capture repeats the same problem per request: identical findings share one
            # object, so a 1 GB capture's report costs memory per occurrence, not per copy.
            finding = canonical.setdefault(finding, finding)
            result.findings.append(
                LintFinding(
                    finding,
                    label,
                    line,
                    envelope.direction.value,
                    method,
                    safe_jsonrpc_id(message.get("id")),
                    session_label,
                    where.entry,
                    where.event,
                    envelope.server,
                )
            )

    def _remember_blocked_entries(self, envelope: Envelope, decision: Decision) -> None:
        """Do what a guard would: an ``inputRequests`` entry the policy blocks never reaches
        the client, so its key is not expected in the retry (EG116 reads ``chain.removed``).

        Recordings made by a guard hold the server's full result and the client's retry,
        which lacks the removed keys; a capture without a guard is judged the same way.
        """
        if self.engine.policy.mode != "enforce":
            return
        for item in decision.items:
            if not isinstance(item, Item) or item.kind is not ItemKind.INPUT_REQUIRED:
                continue
            prefix = item.pointer + "/inputRequests/"
            keys = {
                unescape_pointer(f.pointer[len(prefix) :].split("/", 1)[0])
                for f in decision.findings
                if f.action is Action.BLOCK and f.pointer.startswith(prefix)
            }
            chain_key = item.facts.get("chain_key")
            if keys and isinstance(chain_key, str):
                chain = self.engine.store.get(envelope.session or "").chains.get(chain_key)
                if chain is not None:
                    chain.removed.update(keys)

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


def detect_format(path: Path, max_bytes: int) -> InputFormat:
    """``har`` by extension; else sniff the first JSON object line (envelope or raw)."""
    if path.suffix.lower() == ".har":
        return "har"
    with path.open("rb") as stream:
        for number, captured in enumerate(read_lines(stream, max_bytes)):
            if number >= _SNIFF_LINES:
                break
            if captured.data is None:
                continue
            try:
                value = parse_frame(captured.data, max_bytes=max_bytes, max_depth=_SNIFF_DEPTH)
            except FrameError:
                continue
            return "envelope" if "direction" in value and "message" in value else "jsonrpc"
    return "envelope"


_SNIFF_LINES = 64
_SNIFF_DEPTH = 256


def _method(message: dict[str, Any], decision: Decision) -> str | None:
    method = message.get("method")
    if isinstance(method, str):
        return method
    for item in decision.items:
        item_method = getattr(item, "method", None)
        if isinstance(item_method, str):
            return item_method
    return None
