"""Content codings and body labels: the pieces of the HTTP doors' one rule, in process."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elicitguard.integrations.bodies import label_of, sniff
from elicitguard.integrations.encodings import (
    BodyTooLarge,
    EncodingError,
    StreamDecoder,
    content_codings,
    decode_body,
)

brotli = pytest.importorskip("brotli")
zstd = pytest.importorskip("backports.zstd")


def raw_deflate(data: bytes) -> bytes:
    obj = zlib.compressobj(wbits=-15)
    return obj.compress(data) + obj.flush()


ENCODE = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstd.compress,
}
MESSAGE = b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'


def test_content_codings_read_the_header() -> None:
    """Lists and repeated headers, in the order applied; identity and case dropped."""
    assert content_codings([b"gzip, BR", b"identity", b"x-gzip"]) == ["gzip", "br", "gzip"]
    assert content_codings([]) == []


@pytest.mark.parametrize("name", sorted(ENCODE))
def test_each_coding_decodes_however_it_is_cut(name: str) -> None:
    """One byte at a time or whole: the same body."""
    encoded = ENCODE[name](MESSAGE)
    assert decode_body(encoded, [name], limit=1000) == MESSAGE
    decoder = StreamDecoder([name])
    out = b"".join(piece for i in range(len(encoded)) for piece in decoder.feed(encoded[i : i + 1]))
    decoder.finish()
    assert out == MESSAGE


def test_raw_deflate_several_members_and_frames() -> None:
    """Raw deflate (some servers send it), gzip members and zstd frames back to back."""
    assert decode_body(raw_deflate(MESSAGE), ["deflate"], limit=1000) == MESSAGE
    assert decode_body(gzip.compress(b"a") + gzip.compress(b"b"), ["gzip"], limit=9) == b"ab"
    assert decode_body(zstd.compress(b"a") + zstd.compress(b"b"), ["zstd"], limit=9) == b"ab"


def test_stacked_codings_are_undone_right_to_left() -> None:
    """``Content-Encoding: gzip, br`` means gzip first, then br."""
    encoded = brotli.compress(gzip.compress(MESSAGE))
    assert decode_body(encoded, content_codings([b"gzip, br"]), limit=1000) == MESSAGE
    with pytest.raises(EncodingError, match="stacked"):
        StreamDecoder(["gzip"] * 5)


@pytest.mark.parametrize("name", sorted(ENCODE))
def test_a_bomb_is_refused_after_bounded_output(name: str) -> None:
    """64 MiB of zeros in a few KiB: refused just past the limit, never inflated whole."""
    bomb = ENCODE[name](bytes(64 << 20))
    with pytest.raises(BodyTooLarge) as caught:
        decode_body(bomb, [name], limit=1 << 20)
    assert caught.value.decoded <= (1 << 20) + 64 * 1024
    decoder = StreamDecoder([name], piece=4096)
    assert all(len(piece) <= 4096 for piece, _ in zip(decoder.feed(bomb), range(100), strict=False))


@pytest.mark.parametrize("name", sorted(ENCODE))
def test_truncated_and_corrupt_bodies_name_the_coding(name: str) -> None:
    encoded = ENCODE[name](MESSAGE * 20)
    with pytest.raises(EncodingError) as truncated:
        decode_body(encoded[: len(encoded) // 2], [name], limit=10_000)
    assert truncated.value.encoding == name
    with pytest.raises(EncodingError) as corrupt:
        decode_body(b"\x00not compressed at all" * 3, [name], limit=10_000)
    assert corrupt.value.encoding == name
    with pytest.raises(EncodingError, match="compress"):
        decode_body(b"x", ["compress"], limit=10)


@settings(max_examples=60, deadline=None)
@given(
    st.binary(max_size=3000),
    st.lists(st.sampled_from(sorted(ENCODE)), min_size=1, max_size=3),
    st.integers(min_value=1, max_value=500),
)
def test_round_trip_any_chain(body: bytes, chain: list[str], step: int) -> None:
    """Any bytes, any chain of codings, any cutting: decoded back exactly."""
    encoded = body
    for name in chain:
        encoded = ENCODE[name](encoded)
    decoder = StreamDecoder(chain, piece=512)
    out = bytearray()
    for i in range(0, len(encoded), step):
        for piece in decoder.feed(encoded[i : i + step]):
            assert len(piece) <= 512
            out += piece
    decoder.finish()
    assert bytes(out) == body


def test_labels() -> None:
    assert label_of(b"application/json; charset=utf-8") == "json"
    assert label_of("application/vnd.x+json") == "json"
    assert label_of(b"Text/Event-Stream") == "sse"
    assert label_of(b"text/plain") == "other"
    assert label_of(None) == "other"


@pytest.mark.parametrize(
    ("body", "found"),
    [
        (MESSAGE, "json"),
        (b"\xef\xbb\xbf  " + MESSAGE, "json"),
        (b'[{"METHOD": "elicitation/create"}]', "json"),
        (b"data: " + MESSAGE + b"\n\n", "sse"),
        (b"[" * 5000 + b'{"jsonrpc": "2.0"}' + b"]" * 5000, "json"),  # too deep: fails closed
        (b"<html>Not found</html>", None),
        (b'{"detail": "not found"}', None),
        (b"", None),
        (json.dumps({"a": [1, 2]}).encode(), None),
    ],
)
def test_sniff_reads_what_a_lenient_peer_reads(body: bytes, found: str | None) -> None:
    assert sniff(body) == found
