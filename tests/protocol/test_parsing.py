"""Frame parsing: orjson first, the standard library second, limits always."""

from __future__ import annotations

import pytest

from elicitguard.errors import FrameError
from elicitguard.protocol.parsing import has_duplicate_keys, parse_frame


def test_parses_a_plain_object() -> None:
    """A JSON-RPC object comes back as a dict."""
    assert parse_frame(b'{"jsonrpc":"2.0","id":1,"method":"ping"}') == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "ping",
    }


def test_falls_back_to_the_standard_library_for_lone_surrogates() -> None:
    """orjson refuses lone surrogates; JSON allows them, so the frame still parses."""
    value = parse_frame('{"a": "\\ud800"}')
    assert value["a"] == "\ud800"


def test_huge_integers_parse_through_the_fallback() -> None:
    """Integers past 64 bits are valid JSON."""
    assert (
        parse_frame(b'{"id": 123456789012345678901234567890}')["id"]
        == 123456789012345678901234567890
    )


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        (b"not json", "not_json"),  # plain text
        (b'{"a": 1', "not_json"),  # truncated
        (b"[1, 2]", "batch"),  # a batch
        (b'"text"', "not_object"),  # a bare string
        (b"\x00\x01\x02", "binary"),  # binary data
        (b"\xff\xfe{}", "not_json"),  # invalid UTF-8 is refused by both parsers
    ],
)
def test_refuses_what_is_not_a_message(frame: bytes, kind: str) -> None:
    """Each unusable frame gets a stable kind, never its content in the message."""
    with pytest.raises(FrameError) as info:
        parse_frame(frame)
    assert info.value.kind in {kind, "binary", "not_json"}
    assert "text" not in str(info.value) or kind != "not_object"


def test_size_limit_is_checked_before_parsing() -> None:
    """An oversized frame is refused without being parsed."""
    with pytest.raises(FrameError) as info:
        parse_frame(b'{"a": "' + b"x" * 100 + b'"}', max_bytes=50)
    assert info.value.kind == "too_large"


def test_depth_limit() -> None:
    """Nesting past the limit is refused; at the limit it is fine."""
    assert parse_frame(b'{"a": {"b": {}}}', max_depth=3)
    with pytest.raises(FrameError) as info:
        parse_frame(b'{"a": {"b": {"c": {}}}}', max_depth=3)
    assert info.value.kind == "too_deep"


def test_very_deep_nesting_never_recurses_to_death() -> None:
    """A 100,000-deep array is refused cleanly by whichever parser sees it."""
    frame = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(FrameError) as info:
        parse_frame(frame, max_bytes=10_000_000)
    assert info.value.kind in {"too_deep", "not_json"}


def test_duplicate_keys_are_detected() -> None:
    """Two parsers may keep different copies of a repeated key."""
    assert has_duplicate_keys(b'{"method": "ping", "method": "elicitation/create"}')
    assert not has_duplicate_keys(b'{"a": {"b": 1}, "b": 2}')


def test_escaped_method_names_are_still_recognised_after_parsing() -> None:
    """The fast path is decided on the parsed object, never on raw bytes."""
    assert (
        parse_frame(b'{"method": "\\u0065licitation/create", "id": 1}')["method"]
        == "elicitation/create"
    )
