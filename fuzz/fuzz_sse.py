"""Fuzz target: the SSE parser, differential against a transcription of the WHATWG algorithm.

The first byte chooses where the stream is cut into chunks; the rest is the stream. The
parser must never raise, give the same events however the stream is cut, return at most one
unterminated event (the last), and dispatch exactly what the standard's reading dispatches.
"""

from __future__ import annotations

import atheris
from _common import main

with atheris.instrument_imports():
    from elicitguard.protocol.sse import SseParser


def reference(stream: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """The standard's event stream interpretation, on bytes: (type, data, last event id)."""
    if stream.startswith(b"\xef\xbb\xbf"):
        stream = stream[3:]
    lines: list[bytes] = []
    start = 0
    i = 0
    while i < len(stream):
        c = stream[i : i + 1]
        if c in (b"\r", b"\n"):
            lines.append(stream[start:i])
            i += 2 if stream[i : i + 2] == b"\r\n" else 1
            start = i
            continue
        i += 1
    data, kind, last_id = b"", b"", b""
    out: list[tuple[bytes, bytes, bytes]] = []
    for line in lines:
        if not line:
            if data:
                out.append((kind or b"message", data[:-1], last_id))
            data, kind = b"", b""
            continue
        if line.startswith(b":"):
            continue
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            data += value + b"\n"
        elif name == b"event":
            kind = value
        elif name == b"id" and b"\x00" not in value:
            last_id = value
    return out


def parse(chunks: list[bytes], limit: int) -> tuple[list[tuple[bytes, bytes, bytes]], list[bool]]:
    parser = SseParser(limit)
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    out = []
    last_id = b""
    for event in events:
        if event.id is not None:
            last_id = event.id
        if event.terminated and event.data is not None:
            out.append((event.event or b"message", event.data, last_id))
    return out, [e.terminated for e in events]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    step, stream = data[0] + 1, data[1:]
    whole, flags = parse([stream], 1 << 24)
    pieces = [stream[i : i + step] for i in range(0, len(stream), step)]
    cut, cut_flags = parse(pieces, 1 << 24)
    assert whole == cut, (whole, cut)
    assert flags == cut_flags
    assert all(flags[:-1])
    assert whole == reference(stream), (whole, reference(stream))
    parse(pieces, 64)  # a small limit: oversize events, bounded memory, no exception


if __name__ == "__main__":
    main(test_one_input)
