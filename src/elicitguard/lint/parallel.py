"""``elicitguard lint --jobs N``: sessions spread over processes, one report as if from one job.

A capture's decisions depend on the session they belong to (its requests, answers and
``requestState`` chains), never on another session's, so the sessions of a run can be
judged in separate processes and the results put back together:

* every worker reads every file and judges only the lines of the sessions it owns: a
  session, ``(file, session label)``, belongs to worker ``crc32(file NUL label) mod N``,
  so a session is never split;
* a worker parses only its own lines: an envelope line's session is read from its bytes
  (:func:`session_hint`) when they show it beyond doubt, and the line is then its owner's
  whatever it holds (a line that fails to parse is reported by that worker); only a line
  whose bytes leave the session in doubt is parsed by every worker to learn it;
* a line that is not a session's (too large, or in doubt and not JSON) is worker 0's, so
  each error is reported once;
* each worker notes, for every finding, error and suppressed finding it adds, the file and
  the position of the entry that produced it; the parent merges the lists by those
  positions, which is the order one job appends them in, and then adds what depends on the
  whole run (expired or unused exceptions, EG902, from the summed use counts).

The one piece of engine state shared between sessions is the per-server elicitation rate
window (``limits.elicitations_per_minute``, EG123): under such a limit the run stays in one
process, as it does with an audit log (one file, one sequence), and says so on stderr.
Workers are forked from the parent after the policy is compiled and before any engine or
thread exists, so each starts with the parsed policy and no half-copied lock; each warms
its own engine (the community secret catalogue included, in parallel).
"""

from __future__ import annotations

import multiprocessing
import re
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "PartialResult",
    "Partition",
    "lint_in_processes",
    "session_hint",
    "single_job_reason",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Partition:
    """Which of ``count`` workers this is, and what it owns."""

    index: int
    count: int

    def owns(self, prefix: str, session: object) -> bool:
        """True when the session ``session`` of the file whose label+NUL is ``prefix`` is ours."""
        label = session if isinstance(session, str) else ""
        key = (prefix + label).encode("utf-8", "surrogatepass")
        return zlib.crc32(key) % self.count == self.index

    def owns_hint(self, prefix: bytes, hint: bytes) -> bool:
        """:meth:`owns` for a session label read from the line's bytes (:func:`session_hint`)."""
        return zlib.crc32(hint, zlib.crc32(prefix)) % self.count == self.index

    @property
    def reports_errors(self) -> bool:
        """Lines that belong to no session are worker 0's."""
        return self.index == 0


_KEY = rb'"session"'
#: Top-level keys whose values are plain strings, as writers put them around ``session``.
_PAIR = rb'"(?:direction|ts|transport|server|protocol_version)"[ \t\r]*:[ \t\r]*"[^"\\]*"'
#: ``session`` first, after nothing but plain string pairs (the object's opening brace).
_BEFORE = re.compile(rb"\{[ \t\r]*(?:" + _PAIR + rb"[ \t\r]*,[ \t\r]*)*")
#: ``session`` last, followed by nothing but plain string pairs and the closing brace.
_AT = re.compile(
    _KEY + rb'[ \t\r]*:[ \t\r]*"([^"\\]*)"[ \t\r]*(?:,[ \t\r]*' + _PAIR + rb"[ \t\r]*)*\}[ \t\r]*"
)
_SESSION_VALUE = re.compile(_KEY + rb'[ \t\r]*:[ \t\r]*"([^"\\]*)"')


def session_hint(line: bytes) -> bytes | None:
    """The session label of an envelope line, from its bytes, when they leave no doubt.

    Why: a ``--jobs`` worker would otherwise parse every line of a capture only to learn
    whose it is. The bytes are conclusive when ``"session"`` occurs once and no ``\\u``
    escape could spell the key another way (a JSON parser keeps the last of repeated keys,
    and decodes escapes in keys), and that one occurrence is a key of the top-level object:
    the first key after plain string pairs, or the last one before plain string pairs and
    the closing brace. ``b""`` for a line without the key (no session); ``None`` when in
    doubt (the caller parses). Whatever the line turns out to hold, every worker reads the
    same hint from it, so each line still has exactly one owner.
    """
    if b"\\u" in line:
        return None
    at = line.find(_KEY)
    if at < 0:
        return b""
    if line.find(_KEY, at + 1) >= 0:
        return None
    if _BEFORE.fullmatch(line, 0, at):
        value = _SESSION_VALUE.match(line, at)
        return None if value is None else value.group(1)
    tail = _AT.fullmatch(line, at)
    return None if tail is None else tail.group(1)


