"""The SSE parser reads an event stream exactly as the WHATWG standard says a client does.

``reference_events`` below is a plain transcription of the HTML standard's "event stream
interpretation" (html.spec.whatwg.org, server-sent events, section 9.2.6): decode as UTF-8
with replacement, strip one leading BOM, split into lines at CRLF, LF or CR, and process
each line. Hypothesis generates streams (random chunking, mixed line endings, BOMs,
comments, multi-line data, fields without a colon, NUL in ids, odd retry values) and the
parser must yield what the reference dispatches. For a stream that ends without a blank
line, the parser's extra ``terminated=False`` event must be what a lenient client reads:
the reference run on the stream with a blank line added.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from elicitguard.protocol.sse import SseEvent, SseParser

Dispatched = tuple[str, str, str]  # (type, data, last event id)


def _lines(text: str) -> tuple[list[str], str]:
    """Complete lines (each ended by CRLF, LF or CR) and the unterminated rest."""
    lines: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\r":
            lines.append("".join(current))
            current = []
            i += 2 if text[i + 1 : i + 2] == "\n" else 1
            continue
        if ch == "\n":
            lines.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    return lines, "".join(current)


def reference_events(stream: bytes) -> tuple[list[Dispatched], list[str]]:
    """What a browser dispatches (type, data, lastEventId), and the retry values it takes."""
    text = stream.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines, _rest = _lines(text)  # "any pending data must be discarded" at the end
    data = ""
    event_type = ""
    last_id_buffer = ""
    dispatched: list[Dispatched] = []
    retries: list[str] = []
    for line in lines:
        if line == "":
            if data == "":
                event_type = ""
                continue
            if data.endswith("\n"):
                data = data[:-1]
            dispatched.append((event_type or "message", data, last_id_buffer))
            data = ""
            event_type = ""
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
        else:
            field, value = line, ""
        if field == "event":
            event_type = value
        elif field == "data":
            data += value + "\n"
        elif field == "id":
            if "\x00" not in value:
                last_id_buffer = value
        elif field == "retry" and value and all(c in "0123456789" for c in value):
            retries.append(value)
    return dispatched, retries


def parser_events(
    chunks: list[bytes], *, terminated_only: bool = True
) -> tuple[list[Dispatched], list[str], list[SseEvent]]:
    parser = SseParser(1 << 24)
    events: list[SseEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    dispatched: list[Dispatched] = []
    retries: list[str] = []
    last_id = ""
    for event in events:
        if event.retry is not None:
            retries.append(event.retry.decode())  # a browser applies it at once
        if not event.terminated and terminated_only:
            continue
        if event.id is not None:
            last_id = event.id.decode("utf-8", "replace")
        if event.data is not None:
            kind = (event.event or b"").decode("utf-8", "replace") or "message"
            dispatched.append((kind, event.data.decode("utf-8", "replace"), last_id))
    return dispatched, retries, events


NAMES = st.sampled_from(
    ["data", "data", "data", "event", "id", "retry", "Data", "dat", "", "datа", "x", " data"]
)
VALUES = st.one_of(
    st.sampled_from(["", " ", "  x", "{}", '{"a": 1}', "12", "0", "1a", "\x00", "a\x00b", ":"]),
    st.text(
        alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]),
        max_size=12,
    ),
)
EOL = st.sampled_from(["\n", "\r", "\r\n"])


@st.composite
def lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["field", "field", "field", "nocolon", "comment", "blank"]))
    if kind == "blank":
        return ""
    if kind == "comment":
        return ":" + draw(VALUES)
    name = draw(NAMES)
    if kind == "nocolon":
        return name.replace(":", "")
    separator = draw(st.sampled_from([":", ": ", ":  "]))
    return name + separator + draw(VALUES)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    body = "".join(line + draw(EOL) for line in draw(st.lists(lines(), max_size=30)))
    if draw(st.booleans()):
        body += draw(lines())  # a last line without its line end
    raw = body.encode("utf-8")
    if draw(st.booleans()):
        raw = b"\xff" + raw  # invalid UTF-8 decodes to U+FFFD in both readings
    boms = draw(st.sampled_from([0, 0, 1, 2]))
    return b"\xef\xbb\xbf" * boms + raw


def _chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@settings(max_examples=400, deadline=None)
@given(streams(), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_parser_dispatches_what_the_standard_dispatches(stream: bytes, cuts: list[int]) -> None:
    """Any stream, cut anywhere: the terminated events are exactly the standard's."""
    got, retries, events = parser_events(_chunked(stream, cuts))
    want, want_retries = reference_events(stream)
    assert got == want
    # The reconnection time in force at the end (an event reports its last valid retry);
    # a last line without its line end is read by the guard, not by a browser.
    if stream.endswith((b"\r", b"\n")):
        assert retries[-1:] == want_retries[-1:]
    assert sum(1 for e in events if not e.terminated) <= 1
    assert all(e.terminated for e in events[:-1])


@settings(max_examples=300, deadline=None)
@given(streams(), st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_an_unterminated_last_event_is_what_a_lenient_client_reads(
    stream: bytes, cuts: list[int]
) -> None:
    """The guard's extra last event is the standard's reading with a blank line added."""
    got, _, _ = parser_events(_chunked(stream, cuts), terminated_only=False)
    want, _ = reference_events(stream + b"\n\n")
    assert got == want


@given(streams())
def test_raw_bytes_rebuild_the_stream(stream: bytes) -> None:
    """What passes on unchanged is the stream less one BOM and the blank lines between events."""
    _, _, events = parser_events([stream], terminated_only=False)
    joined = b"".join(e.raw for e in events)
    body = stream.removeprefix(b"\xef\xbb\xbf")
    assert (
        parser_events([joined], terminated_only=False)[0]
        == (parser_events([body], terminated_only=False)[0])
    )


def test_a_bom_split_across_chunks_is_stripped() -> None:
    """The BOM may arrive one byte at a time; only one is stripped."""
    stream = b'\xef\xbb\xbfdata: {"a":1}\n\n'
    for cut in (1, 2, 3):
        got, _, _ = parser_events([stream[:cut], stream[cut:]])
        assert got == [("message", '{"a":1}', "")]
    got, _, _ = parser_events([b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n"])
    assert got == []  # the second BOM is part of the field name, as in browsers


def test_a_cr_at_a_chunk_end_and_an_lf_in_the_next_are_one_line_end() -> None:
    """CR | LF across chunks is one CRLF, not a line end and a blank line."""
    got, _, events = parser_events([b"data: a\r", b"\ndata: b\r", b"\n\r\n"])
    assert got == [("message", "a\nb", "")]
    assert len(events) == 1


def test_cr_only_lines() -> None:
    """Old Mac line ends are line ends."""
    got, _, _ = parser_events([b"event: message\rdata: {}\r\r"])
    assert got == [("message", "{}", "")]
