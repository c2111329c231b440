"""Fuzz target: body decoding and reading (content codings, labels, JSON-RPC sniffing).

The first byte picks a chain of codings and a chunk size; the rest is the body. Decoding any
bytes ends in output or a clean refusal (EncodingError, BodyTooLarge) within the limit; the
same bytes encoded with that chain decode back to themselves however they are cut; sniffing
and labels never raise.
"""

from __future__ import annotations

import contextlib
import gzip
import zlib

import atheris
import brotli
from _common import EXPECTED, main

with atheris.instrument_imports():
    from elicitguard.integrations.bodies import label_of, sniff
    from elicitguard.integrations.encodings import StreamDecoder, content_codings, decode_body

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd

CHAINS = [
    ["gzip"],
    ["deflate"],
    ["br"],
    ["zstd"],
    ["gzip", "br"],
    ["zstd", "gzip"],
    ["deflate", "deflate"],
    ["x-gzip"],
]
ENCODE = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstd.compress,
}
LIMIT = 1 << 20


def decode_in_pieces(data: bytes, codings: list[str], step: int) -> bytes:
    decoder = StreamDecoder(content_codings([", ".join(codings)]), piece=4096)
    out = bytearray()
    for i in range(0, len(data), step):
        for piece in decoder.feed(data[i : i + step]):
            assert len(piece) <= 4096
            out += piece
            if len(out) > LIMIT:
                return bytes(out)
    decoder.finish()
    return bytes(out)


def test_one_input(data: bytes) -> None:
    if not data:
        return
    codings = CHAINS[data[0] % len(CHAINS)]
    step = (data[0] >> 3) + 1
    body = data[1:]
    with contextlib.suppress(*EXPECTED):
        decode_body(body, content_codings(codings), limit=LIMIT)
    with contextlib.suppress(*EXPECTED):
        decode_in_pieces(body, codings, step)
    encoded = body
    for name in codings:
        encoded = ENCODE[name](encoded)
    assert decode_in_pieces(encoded, codings, step) == body
    assert decode_body(encoded, content_codings(codings), limit=LIMIT) == body
    sniff(body)
    label_of(body[:64])


if __name__ == "__main__":
    main(test_one_input)
