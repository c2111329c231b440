"""Repeated and folded keys told from one orjson parse answer as the pairs parser does.

:func:`has_colliding_keys`, :func:`has_duplicate_keys` and :func:`protocol_keys_collide`
decide most frames from orjson's parse (a colon count for exact repeats, the folded-key
walk for the rest) and leave the others to the standard library's pairs parser. Frames
are written here as text, so that a key can really be repeated, with colons inside
strings, escapes, whitespace and nesting; every answer must be the pairs parser's.
"""

from __future__ import annotations

import json
import random

import pytest

from elicitguard.protocol.parsing import (
    _envelope_objects,
    _folded_collision,
    _raises_on_pairs,
    _refuse_collisions,
    _refuse_duplicates,
    has_colliding_keys,
    has_duplicate_keys,
    protocol_keys_collide,
)

KEYS = ["a", "A", "b", "type", "Type", "url", "URL", "method", "request_state", "requestState"]
KEYS += ["x:y", "k:", "ｘ", "x", "pa\\u0073s", "pas", "pass", 're\\"q', "a\\/b", "a/b"]
STRINGS = ['"s"', '"a:b"', '"::"', '"\\u003a"', '"x\\\\u003a"', '"\\"k\\":1"', '"é:"', '""']
SCALARS = [*STRINGS, "1", "-3.5e2", "true", "null", "12345678901234567890123", "0"]


def _text(rng: random.Random, depth: int) -> str:
    roll = rng.random()
    if depth > 5 or roll < 0.3:
        return rng.choice(SCALARS)
    space = rng.choice(["", " ", "\n  "])
    if roll < 0.55:
        items = [_text(rng, depth + 1) for _ in range(rng.randint(0, 3))]
        return "[" + f",{space}".join(items) + "]"
    keys = [rng.choice(KEYS) for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.6:  # mostly objects without a repeat
        keys = list(
            dict.fromkeys(k for k in keys if k.islower() and k not in ("request_state", "x"))
        )
    pairs = [f'"{k}"{space}:{space}{_text(rng, depth + 1)}' for k in keys]
    return "{" + f",{space}".join(pairs) + "}"


def _protocol_reference(raw: bytes) -> bool:
    text = raw.decode("utf-8", "surrogatepass")
    try:
        value = json.loads(text, object_pairs_hook=_refuse_duplicates)
    except ValueError as exc:
        return type(exc).__name__ == "_DuplicateKeyError"
    return any(_folded_collision(node) for node in _envelope_objects(value))


def _frames(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    frames = []
    for i in range(count):
        inner = _text(rng, 1)
        shape = rng.choice(
            [
                '{{"jsonrpc":"2.0","id":{i},"method":"elicitation/create","params":{inner}}}',
                '{{"jsonrpc":"2.0","id":{i},"result":{inner}}}',
                '{{"direction":"server_to_client","message":{{"id":{i},"params":{inner}}}}}',
                "{inner}",
            ]
        )
        frames.append(shape.format(i=i, inner=inner).encode())
    return frames


FRAMES = _frames(6000, 44)


def test_the_frames_hold_every_case() -> None:
    """The generator really writes repeats, folded pairs, escapes and clean frames."""
    answers = [_raises_on_pairs(f, _refuse_duplicates) for f in FRAMES]
    folded = [_raises_on_pairs(f, _refuse_collisions) for f in FRAMES]
    assert 500 < sum(answers) < 5500
    assert sum(folded) - sum(answers) > 100
    assert sum(b"\\u" in f for f in FRAMES) > 300


@pytest.mark.parametrize("index", range(0, 6000, 500))
def test_same_answers_as_the_pairs_parser(index: int) -> None:
    for raw in FRAMES[index : index + 500]:
        assert has_duplicate_keys(raw) == _raises_on_pairs(raw, _refuse_duplicates), raw
        assert has_colliding_keys(raw) == _raises_on_pairs(raw, _refuse_collisions), raw
        assert protocol_keys_collide(raw) == _protocol_reference(raw), raw


@pytest.mark.parametrize(
    ("raw", "repeated", "colliding"),
    [
        (b'{"a":1,"a":2}', True, True),
        (b'{"a":"x:y","b":"x:y"}', False, False),
        (b'{"a":1,"A":2}', False, True),
        (b'{"a":"\\u003a","a":1}', True, True),  # an escaped colon: the pairs parser decides
        (b'{"k\\u003a":1,"k:":2}', True, True),
        (b'{"a":NaN,"a":1}', True, True),  # orjson refuses NaN
        (b'\xef\xbb\xbf{"a":1,"a":2}', False, False),  # a BOM: neither parser reads it
        (b'{"a":' * 300 + b"1" + b"}" * 300, False, False),  # too deep for orjson to render
        (b'{"a":' * 299 + b'{"b":1,"b":2}' + b"}" * 299, True, True),
        (b'{"n":123456789012345678901234567890,"n":1}', True, True),
        (b"[" + b",".join(b'{"a":1}' for _ in range(60_000)) + b',{"a":1,"A":2}]', False, True),
        (b"[1,2", False, False),
    ],
)
def test_edges(raw: bytes, repeated: bool, colliding: bool) -> None:
    assert _raises_on_pairs(raw, _refuse_duplicates) is repeated
    assert _raises_on_pairs(raw, _refuse_collisions) is colliding
    assert has_duplicate_keys(raw) is repeated
    assert has_colliding_keys(raw) is colliding


def test_text_frames_are_read_as_their_bytes() -> None:
    assert has_colliding_keys('{"méthod":1,"MÉTHOD":2}')
    assert has_duplicate_keys('{"a":1,"a":2}')
    assert not has_duplicate_keys('{"a":"\ud800","b":1}')  # a lone surrogate: orjson refuses
