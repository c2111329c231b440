"""Keys that collide once folded, the marker pre-filter, and lone surrogates."""

from __future__ import annotations

import pytest

from elicitguard.protocol.parsing import (
    fold_key,
    has_colliding_keys,
    has_duplicate_keys,
    may_hide_elicitation,
    object_has_colliding_keys,
    protocol_keys_collide,
)
from elicitguard.protocol.surrogates import may_hold_lone_surrogate, without_lone_surrogates


@pytest.mark.parametrize(
    ("key", "folded"),
    [
        ("METHOD", "method"),
        ("Method", "method"),
        ("ＭＥＴＨＯＤ", "method"),
        ("request_state", "requeststate"),
        ("Request-State", "requeststate"),
        ("first_name", "first_name"),
        ("\u017ftatus", "status"),
        ("\u212aind", "kind"),
    ],
)
def test_fold_key(key: str, folded: str) -> None:
    assert fold_key(key) == folded


def test_collisions_exact_and_folded() -> None:
    assert has_colliding_keys(b'{"a":{"method":1,"METHOD":2}}')
    assert has_colliding_keys(b'{"a":1,"a":2}')
    assert not has_colliding_keys(b'{"a":{"b":1},"c":{"b":2}}')
    assert not has_duplicate_keys(b'{"method":1,"METHOD":2}')
    assert object_has_colliding_keys({"x": [{"Url": 1, "url": 2}]})
    assert not object_has_colliding_keys({"x": [{"first_name": 1, "firstname": 2}]})


def test_protocol_level_only_for_ordinary_frames() -> None:
    """A case pair in tool arguments is data; one in the envelope or result is protocol."""
    assert protocol_keys_collide(b'{"id":1,"method":"ping","METHOD":"x"}')
    assert protocol_keys_collide(b'{"id":1,"result":{"resultType":"complete","RESULTTYPE":"x"}}')
    assert not protocol_keys_collide(
        b'{"id":1,"method":"tools/call","params":{"arguments":{"Name":1,"name":2}}}'
    )
    line = b'{"direction":"server_to_client","message":{"id":1,"method":"ping","Method":"x"}}'
    assert protocol_keys_collide(line)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id":1,"method":"ping","METHOD":"elicitation/create"}',
        b'{"id":1,"method":"ping","METHOD":"ELICITATION/CREATE"}',
        b'{"id":1,"method":"ping","\\u004dETHOD":"x"}',
        '{"id":1,"method":"ping","ＭＥＴＨＯＤ":"ｅｌｉｃｉｔａｔｉｏｎ/create"}'.encode(),
        b'{"id":1,"result":{"resultType":"complete","RESULTTYPE":"INPUT_REQUIRED"}}',
    ],
)
def test_the_pre_filter_cannot_be_dodged_by_case(raw: bytes) -> None:
    assert may_hide_elicitation(raw)


def test_an_ordinary_case_pair_passes() -> None:
    assert not may_hide_elicitation(b'{"id":1,"method":"ping","Method":"ping"}')


def test_lone_surrogates_become_replacement_characters() -> None:
    message = {"a": ["x\ud800", {"\udfff": 1}], "b": "ok"}
    assert without_lone_surrogates(message) == {"a": ["x\ufffd", {"\ufffd": 1}], "b": "ok"}
    plain = {"a": "b"}
    assert without_lone_surrogates(plain) is plain
    assert may_hold_lone_surrogate(b'{"t":"\\ud800"}')
    assert may_hold_lone_surrogate(b'{"t":"\xed\xa0\x80"}')
    assert not may_hold_lone_surrogate(b'{"t":"\\u0041"}')
