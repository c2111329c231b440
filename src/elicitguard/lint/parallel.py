"""``elicitguard lint --jobs N``: sessions spread over processes, one report as if from one job.

A capture's decisions depend on the session they belong to (its requests, answers and
``requestState`` chains), never on another session's, so the sessions of a run can be
judged in separate processes and the results put back together:

* every worker reads every file and judges only the lines of the sessions it owns; the
  sessions, ``(file, session label)``, are dealt to the workers in turn in the order they
  first appear (every worker sees the same order, so all agree, and the work is spread
  evenly; past :data:`DEALT_SESSIONS` sessions, ``crc32(file NUL label) mod N`` keeps the
  memory bounded), so a session is never split;
* a worker parses only its own lines in full: an envelope line's session is read alone
  (:func:`line_owner_hint`: from the line's first bytes when that is certain, else
  :func:`session_hint`), and the line is then its owner's whatever it holds (a line that
  then fails to parse is reported by that worker); a line that is no JSON object at all
  is parsed by every worker, as before, to learn it is nobody's;
* a line that is not a session's (too large, not JSON) is worker 0's, so each error is
  reported once;
* each worker notes, for every finding, error and suppressed finding it adds, the file and
  the position of the entry that produced it; the parent merges the lists by those
  positions, which is the order one job appends them in, and then adds what depends on the
  whole run (expired or unused exceptions, EG902, from the summed use counts).

The one piece of engine state shared between sessions is the per-server elicitation rate
window (``limits.elicitations_per_minute``, EG123): under such a limit the run stays in one
process, as it does with an audit log (one file, one sequence), and says so on stderr.
Workers are forked from the parent once the policy is compiled and the parent has loaded,
in its own thread, the data an engine loads on first use (the community secret catalogue
included): each starts with all of it and no half-copied lock, and begins linting at once.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import re
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from elicitguard.checks.secrets import (
    community_enabled,
    load_community,
    wait_for_community_load,
)

__all__ = [
    "DEALT_SESSIONS",
    "PartialResult",
    "Partition",
    "line_owner_hint",
    "lint_in_processes",
    "session_hint",
    "single_job_reason",
]

T = TypeVar("T")


#: Sessions dealt in turn before the rest are placed by hash (the table's memory bound).
DEALT_SESSIONS = 1 << 16


@dataclass(frozen=True, slots=True)
class Partition:
    """Which of ``count`` workers this is, and what it owns."""

    index: int
    count: int
    #: Session key -> worker, in the order the sessions first appeared.
    dealt: dict[bytes, int] = field(default_factory=dict, compare=False, repr=False)

    def owns(self, prefix: str, session: object) -> bool:
        """True when the session ``session`` of the file whose label+NUL is ``prefix`` is ours."""
        label = session if isinstance(session, str) else ""
        return self._owner((prefix + label).encode("utf-8", "surrogatepass")) == self.index

    def owns_hint(self, prefix: bytes, hint: bytes) -> bool:
        """:meth:`owns` for a session label read alone (:func:`session_hint`)."""
        return self._owner(prefix + hint) == self.index

    def _owner(self, key: bytes) -> int:
        dealt = self.dealt
        owner = dealt.get(key)
        if owner is None:
            if len(dealt) >= DEALT_SESSIONS:
                return zlib.crc32(key) % self.count
            owner = dealt[key] = len(dealt) % self.count
        return owner

    @property
    def reports_errors(self) -> bool:
        """Lines that belong to no session are worker 0's."""
        return self.index == 0


class _Head(msgspec.Struct):
    """An envelope line's top-level ``session``, every other key skipped unread."""

    session: object = None


_read_head = msgspec.json.Decoder(_Head).decode


def session_hint(line: bytes) -> bytes | None:
    """The session label of an envelope line (``b""``: none), or ``None`` when it is no
    JSON object.

    Why: a ``--jobs`` worker would otherwise parse every line of a capture in full only to
    learn whose it is. :mod:`msgspec` decodes just the top-level ``session`` (the message is
    skipped without building an object, about a third of a full parse), as the full parser
    reads it: the last of repeated keys, escapes in keys decoded. Every worker reads the
    same label from the same bytes, so each line still has exactly one owner.
    """
    try:
        session = _read_head(line).session
    except (msgspec.DecodeError, RecursionError, ValueError):
        return None
    return session.encode("utf-8", "surrogatepass") if isinstance(session, str) else b""


#: An envelope line that opens with its session (first key, or second after a direction
#: word), the label free of quotes and backslashes: read without a decoder.
_LEADING_SESSION = re.compile(rb'\{"(?:direction":"[a-z_]{1,24}",")?session":"([^"\\]{0,256})"')


def line_owner_hint(line: bytes) -> bytes | None:
    """:func:`session_hint`, read from the line's first bytes when that is certain.

    Why: a ``--jobs`` worker reads every line of a capture only to learn whose it is, and
    a decoder pass over a large tool result is most of that cost. When the line opens with
    ``"session":"LABEL"`` (or ``"direction":"...","session":"LABEL"``), ``"session"``
    occurs nowhere else in it and it holds no ``\\u`` escape (the only way another key
    could spell ``session``), the top-level session of a valid line is LABEL, as the full
    parser reads it. A line that is not valid JSON still gets a label here; it is then
    its label's worker that parses it and reports the error, once, in its place. Every
    worker applies the same function to the same bytes, so every line keeps one owner.
    """
    found = _LEADING_SESSION.match(line)
    if found is not None and line.count(b'"session"') == 1 and b"\\u" not in line:
        return found.group(1)
    return session_hint(line)


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
            self.mark(result, file_index, position - 1)
            yield entry
        self.mark(result, file_index, position)

    def mark(self, result: Any, file_index: int, position: int) -> None:
        """Note what ``result`` gained since the last note as the entry ``position``'s."""
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
    own engine; the parent's (no partition, built before the workers fork, see below) adds
    the run-wide findings and is returned for the report.
    """
    # Warm up once, here, before the fork: the community secret catalogue (loaded now,
    # in this thread) and what an engine loads on first use (the parent's own linter
    # warms it). The workers inherit all of it and each starts linting at once, instead
    # of every process loading the same data again on the cores the workers share (on
    # two cores, the parent's warm-up alone took a quarter second from the workers).
    # Loaded in this thread because a background load would still be running at the
    # fork, and a child would inherit its lock held by a thread it does not have.
    if community_enabled():
        with contextlib.suppress(Exception):  # as a background load: it fails again on use
            load_community()
    linter = make_linter(None)
    # Should the load above have failed, warm-up retried it on a thread: let that end.
    wait_for_community_load()
    _WORK.update(make_linter=make_linter, paths=list(paths), jobs=jobs)
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(jobs) as pool:
            partials = pool.map(_work, range(jobs), chunksize=1)
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
