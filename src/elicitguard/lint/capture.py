"""What every capture reader yields: a message or a problem, and where it sits in the file.

Readers differ in what "where" means: a line of a JSONL file (envelopes, raw JSON-RPC), or an
entry of a HAR document and the event inside its SSE response body. :class:`Location` holds
all three; the JSON report writes ``entry`` and ``event`` only when they are set, so the keys
of line-based reports never change.

A reader yields one of three things per message it meets:

* an :class:`~elicitguard.protocol.envelope.Envelope` to evaluate;
* a :class:`~elicitguard.lint.envelopes.LineError`: a frame that cannot be parsed (the
  engine turns it into EG903-EG905 as well as an ``errors[]`` entry);
* a :class:`Skipped`: a message the reader refuses to evaluate because it would have to
  guess (an ambiguous direction, a body that was not captured). It goes to ``errors[]`` only.

None of them ever carries content from the capture.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from elicitguard.lint.envelopes import LineError
from elicitguard.protocol.envelope import Envelope

__all__ = [
    "INPUT_FORMATS",
    "CaptureEntry",
    "CaptureStream",
    "InputFormat",
    "Location",
    "Skipped",
]

InputFormat = Literal["envelope", "jsonrpc", "har"]
INPUT_FORMATS: tuple[str, ...] = ("auto", "envelope", "jsonrpc", "har")


@dataclass(frozen=True, slots=True)
class Location:
    """Where a message sits: a 1-based line, or a HAR entry and SSE event (both 0-based).

    ``entry`` is the index into ``log.entries`` (so ``jq '.log.entries[N]'`` shows it);
    ``event`` is the index of the SSE event within that entry's response body, ``None`` for
    a request body or a plain JSON response.
    """

    line: int | None = None
    entry: int | None = None
    event: int | None = None

    def describe(self) -> str:
        """A short human form: ``12`` for a line, ``entry 3 event 1`` for HAR."""
        if self.entry is None:
            return str(self.line) if self.line is not None else ""
        text = f"entry {self.entry}"
        return text + (f" event {self.event}" if self.event is not None else "")


@dataclass(frozen=True, slots=True)
class Skipped:
    """A message the reader did not evaluate, and why (never its content).

    ``report`` is false for messages skipped because no rule reads them (a ``ping`` whose
    direction is unknowable): they are counted, not listed in ``errors[]``.
    """

    message: str
    report: bool = True


#: One item a reader yields.
CaptureEntry = tuple[Location, Envelope | LineError | Skipped]
#: What a reader returns.
CaptureStream = Iterator[CaptureEntry]
