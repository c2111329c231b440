"""The elicitation-marker look of the fast route answers exactly as the marker pattern does.

``mentions_elicitation`` (and so ``may_hide_elicitation``) asks an RE2 set instead of
``search``: cheaper, and it must never disagree, in any letter case, script or escape.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elicitguard.protocol.parsing import (
    _ELICITATION_MARKERS,
    may_hide_elicitation,
    mentions_elicitation,
    protocol_keys_collide,
)

_FRAGMENTS = [
    "elicitation",
    "ELICITATION/CREATE",
    "inputRe",
    "inputrequests",
    "requestState",
    "REQUESTSTATE",
    "resultType",
    "input_required",
    "tasks/",
    "TASKS/get",
    "-32042",
    "-3.2042e4",
    "\\u0065",
    "\\/",
    "\\U0065",
    "\uff25licitation",  # full-width E
    "\u212a",  # Kelvin sign
    "\u017f",  # long s
    "\U0001d41e",  # mathematical bold e
    "elicitatio",
    "input",
    "request",
    "result",
    "tasks",
    "-3",
    "\\",
    "plain words",
    "é",
    "日本語",
]


@pytest.mark.parametrize("fragment", _FRAGMENTS)
def test_each_marker_and_near_miss_agrees(fragment: str) -> None:
    for text in (fragment, f'{{"a":"x{fragment}y"}}', fragment.upper(), fragment.lower()):
        raw = text.encode("utf-8", "surrogatepass")
        assert mentions_elicitation(raw) is (_ELICITATION_MARKERS.search(raw) is not None), raw


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)), max_size=8))
def test_any_text_agrees(parts: list[str]) -> None:
    raw = "".join(parts).encode("utf-8", "surrogatepass")
    assert mentions_elicitation(raw) is (_ELICITATION_MARKERS.search(raw) is not None)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_agree(raw: bytes) -> None:
    assert mentions_elicitation(raw) is (_ELICITATION_MARKERS.search(raw) is not None)


def test_hidden_duplicates_still_need_both_a_marker_and_a_repeat() -> None:
    hidden = b'{"jsonrpc":"2.0","method":"elicitation/create","method":"ping","id":1}'
    assert may_hide_elicitation(hidden)
    repeat_only = b'{"jsonrpc":"2.0","method":"ping","method":"ping","id":1}'
    assert protocol_keys_collide(repeat_only)
    assert not may_hide_elicitation(repeat_only)
    marker_only = orjson.dumps({"jsonrpc": "2.0", "method": "elicitation/create", "id": 1})
    assert mentions_elicitation(marker_only)
    assert not may_hide_elicitation(marker_only)