@dataclass(slots=True)
class Marks:
    """Where each item a worker added came from: ``(file, entry, findings, errors, suppressed)``
    rows, one per entry that added anything, with the list lengths after it."""

    rows: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    last: tuple[int, int, int] = (0, 0, 0)

    def track(self, entries: Iterable[T], result: Any, file_index: int) -> Iterator[T]:
        """Yield ``entries``, noting after each one what it added to ``result``."""
        position = -1
        for position, entry in enumerate(entries):
            self._mark(result, file_index, position - 1)
            yield entry
        self._mark(result, file_index, position)

    def _mark(self, result: Any, file_index: int, position: int) -> None:
        sizes = (len(result.findings), len(result.errors), len(result.suppressed))
        if sizes != self.last:
            self.rows.append((file_index, position, *sizes))
            self.last = sizes


@dataclass(slots=True)
class PartialResult:
    """What one worker sends back: its result, its marks, and how often each exception hit."""

    result: Any
    marks: list[tuple[int, int, int, int, int]]
    exception_uses: list[int]


def single_job_reason(policy: Any, *, audit_log: bool) -> str | None:
    """Why this run must stay in one process (``None`` when it can be spread)."""
    if audit_log:
        return "--audit-log writes one file in one sequence"
    rule = policy.rules.get("EG123")
    limited = policy.limits.elicitations_per_minute is not None or (
        rule is not None and rule.params.get("per_minute") is not None
    )
    if rule is not None and limited:
        return "an elicitation rate limit (EG123) counts across sessions"
    return None


#: What a forked worker runs: set in the parent just before the pool forks.
_WORK: dict[str, Any] = {}


def _work(index: int) -> PartialResult:
    make_linter: Callable[[Partition | None], Any] = _WORK["make_linter"]
    linter = make_linter(Partition(index, _WORK["jobs"]))
    try:
        result = linter.lint_paths(_WORK["paths"])
        uses = [exception.uses for exception in linter.engine.policy.exceptions]
        return PartialResult(result, linter.marks.rows, uses)
    finally:
        linter.engine.close()


def lint_in_processes(
    make_linter: Callable[[Partition | None], Any], paths: Sequence[Path], jobs: int
) -> tuple[Any, Any]:
    """Lint ``paths`` with ``jobs`` forked workers; returns ``(result, linter)``.

    ``make_linter(partition)`` builds a :class:`~elicitguard.lint.runner.Linter` with its
    own engine; the parent's (no partition, built once the workers are done) adds the
    run-wide findings and is returned for the report.
    """
    # Fork before any engine exists: warming one up starts a thread (the community secret
    # catalogue compiles in the background under a lock), and a child forked meanwhile
    # would inherit that lock held by a thread it does not have.
    # The pool forks every worker when it is made, so the parent's own linter (its engine's
    # warm-up is a few tenths of a second) is built while the workers lint, not after.
    _WORK.update(make_linter=make_linter, paths=list(paths), jobs=jobs)
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(jobs) as pool:
            pending = pool.map_async(_work, range(jobs), chunksize=1)
            linter = make_linter(None)
            partials = pending.get()
    finally:
        _WORK.clear()
    result = merge(partials)
    for exception, uses in zip(
        linter.engine.policy.exceptions, _summed_uses(partials), strict=True
    ):
        exception.uses = uses
    linter.add_run_findings(result)
    return result, linter


def _summed_uses(partials: Sequence[PartialResult]) -> list[int]:
    return [sum(column) for column in zip(*(p.exception_uses for p in partials), strict=True)]


def merge(partials: Sequence[PartialResult]) -> Any:
    """One result from the workers' results, every list in the order one job builds it."""
    first = partials[0].result
    merged = type(first)(files=list(first.files), messages=first.messages)
    merged.unknown_era = sum(p.result.unknown_era for p in partials)
    for kind, column in (("findings", 2), ("errors", 3), ("suppressed", 4)):
        keyed: list[tuple[int, int, int, int, Any]] = []
        for worker, partial in enumerate(partials):
            items = getattr(partial.result, kind)
            start = 0
            for row in partial.marks:
                end = row[column]
                keyed.extend((row[0], row[1], worker, n, items[n]) for n in range(start, end))
                start = end
            if start != len(items):  # pragma: no cover - every item is marked
                msg = f"lint worker {worker}: {len(items) - start} unplaced {kind}"
                raise RuntimeError(msg)
        keyed.sort(key=lambda row: row[:4])
        getattr(merged, kind).extend(row[4] for row in keyed)
    return merged


def note_single_job(reason: str) -> None:
    """Say on stderr why ``--jobs`` was not used."""
    print(f"elicitguard: linting in one process: {reason}", file=sys.stderr)
