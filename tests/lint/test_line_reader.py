"""The block-splitting line reader reads every capture exactly as a line-by-line reader does.

The reference below is the reader it replaced (``readline(max_bytes + 2)`` per line): the
same numbers, bytes, sizes and over-the-limit verdicts for random inputs full of the edge
cases (carriage returns, blank lines, lines at and past the limit, a last line without
newline), read in blocks small enough that lines straddle them.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator

import pytest

from elicitguard.lint import envelopes
from elicitguard.lint.envelopes import read_lines


def _reference(stream: io.BytesIO, max_bytes: int) -> Iterator[tuple[int, bytes | None, int]]:
    number = 0
    while True:
        chunk = stream.readline(max_bytes + 2)
        if not chunk:
            return
        number += 1
        size = len(chunk)
        if not chunk.endswith(b"\n") and len(chunk) > max_bytes:
            while True:
                rest = stream.readline(1 << 20)
                size += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield number, None, size
            continue
        line = chunk.rstrip(b"\r\n")
        if line and not line.isspace():
            yield number, line, size


def _capture(rng: random.Random, max_bytes: int) -> bytes:
    pieces = []
    for _ in range(rng.randint(0, 30)):
        length = rng.choice(
            [
                0,
                1,
                max_bytes - 1,
                max_bytes,
                max_bytes + 1,
                max_bytes + 2,
                max_bytes * 3,
                rng.randint(0, max_bytes * 2),
            ]
        )
        body = bytes(rng.choice(b"ab {}\r \t") for _ in range(max(length, 0)))
        pieces.append(body + rng.choice([b"\n", b"\r\n", b"\n", b"\r\r\n"]))
    if pieces and rng.random() < 0.5:
        pieces[-1] = pieces[-1].rstrip(b"\r\n")  # a last line without newline
    return b"".join(pieces)


@pytest.mark.parametrize("block", [1, 3, 7, 16, 1 << 20])
def test_block_reader_matches_the_line_reader(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(envelopes, "_BLOCK", block)
    rng = random.Random(block)
    for _ in range(300):
        max_bytes = rng.randint(1, 12)
        data = _capture(rng, max_bytes)
        got = [tuple(c) for c in read_lines(io.BytesIO(data), max_bytes)]
        assert got == list(_reference(io.BytesIO(data), max_bytes)), (data, max_bytes)
