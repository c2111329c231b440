"""Bounded, repeated decoding: the other readings of a value that hides another value.

Why: a user (or a hostile form default) can carry a credential percent-encoded twice, in
base64, base64url, base32, base85 or hex, as decimal or binary character codes, as JSON
inside a string, behind HTML character references and backslash escapes, as a string
literal cut in two and joined again in code, wrapped over a shell line continuation, or
with look-alike letters from another script or accents put on its letters; a scanner that
reads only the literal string lets all of those through. :func:`readings` returns every
decoded text reachable in a few steps, each step bounded in depth, count and size, so
hostile input costs at most a fixed multiple of its length. A decoded text counts only
when it is printable UTF-8: random key material and hashes decode to binary and are
dropped, and base64 of ordinary text decodes to ordinary text, which the scanners then
judge like any other.
"""

from __future__ import annotations

import base64
import binascii
import functools
import html
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any, Final
from urllib.parse import unquote

import orjson
import re2

from elicitguard.checks.visible import visible_form

__all__ = ["MAX_DEPTH", "decoded_whole", "json_inside", "readings"]

MAX_DEPTH: Final = 3
_MAX_READINGS: Final = 24
_MAX_CHARS: Final = 64 << 10
_MAX_RUNS: Final = 8

_PERCENT_RE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_B64_RUN_RE: Final = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN_RE: Final = re.compile(r"(?:[0-9A-Fa-f]{2}){8,}")
_B32_RUN_RE: Final = re.compile(r"[A-Z2-7]{16,}={0,6}")
#: A string literal cut in two and joined again in code: ``"ghp_R7tX" + "q2Lm…"`` (``+`` in
#: most languages, ``.`` in PHP and Perl, ``..`` in Lua, ``&`` in VB, ``||`` in SQL, nothing
#: in C and Python), with token characters on both sides of the cut.
_CONCAT_RE: Final = re.compile(
    r"(?<=[A-Za-z0-9_+/=-])([\"'])\s*+(?:\+|\.\.?|&|\|\|)?\s*+\1(?=[A-Za-z0-9_+/=-])"
)
_ESCAPE_RE: Final = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[0-7]{3}|[\\\"'/nrt])")
#: A text that is only character codes: decimal (``103 104 112``, ``103,104,112``) or
#: eight-bit binary (``01100111 01101000``), as a converter or ``ord()`` prints them.
_DECIMAL_CODES_RE: Final = re.compile(r"[0-9]{2,3}(?:[ ,;]+[0-9]{2,3}){7,}")
_BINARY_CODES_RE: Final = re.compile(r"[01]{8}(?:[ ,;]*[01]{8}){7,}")
#: A whole value that may be base85 or Ascii85: printable ASCII without whitespace, and not
#: only letters and digits (a word or an id is no such encoding).
_B85_RE: Final = re.compile(r"(?:<~)?[!-~]{20,}(?:~>)?")
_SIMPLE_ESCAPES: Final = {"n": "\n", "r": "\r", "t": "\t"}
#: A line break inside a token: a run of at least 8 token characters before it (never
#: ending in ``=`` or ``:``: ``KEY=`` then the next line is a name without its value), and
#: the next line going on at once with a run that ends the line or a word (a YAML line
#: ``kind: Secret`` or an indented one is the next entry, not the rest of a token).
_WRAPPED_RE: Final = re.compile(
    r"(?<=[A-Za-z0-9_+/.=-]{7}[A-Za-z0-9_+/.-])[ \t]*\r?\n(?=[A-Za-z0-9_+/=.-]{4,}(?:[\s\"'`,;)\]}]|$))"
)
#: A word of token characters with separators in it: the candidates for :func:`_regroup`.
_GROUPED_RE: Final = re2.compile(r"[A-Za-z0-9_+/=.|-]{15,}")
_GROUP_SEPARATORS: Final = frozenset("-.|/")
_ENTITY_RE: Final = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z]{2,8});")


def _printable(raw: bytes) -> str | None:
    """``raw`` as text when it is UTF-8 and nearly all printable, else None."""
    if len(raw) < 4:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    shown = sum(1 for c in text if c.isprintable() or c in "\t\r\n")
    return text if shown >= 0.95 * len(text) else None


