"""Content-Encoding decoding for the HTTP doors, streaming and capped.

The guard asks for ``Accept-Encoding: identity``, but a server (or a client's POST) may
still send a compressed body, and a compliant peer decodes it. So the guard decodes too,
then judges what the peer would read. Every coding a browser or an HTTP library decodes is
handled: ``gzip`` (``x-gzip``; several members), ``deflate`` (zlib-wrapped, or raw as some
servers send it), ``br`` and ``zstd`` (several frames), stacked in any order
(``Content-Encoding: gzip, br`` is undone right to left), at most :data:`MAX_CODINGS` deep.

Decoding never holds more than ``piece`` bytes of output at a time: each decoder is asked
for a bounded amount (zlib and zstd ``max_length``, brotli ``output_buffer_limit``), so a
decompression bomb is refused once the caller's limit is passed, after a bounded amount of
work, never after inflating it. Libraries: the standard ``zlib``; ``brotli`` (Google's own
bindings, whose 1.2 API bounds the output of each call); ``compression.zstd`` on Python
3.14, else ``backports.zstd`` (its backport, the same API as ``zlib`` with ``max_length``).
A coding whose library is not installed is refused with an error that names it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from elicitguard.errors import ElicitguardError

__all__ = [
    "MAX_CODINGS",
    "SUPPORTED",
    "BodyTooLarge",
    "EncodingError",
    "StreamDecoder",
    "content_codings",
    "decode_body",
]

#: Stacked codings beyond this are refused (no server stacks more than two).
MAX_CODINGS = 4
#: Decoded bytes produced per step.
PIECE = 64 * 1024
_ALIASES = {"x-gzip": "gzip", "x-deflate": "deflate"}
SUPPORTED = ("gzip", "deflate", "br", "zstd")


class EncodingError(ElicitguardError):
    """A body that cannot be decoded; ``encoding`` names the coding, ``str()`` says why."""

    def __init__(self, encoding: str, reason: str) -> None:
        super().__init__(f"{encoding}: {reason}")
        self.encoding = encoding
        self.reason = reason


class BodyTooLarge(ElicitguardError):
    """The decoded body passed the limit (``decoded`` bytes so far, ``encoding`` the chain)."""

    def __init__(self, encoding: str, decoded: int) -> None:
        super().__init__(f"{encoding}: decoded body over the limit after {decoded} bytes")
        self.encoding = encoding
        self.decoded = decoded


def content_codings(values: Iterable[bytes | str]) -> list[str]:
    """The codings named by ``Content-Encoding`` header values, in the order applied.

    ``identity`` (and empty entries) are dropped; names are lower-cased; aliases mapped.
    """
    codings: list[str] = []
    for value in values:
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        for token in text.split(","):
            name = token.strip().lower()
            if name and name != "identity":
                codings.append(_ALIASES.get(name, name))
    return codings


class _Stage(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]: ...

    def finish(self) -> None: ...


class _Zlib:
    """gzip (members one after another) or deflate (zlib-wrapped or raw, told by the header)."""

    def __init__(self, name: str, piece: int) -> None:
        self.name = name
        self.piece = piece
        self.obj: Any = None
        self.head = b""
        self.ended = False

    def _new(self, data: bytes) -> Any:
        if self.name == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        wrapped = len(data) >= 2 and data[0] & 0x0F == 8 and ((data[0] << 8) | data[1]) % 31 == 0
        return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self.obj is None:
                if self.name == "deflate" and len(self.head) + len(data) < 2:
                    self.head += data
                    return
                data, self.head = self.head + data, b""
                if self.ended and self.name == "deflate":
                    raise EncodingError(self.name, "data after the end of the stream")
                self.obj = self._new(data)
            try:
                out = self.obj.decompress(data, self.piece)
                if out:
                    yield out
                while self.obj.unconsumed_tail and not self.obj.eof:
                    tail = self.obj.unconsumed_tail
                    out = self.obj.decompress(tail, self.piece)
                    if not out and self.obj.unconsumed_tail == tail:
                        raise EncodingError(self.name, "the decoder makes no progress")
                    yield out
                if not self.obj.eof:
                    while True:  # output still held back although all input was taken
                        out = self.obj.decompress(b"", self.piece)
                        if not out:
                            break
                        yield out
            except zlib.error as exc:
                raise EncodingError(self.name, f"not valid {self.name} data ({exc})") from None
            if not self.obj.eof:
                return
            data = self.obj.unused_data
            self.obj = None
            self.ended = True
            if self.name == "gzip":
                data = data.lstrip(b"\x00")  # zero padding after the last member, as gzip(1)

    def finish(self) -> None:
        if self.head or (self.obj is not None and not self.obj.eof) or not self.ended:
            raise EncodingError(self.name, "the body ends before the compressed stream does")


class _Brotli:
    def __init__(self, piece: int) -> None:
        try:
            import brotli
        except ImportError:
            raise EncodingError(
                "br", "not supported here (the brotli package is missing)"
            ) from None
        self.module: Any = brotli
        self.obj: Any = brotli.Decompressor()
        self.piece = piece

    def feed(self, data: bytes) -> Iterator[bytes]:
        obj = self.obj
        try:
            if obj.is_finished():
                if data:
                    raise EncodingError("br", "data after the end of the stream")
                return
            out = obj.process(data, output_buffer_limit=self.piece)
            yield from self._sliced(out)
            while not obj.can_accept_more_data() and not obj.is_finished():
                out = obj.process(b"", output_buffer_limit=self.piece)
                if not out:
                    break
                yield from self._sliced(out)
        except self.module.error as exc:
            raise EncodingError("br", f"not valid br data ({exc})") from None

    def _sliced(self, out: bytes) -> Iterator[bytes]:
        """brotli stops growing its buffer once past the limit (by up to about 32 KiB)."""
        for start in range(0, len(out), self.piece):
            yield out[start : start + self.piece]

    def finish(self) -> None:
        if not self.obj.is_finished():
            raise EncodingError("br", "the body ends before the compressed stream does")


def _zstd_module() -> Any:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from backports import zstd  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            raise EncodingError(
                "zstd", "not supported here (the backports.zstd package is missing)"
            ) from None
    return zstd


class _Zstd:
    def __init__(self, piece: int) -> None:
        self.module = _zstd_module()
        self.obj: Any = None
        self.piece = piece
        self.ended = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        module = self.module
        while data or (self.obj is not None and not self.obj.needs_input and not self.obj.eof):
            if self.obj is None:
                self.obj = module.ZstdDecompressor()
            try:
                out = self.obj.decompress(data, self.piece)
                if out:
                    yield out
                while not self.obj.eof and not self.obj.needs_input:
                    out = self.obj.decompress(b"", self.piece)
                    if out:
                        yield out
            except module.ZstdError as exc:
                raise EncodingError("zstd", f"not valid zstd data ({exc})") from None
            if not self.obj.eof:
                return
            data = self.obj.unused_data
            self.obj = None
            self.ended = True

    def finish(self) -> None:
        if self.obj is not None or not self.ended:
            raise EncodingError("zstd", "the body ends before the compressed stream does")


def _stage(name: str, piece: int) -> _Stage:
    if name in ("gzip", "deflate"):
        return _Zlib(name, piece)
    if name == "br":
        return _Brotli(piece)
    if name == "zstd":
        return _Zstd(piece)
    raise EncodingError(name, "not a content coding elicitguard can decode")


class StreamDecoder:
    """Undo stacked codings incrementally; each yielded piece is at most ``piece`` bytes.

    Raises :class:`EncodingError` for an unknown coding (at construction), a corrupt or
    truncated body, or more than :data:`MAX_CODINGS` codings.
    """

    def __init__(self, codings: list[str], *, piece: int = PIECE) -> None:
        if len(codings) > MAX_CODINGS:
            raise EncodingError(", ".join(codings), f"more than {MAX_CODINGS} stacked codings")
        self.name = ", ".join(codings)
        # Applied left to right, so undone right to left.
        self._stages = [_stage(name, piece) for name in reversed(codings)]

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded output for ``data``, piece by piece (stop reading to stop decoding)."""
        yield from self._through(0, data)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._stages):
            if data:
                yield data
            return
        for out in self._stages[index].feed(data):
            yield from self._through(index + 1, out)

    def finish(self) -> None:
        """The body ended: raise :class:`EncodingError` when a stream inside it did not."""
        for stage in self._stages:
            stage.finish()


def decode_body(data: bytes, codings: list[str], *, limit: int) -> bytes:
    """The whole decoded body, or :class:`BodyTooLarge` once it passes ``limit`` bytes."""
    if not codings:
        return data
    decoder = StreamDecoder(codings)
    out = bytearray()
    for piece in decoder.feed(data):
        out += piece
        if len(out) > limit:
            raise BodyTooLarge(decoder.name, len(out))
    decoder.finish()
    return bytes(out)
