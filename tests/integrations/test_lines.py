"""Splitting newline-delimited frames: what the stdio proxy's pumps get from each read."""

from __future__ import annotations

from elicitguard.integrations.lines import HEAD_BYTES, Line, LineSplitter


def test_whole_chunk_comes_back_as_plain_lines_and_marked_whole() -> None:
    """Complete lines in one read are bytes, and ``whole`` allows sending the chunk as is."""
    splitter = LineSplitter(1000)
    assert splitter.feed(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    assert splitter.whole


def test_blank_lines_are_skipped_and_the_chunk_is_not_whole() -> None:
    """A blank line is never a frame; the chunk then differs from its lines."""
    splitter = LineSplitter(1000)
    assert splitter.feed(b'{"a":1}\n\n  \n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    assert not splitter.whole


def test_a_line_split_across_reads_is_joined() -> None:
    """A partial tail waits for the rest; the read that completes it is not whole."""
    splitter = LineSplitter(1000)
    assert splitter.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert not splitter.whole
    assert splitter.feed(b":2}\n") == [b'{"b":2}']
    assert not splitter.whole
    assert splitter.feed(b'{"c":3}\n') == [b'{"c":3}']
    assert splitter.whole
    assert splitter.finish() is None


def test_oversized_lines_keep_only_their_head() -> None:
    """Over the limit, in one read or across many: a Line with the head and the full size."""
    splitter = LineSplitter(100)
    [big, small] = splitter.feed(b"x" * 20_000 + b"\n" + b'{"a":1}\n')
    assert isinstance(big, Line)
    assert big.oversize
    assert big.size == 20_000
    assert len(big.data) == HEAD_BYTES
    assert small == b'{"a":1}'
    assert not splitter.whole
    assert splitter.feed(b"y" * 150) == []
    assert splitter.feed(b"y" * 150) == []
    [skipped] = splitter.feed(b"yy\ntail")
    assert isinstance(skipped, Line)
    assert skipped.size == 302
    assert splitter.finish() == b"tail"
