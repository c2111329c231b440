"""Fuzz target: the capture readers (envelope JSONL, raw JSON-RPC JSONL, HAR)."""

from __future__ import annotations

import io

import atheris
from _common import EXPECTED, main

with atheris.instrument_imports():
    from elicitguard.lint.envelopes import read_envelopes
    from elicitguard.lint.har_reader import read_har
    from elicitguard.lint.jsonrpc_reader import read_jsonrpc


def test_one_input(data: bytes) -> None:
    """Every reader yields entries or line errors for any bytes, and never raises otherwise."""
    if not data:
        return
    which, body = data[0] % 3, data[1:]
    stream = io.BytesIO(body)
    try:
        if which == 0:
            for _ in read_envelopes(stream, max_bytes=1 << 20, max_depth=64):
                pass
        elif which == 1:
            for _ in read_jsonrpc(stream, max_bytes=1 << 20, max_depth=64):
                pass
        else:
            for _ in read_har(stream, max_bytes=1 << 20, max_depth=64):
                pass
    except EXPECTED:
        return


if __name__ == "__main__":
    main(test_one_input)
