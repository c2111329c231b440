"""The audit sink's background writer: records leave the request path through a bounded queue.

A decision waits only for its record to be queued: a sequence number, a clock read, the
record rendered from remembered parts as text (when the sink writes plain lines, so that
the queue holds no message alive) and a ``put``. One daemon thread per sink stamps, redacts,
seals, renders (what is not rendered yet) and writes the records in queue order, many
lines per ``write`` and ``flush``. Woken by a first record, the
writer gathers more for up to 20 ms (or until 64 are queued, or a flush asks) before it
writes: one thread hand-off per batch, not per record. The queue is bounded
(``audit.queue``), and a full queue never loses a record silently (``audit.when_full``):

* ``block`` (the default): the caller waits until the writer has room. No record is lost;
  a stalled disk slows traffic instead.
* ``count``: the record is dropped and counted, and the writer writes an
  ``elicitguard.audit.dropped`` event saying how many (since the last such event, and in
  all) as soon as it has room again, and once more when the sink closes. Traffic never
  waits on the disk; the log says where it has gaps.

``flush`` waits until everything queued is written; ``close`` flushes and stops the
thread (the sink closes its writer, and closes every sink still open at interpreter exit,
so a process that ends normally, a signal handler that exits included, loses nothing).
A job that fails is counted and reported on stderr (type only, never the record) and the
writer carries on: it must never stop while callers may block on it.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Literal

__all__ = ["WHEN_FULL", "BackgroundWriter", "WhenFull"]

WhenFull = Literal["block", "count"]
WHEN_FULL: tuple[WhenFull, ...] = ("block", "count")
#: The most jobs handled per write: bounds the latency of one batch and its memory.
_BATCH = 512
#: A writer woken by a first job waits up to this long for more before it writes (unless
#: this many are queued, or someone flushes): one thread hand-off per batch rather than
#: per record. Under the GIL a hand-off per record costs more than writing the record in
#: the caller; a batch costs the same work and one switch.
_LINGER_S = 0.02
_WAKE_AT = 64

#: Handles one batch of jobs (the sink: build, redact, seal, render, write) and, when the
#: batch follows dropped records, how many were dropped since the last report and in all.
BatchHandler = Callable[[Sequence[Any], int, int], None]


_writers: weakref.WeakSet[BackgroundWriter] = weakref.WeakSet()


class BackgroundWriter:
    """A bounded queue of audit jobs and the one thread that hands them to the sink.

    The queue is a ``deque`` (appending is atomic under the GIL) and the writer sleeps on
    an ``Event`` only when it has nothing to do, so a ``put`` is an append and, at most,
    one wake-up: :class:`queue.Queue` takes a lock and notifies a condition on every put.
    """

    def __init__(self, handle: BatchHandler, *, size: int, when_full: WhenFull) -> None:
        if size < 1:
            msg = f"audit queue size must be at least 1, got {size}"
            raise ValueError(msg)
        if when_full not in WHEN_FULL:
            msg = f"audit.when_full must be one of {', '.join(WHEN_FULL)}, got {when_full!r}"
            raise ValueError(msg)
        self._handle = handle
        self.when_full: WhenFull = when_full
        self.size = size
        self.failures = 0
        self._closed = False
        self._start()
        _writers.add(self)

    def _start(self) -> None:
        """Fresh queue, counters, locks and thread (at creation, and in a forked child)."""
        self._jobs: deque[Any] = deque()
        self._wake = threading.Event()
        self._put_lock = threading.Lock()
        self._idle = False
        self._lingering = False
        self._flushing = 0
        self._wake_at = min(_WAKE_AT, self.size)
        #: Notified after every batch: flush and a blocked put wait on it.
        self._progress = threading.Condition()
        self._submitted = 0
        self._written = 0
        self.dropped = 0
        self._reported = 0
        self._stop = False
        #: False once the thread has left its loop: read by every ``put``, where
        #: ``Thread.is_alive`` (a lock probe) cost a third of the caller's share of a record.
        self._alive = True
        self._thread = threading.Thread(target=self._run, name="elicitguard-audit", daemon=True)
        self._thread.start()

    def _after_fork(self) -> None:
        """In a forked child: the parent's thread is gone and its queue is the parent's to
        write (a copy written here too would duplicate records), so start afresh."""
        if not self._closed:
            self._start()

    def put(self, job: Any) -> None:
        """Queue ``job``; when the queue is full, wait (``block``) or count it (``count``).

        Should the writer thread be gone (it never stops on a failure, but an interpreter
        shutting down stops threads), the job is written here instead: never lost.
        """
        jobs = self._jobs
        with self._put_lock:  # one putter at a time: exact counts, submission order kept
            if not self._alive:
                self._write([job], final=False)
                return
            if len(jobs) >= self.size:
                if self.when_full == "count":
                    self.dropped += 1
                    return
                self._wake.set()
                with self._progress:
                    while len(jobs) >= self.size and self._thread.is_alive():
                        self._wake.set()
                        self._progress.wait(0.05)
            self._submitted += 1
            jobs.append(job)
        wake = self._wake
        # ``set`` takes a lock and notifies; until the writer gets the GIL back, every put
        # past the mark would repeat it. The writer clears the event before it looks at
        # the queue, so a job seen set is a job the writer will see.
        if (self._idle or (self._lingering and len(jobs) >= self._wake_at)) and not wake.is_set():
            wake.set()

    def flush(self) -> None:
        """Wait until every job queued so far is written."""
        target = self._submitted
        with self._progress:  # its lock guards the count of flushes waiting
            self._flushing += 1  # meanwhile the writer writes what it has without lingering
            try:
                while self._written < target and self._thread.is_alive():
                    self._wake.set()
                    self._progress.wait(0.05)
            finally:
                self._flushing -= 1

    def close(self) -> None:
        """Write everything queued, report drops not yet reported, and stop the thread."""
        if self._closed:
            return
        self._closed = True
        self.flush()
        self._stop = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            self._loop()
        finally:
            self._alive = False

    def _loop(self) -> None:
        jobs, wake = self._jobs, self._wake
        popleft = jobs.popleft
        while True:
            if not jobs:
                if self._stop:
                    self._write((), final=True)
                    return
                self._idle = True
                wake.clear()
                if not jobs and not self._stop:
                    wake.wait()
                self._idle = False
                continue
            if len(jobs) < self._wake_at and not self._stop and not self._flushing:
                self._lingering = True
                wake.clear()
                if len(jobs) < self._wake_at and not self._stop and not self._flushing:
                    wake.wait(_LINGER_S)
                self._lingering = False
            batch = [popleft() for _ in range(min(len(jobs), _BATCH))]
            self._write(batch, final=False)
            with self._progress:
                self._written += len(batch)
                self._progress.notify_all()

    def _write(self, jobs: Sequence[Any], *, final: bool) -> None:
        dropped = self.dropped
        since = dropped - self._reported
        if not jobs and not (final and since):
            return
        try:
            self._handle(jobs, since, dropped)
            self._reported = dropped
        except Exception as exc:  # the writer must outlive any one failure
            self.failures += 1
            print(
                f"elicitguard: audit writer failed on {len(jobs)} record(s): {type(exc).__name__}",
                file=sys.stderr,
            )


def _restart_writers_in_child() -> None:
    for writer in list(_writers):
        writer._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_restart_writers_in_child)
