"""The audit sink's processor chain: stamp, redact, seal, render (structlog processors).

Every event goes through one chain of plain callables ``(logger, method_name, event_dict)``,
as structlog's own processors do; the last one renders the line the sink writes::

    stamp  ->  redact  ->  seal  ->  render  ->  line writer

* **stamp** (:class:`Stamp`) gives an event its time, ``ts``, unless the caller took it
  already: :class:`~elicitguard.audit.records.AuditLog` takes ``ts`` and ``seq`` when the
  decision is made, under the lock that numbers records, and the stamp keeps those.
* **redact** (:class:`RedactRecord` for decision records, :class:`RedactEvent` for other
  events) is the one redaction boundary. It works on the JSON form of the event, which keeps
  it cheap: one search for sensitive key names and one scan for recognised secrets, and only
  when either finds something is the event walked key by key.
* **seal** (:class:`Seal`) adds the audit chain's HMAC when ``audit.chain`` is on; after
  redaction, so the MAC covers what is written.
* **render** is any processor that returns the line: :func:`render_json` by default. Other
  formats (OCSF, ECS, OpenTelemetry) are renderers of their own modules, passed as
  ``AuditSink(stream, renderer=...)``.

Decision records and other events take two chains (two bound loggers) rather than one chain
and a reserved key saying which is which: a decision record's keys are elicitguard's own, so
only its values need the secret scan, and its verdict is remembered per clean record shape.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

from elicitguard.audit.chain import ChainWriter
from elicitguard.audit.redact import GENERATED_TEXT, SENSITIVE_KEYS, Redactor

__all__ = [
    "Processor",
    "RedactEvent",
    "RedactRecord",
    "Seal",
    "Stamp",
    "render_json",
    "timestamp",
    "utc_now",
]

#: A structlog processor: ``(logger, method_name, event_dict) -> event_dict`` (or the line).
Processor = Callable[[Any, str, Any], Any]

#: One compiled alternation of every sensitive key followed by a non-null value: a single
#: scan of the lowered line instead of one substring search per key (hot path).
_SENSITIVE_KEY = re.compile(
    rb'"(?:'
    + b"|".join(re.escape(k.encode()) for k in sorted(SENSITIVE_KEYS, key=len, reverse=True))
    + rb')":(?!null)'
)
#: Fields of a decision record that elicitguard generates itself (times, counters, ids,
#: keyed hashes): left out of the key under which a record's scan verdict is remembered.
_VOLATILE = frozenset({"ts", "seq", "decision_id", "duration_us", "session", "jsonrpc_id"})
#: How many clean decision-record shapes are remembered, and the largest one remembered.
_CLEAN_LIMIT = 4096
_CLEAN_MAX_BYTES = 8192


def timestamp(at: float | None = None) -> str:
    """``at`` (seconds since the epoch; now by default) as an RFC 3339 UTC time, in µs.

    Records arrive many per second: the date and time up to the second are formatted once
    per second (the last one is kept), the microseconds each time.
    """
    if at is None:
        at = time.time()
    # As datetime.fromtimestamp splits and rounds (half to even) a float's fraction.
    part, whole = math.modf(at)
    fraction = round(part * 1e6)
    second = int(whole)
    if fraction >= 1_000_000:
        fraction, second = fraction - 1_000_000, second + 1
    elif fraction < 0:
        fraction, second = fraction + 1_000_000, second - 1
    cached = _SECOND[0]
    if cached[0] != second:
        try:
            moment = dt.datetime.fromtimestamp(second, dt.UTC)
        except (OverflowError, OSError, ValueError):
            moment = dt.datetime.fromtimestamp(at, dt.UTC)
            return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")
        cached = (second, moment.replace(tzinfo=None).isoformat(timespec="seconds") + ".")
        _SECOND[0] = cached  # a tuple swapped whole: a reader sees one second or the other
    return f"{cached[1]}{fraction:06d}Z"


#: The second last formatted by :func:`timestamp` and its text up to the fraction.
_SECOND: list[tuple[int, str]] = [(-(2**63), "")]


def utc_now() -> str:
    """Now as an RFC 3339 UTC time with microseconds (``2026-01-02T03:04:05.000006Z``)."""
    return timestamp()


class Stamp:
    """Give an event its ``ts`` when it has none (first in the chain, before redaction)."""

    __slots__ = ("_clock",)

    def __init__(self, clock: Callable[[], str] = utc_now) -> None:
        self._clock = clock

    def __call__(self, _logger: Any, _name: str, event: Any) -> Any:
        if "ts" not in event:
            event["ts"] = self._clock()
        return event


def _has_sensitive_key(line: bytes) -> bool:
    """A cheap look for a sensitive key in a rendered line (orjson writes no spaces)."""
    return _SENSITIVE_KEY.search(line.lower()) is not None


class RedactEvent:
    """Redact any event: sensitive keys anywhere, recognised secrets in any string."""

    __slots__ = ("_redact",)

    def __init__(self, redactor: Redactor) -> None:
        self._redact = redactor

    def __call__(self, _logger: Any, _name: str, event: Any) -> Any:
        line = orjson.dumps(event, default=str)
        if _has_sensitive_key(line) or self._redact.finds_secret(line.decode("utf-8")):
            return self._redact(event)
        return event


class RedactRecord:
    """Redact a decision record: its keys are elicitguard's own, only values are scanned.

    Consecutive records mostly differ only in generated fields (time, sequence, ids,
    duration), so the verdict of the scan is remembered per record with those fields left
    out: a record that repeats a clean shape is not scanned again (a string JSON-RPC id, the
    one volatile field that comes from traffic, is still scanned each time).
    """

    __slots__ = ("_clean", "_clean_lines", "_redact")

    def __init__(self, redactor: Redactor) -> None:
        self._redact = redactor
        self._clean: OrderedDict[bytes, None] = OrderedDict()
        self._clean_lines: OrderedDict[Any, None] = OrderedDict()

    def passes_line(self, line: str, shape: Any, jsonrpc_id: Any) -> bool:
        """True when a record already rendered as ``line`` needs no redaction.

        The same judgement as :meth:`__call__` makes of the record (a string JSON-RPC id
        scanned each time; the whole line scanned unless its shape, the record without
        its generated fields, was found clean before), for a record rendered straight to
        its line (:meth:`~elicitguard.audit.records.AuditLog.record`): ``line`` is the JSON
        that record's scan reads, and ``shape`` holds exactly its non-generated parts.
        ``False`` sends the record down the plain path, which redacts it.
        """
        if isinstance(jsonrpc_id, str) and self._redact.finds_secret(jsonrpc_id):
            return False
        clean = self._clean_lines
        if shape in clean:
            clean.move_to_end(shape)
            return True
        if self._redact.finds_secret(line):
            return False
        if len(line) <= _CLEAN_MAX_BYTES:
            clean[shape] = None
            if len(clean) > _CLEAN_LIMIT:
                clean.popitem(last=False)
        return True

    def __call__(self, _logger: Any, _name: str, event: Any) -> Any:
        if self._has_secret(event):
            return self._redact(event)
        return event

    def _has_secret(self, event: dict[str, Any]) -> bool:
        jsonrpc_id = event.get("jsonrpc_id")
        if isinstance(jsonrpc_id, str) and self._redact.finds_secret(jsonrpc_id):
            return True
        try:
            shape = orjson.dumps(
                {
                    k: (_findings_shape(v) if k == "findings" else v)
                    for k, v in event.items()
                    if k not in _VOLATILE
                }
            )
        except TypeError:
            shape = b""
        if shape and shape in self._clean:
            self._clean.move_to_end(shape)
            return False
        if self._redact.finds_secret(orjson.dumps(event, default=str).decode("utf-8")):
            return True
        if shape and len(shape) <= _CLEAN_MAX_BYTES:
            self._clean[shape] = None
            if len(self._clean) > _CLEAN_LIMIT:
                self._clean.popitem(last=False)
        return False


def _findings_shape(findings: Any) -> Any:
    """A record's findings as its shape keeps them: without the fingerprints, which
    elicitguard generates (a keyed hash of a value from traffic differs with every fresh
    URL or answer, and the redaction boundary passes generated fields as they are)."""
    if not isinstance(findings, list):
        return findings
    out: list[Any] = []
    for finding in findings:
        if isinstance(finding, dict) and all(
            _is_generated(finding.get(name)) for name in _FINGERPRINTS
        ):
            finding = {k: v for k, v in finding.items() if k not in _FINGERPRINTS}
        out.append(finding)
    return out


_FINGERPRINTS = ("fingerprint", "value_fingerprint")


def _is_generated(value: Any) -> bool:
    return value is None or (isinstance(value, str) and GENERATED_TEXT.fullmatch(value) is not None)


class Seal:
    """Add the audit chain's ``chain_key`` and ``chain`` once a chain is enabled."""

    __slots__ = ("chain",)

    def __init__(self) -> None:
        self.chain: ChainWriter | None = None

    def __call__(self, _logger: Any, _name: str, event: Any) -> Any:
        return self.chain.seal(event) if self.chain is not None else event


def render_json(_logger: Any, _name: str, event: Any) -> str:
    """The default renderer: one compact JSON object (orjson; unknown types as ``str``)."""
    return orjson.dumps(event, default=str).decode("utf-8")
