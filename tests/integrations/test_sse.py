"""The SSE parser (exact bytes, any line ending, bounded memory) and header consistency."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from elicitguard.integrations.asgi import consistent_headers
from elicitguard.integrations.sse import SseParser, format_event

STREAM = (
    b": comment\n\n"
    b'id: 1\nevent: message\ndata: {"a":1}\n\n'
    b'event: message\r\nid: 2\r\ndata: {"b":\r\ndata: 2}\r\n\r\n'
    b"id: 3\rdata: x\r\r"
    b"data: unfinished"
)


def parse(
    chunks: list[bytes], limit: int = 1 << 20
) -> list[tuple[bytes, bytes | None, bytes | None]]:
    parser = SseParser(limit)
    events = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return [(e.raw, e.data, e.id) for e in events]


def test_events_keep_their_exact_bytes() -> None:
    """Each event comes back with its raw bytes; an unfinished last event comes last, marked."""
    events = parse([STREAM])
    assert events == [
        (b": comment\n\n", None, None),
        (b'id: 1\nevent: message\ndata: {"a":1}\n\n', b'{"a":1}', b"1"),
        (b'event: message\r\nid: 2\r\ndata: {"b":\r\ndata: 2}\r\n\r\n', b'{"b":\n2}', b"2"),
        (b"id: 3\rdata: x\r\r", b"x", b"3"),
        (b"data: unfinished", b"unfinished", None),
    ]
    parser = SseParser(1 << 20)
    *_, last = parser.feed(STREAM) + parser.close()
    assert not last.terminated


@given(st.lists(st.integers(min_value=1, max_value=len(STREAM) - 1), max_size=8))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    """Where the network splits the stream does not matter (CRLF split included)."""
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert parse(chunks) == parse([STREAM])


def test_oversized_event_is_skipped_with_bounded_memory() -> None:
    """An event over the limit keeps its id and size, not its data; the next one is intact."""
    parser = SseParser(100)
    events = []
    events += parser.feed(b"id: big\ndata: " + b"a" * 50)
    for _ in range(100):
        events += parser.feed(b"a" * 1000)
    events += parser.feed(b"\n\ndata: ok\n\n")
    big, ok = events
    assert big.oversize
    assert big.id == b"big"
    assert big.data is None
    assert big.size > 100_000
    assert ok.data == b"ok"
    assert len(parser._buf) == 0


def test_format_event() -> None:
    """A replacement event keeps event type, id and retry."""
    assert format_event(b"{}", event=b"message", id=b"7", retry=b"100") == (
        b"event: message\nid: 7\nretry: 100\ndata: {}\n\n"
    )


def test_consistent_headers_follow_the_body() -> None:
    """Mcp-* headers present are set from the body; absent ones are not added."""
    headers = [
        (b"Mcp-Method", b"tools/list"),
        (b"Mcp-Name", b"old"),
        (b"content-length", b"5"),
        (b"Mcp-Param-X", b"y"),
    ]
    message = {
        "method": "tools/call",
        "params": {
            "name": "caf\u00e9",
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        },
    }
    assert consistent_headers(headers, message) == [
        (b"Mcp-Method", b"tools/call"),
        (b"Mcp-Name", b"=?base64?Y2Fmw6k=?="),
        (b"Mcp-Param-X", b"y"),
    ]