def _b64(run: str) -> str | None:
    if run.isalpha() or run.isdigit():
        return None  # a word or a number, not an encoding
    core = run.rstrip("=")
    if len(core) % 4 == 1:
        return None
    padded = core + "=" * (-len(core) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable(raw)


def _b32(run: str) -> str | None:
    core = run.rstrip("=")
    if len(core) % 8 in (1, 3, 6):
        return None
    try:
        raw = base64.b32decode(core + "=" * (-len(core) % 8))
    except (binascii.Error, ValueError):
        return None
    return _printable(raw)


def _char_codes(text: str) -> str | None:
    """The text spelled by a run of decimal or binary character codes, when printable."""
    stripped = text.strip()
    if _BINARY_CODES_RE.fullmatch(stripped):
        codes = [int(code, 2) for code in re.findall(r"[01]{8}", stripped)]
    elif _DECIMAL_CODES_RE.fullmatch(stripped):
        codes = [int(code) for code in re.findall(r"[0-9]+", stripped)]
    else:
        return None
    if not all(32 <= code < 127 for code in codes):
        return None
    return "".join(map(chr, codes))


def _base85(text: str) -> str | None:
    """``text`` decoded as Ascii85 (``<~…~>`` or bare) or as base85, when printable."""
    stripped = text.strip()
    if not _B85_RE.fullmatch(stripped) or stripped.isalnum():
        return None
    framed = stripped.startswith("<~") and stripped.endswith("~>")
    for decode in (lambda t: base64.a85decode(t, adobe=framed), base64.b85decode):
        try:
            decoded = _printable(decode(stripped))
        except ValueError:
            continue
        if decoded is not None and decoded.isascii():
            return decoded
    return None


def _hex(run: str) -> str | None:
    try:
        return _printable(bytes.fromhex(run))
    except ValueError:
        return None


def _percent(text: str) -> str | None:
    """Percent-decoding repeated until the text stops changing (at most four rounds)."""
    current = text
    for _ in range(4):
        decoded = unquote(current, errors="strict") if "%" in current else current
        if decoded == current:
            break
        current = decoded
    return current if current != text else None


def _unescape(text: str) -> str | None:
    def one(match: re.Match[str]) -> str:
        body = match.group(0)[1:]
        if len(body) == 1:  # ``\"`` inside a JSON string pasted from source code
            return _SIMPLE_ESCAPES.get(body, body)
        if body[0] in "01234567":
            return chr(int(body, 8))
        return chr(int(body[1:], 16))

    decoded = _ESCAPE_RE.sub(one, text)
    return decoded if decoded != text else None


@functools.cache
def _ascii_lookalikes() -> dict[int, str]:
    """Non-ASCII characters whose UTS 39 skeleton is one ASCII letter, digit or ``_-.``
    (Cyrillic ``һ`` -> ``h``, Greek ``Ο`` -> ``O``), from the project's generated tables.
    Case is kept: token formats are case-sensitive."""
    from elicitguard.checks.domains._unicode import _tables

    return {
        ord(char): skel
        for char, skel in _tables().skeleton_map.items()
        if len(char) == 1
        and not char.isascii()
        and len(skel) == 1
        and skel.isascii()
        and (skel.isalnum() or skel in "_-.")
    }


def _without_marks(text: str) -> str:
    """``text`` with its combining marks removed after canonical decomposition."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _wrapped(text: str) -> str | None:
    """``text`` with the line breaks inside long token runs removed: a key pasted from a
    terminal, an e-mail or a PEM-style dump arrives wrapped (``ghp_wWPw5k4aXcaT\nfUH…``)."""
    joined = _WRAPPED_RE.sub("", text)
    return joined if joined != text else None


def _grouped(text: str) -> Iterator[str]:
    """``text`` with a token written in groups read joined (``ghp_-wWPw-5k4a-XcaT…``,
    ``AKIA.IOSF.ODNN…``): a separator at every ``n+1``-th place of a word, at least three
    times, and the last group no longer than the others. Separators the token has itself
    (``glpat-``) are off that rhythm and stay."""
    for index, match in enumerate(_GROUPED_RE.finditer(text)):
        if index >= _MAX_RUNS:
            break
        word = match.group(0)
        joined = _regroup(word)
        if joined is not None:
            yield text[: match.start()] + joined + text[match.end() :]


def _regroup(word: str) -> str | None:
    """``word`` without the separators that fall at one fixed rhythm, if any do."""
    for separator in _GROUP_SEPARATORS.intersection(word):
        for size in range(3, 9):
            cuts = range(size, len(word), size + 1)
            last = len(word) - (cuts[-1] + 1) if cuts else size + 1
            if len(cuts) >= 3 and last <= size and all(word[i] == separator for i in cuts):
                return "".join(word[i : i + size] for i in range(0, len(word), size + 1))
    return None


#: The encodings found as runs inside a text, each with its decoder.
_RUN_DECODERS: Final[tuple[tuple[re.Pattern[str], Callable[[str], str | None]], ...]] = (
    (_HEX_RUN_RE, _hex),
    (_B64_RUN_RE, _b64),
    (_B32_RUN_RE, _b32),
)


def _steps(text: str) -> Iterator[str]:
    """One decoding step of ``text``, each way it can be read."""
    if not text.isascii():
        # What the user sees: invisible characters dropped, full-width and other
        # compatibility letters folded ("my pas\u200bsword is …", "ｐａｓｓｗｏｒｄ").
        visible = visible_form(text)
        if visible != text:
            yield visible
        # ``gһp_…`` with a Cyrillic ``һ``: the token as it looks
        folded = visible.translate(_ascii_lookalikes())
        if folded != visible:
            yield folded
        # ``ghp_pĹI…``: an accent put on a letter of a token; the letters without their marks
        bare = _without_marks(folded)
        if bare != folded:
            yield bare
    if "\n" in text:
        if "\\\n" in text:
            yield text.replace("\\\r\n", "").replace("\\\n", "")  # a shell line continuation
        wrapped = _wrapped(text)
        if wrapped is not None:
            yield wrapped
    if _GROUP_SEPARATORS.intersection(text):
        yield from _grouped(text)
    if "%" in text and _PERCENT_RE.search(text):
        try:
            decoded = _percent(text)
        except UnicodeDecodeError:
            decoded = None
        if decoded is not None:
            yield decoded
    if "&" in text and _ENTITY_RE.search(text):
        decoded = html.unescape(text)
        if decoded != text:
            yield decoded
    if "\\" in text:
        decoded = _unescape(text)
        if decoded is not None:
            yield decoded
    if text[:1].isdigit():
        codes = _char_codes(text)
        if codes is not None:
            yield codes
    b85 = _base85(text)
    if b85 is not None:
        yield b85
    if ("'" in text or '"' in text) and _CONCAT_RE.search(text):
        yield _CONCAT_RE.sub("", text)
    for pattern, decode in _RUN_DECODERS:
        for index, match in enumerate(pattern.finditer(text)):
            if index >= _MAX_RUNS:
                break
            decoded = decode(match.group(0))
            if decoded is not None:
                yield decoded


_WHOLE_B64_RE: Final = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")


def decoded_whole(text: str) -> str | None:
    """``text`` decoded when all of it is one short base64 or hex run (a part of a token
    split over fields, each part encoded on its own), else None. Runs too short for
    :func:`readings` (under 16 characters) count here, where the parts are read joined."""
    stripped = text.strip()
    if _HEX_RUN_RE.fullmatch(stripped):
        return _hex(stripped)
    if _WHOLE_B64_RE.fullmatch(stripped):
        return _b64(stripped)
    return None


def readings(text: str) -> list[str]:
    """Every decoded text reachable from ``text`` in at most :data:`MAX_DEPTH` steps.

    ``text`` itself is not included. Bounded: at most a few dozen readings, each of at
    most 64 KiB; a reading already seen is not decoded again.
    """
    if len(text) < 8:
        return []
    found: list[str] = []
    seen = {text}
    layer = [text[:_MAX_CHARS]]
    for _depth in range(MAX_DEPTH):
        following: list[str] = []
        for current in layer:
            for decoded in _steps(current):
                decoded = decoded[:_MAX_CHARS]
                if decoded in seen or len(decoded) < 8:
                    continue
                seen.add(decoded)
                found.append(decoded)
                following.append(decoded)
                if len(found) >= _MAX_READINGS:
                    return found
        if not following:
            break
        layer = following
    return found


def json_inside(text: str) -> Any:
    """The JSON object or array a string holds (``'{"password": "…"}'``), else None."""
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in "{[" or len(stripped) > _MAX_CHARS:
        return None
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict | list) else None
