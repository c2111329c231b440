"""The folded-key collision walk over a parsed message answers as a plain stack walk does.

:func:`object_has_colliding_keys` remembers key sets and the verdicts of repeated
subtrees and recurses while shallow; none of that may change an answer, including when the
node budget cuts the walk short (the same nodes must be visited, in the same order).
"""

from __future__ import annotations

import random
from typing import Any

from elicitguard.protocol.parsing import fold_key, object_has_colliding_keys


def _reference(value: Any, max_nodes: int = 100_000) -> bool:
    """The plain walk: a stack, last child first, ``max_nodes`` nodes at most."""
    stack = [value]
    seen = 0
    while stack and seen < max_nodes:
        node = stack.pop()
        seen += 1
        if isinstance(node, dict):
            if len(node) > 1 and len({fold_key(k) for k in node}) < len(node):
                return True
            stack.extend(c for c in node.values() if isinstance(c, (dict, list)))
        elif isinstance(node, list):
            stack.extend(c for c in node if isinstance(c, (dict, list)))
    return False


KEYS = ["a", "A", "b", "type", "Type", "request_state", "requestState", "x", "ｘ", "k1", "K1"]


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 6 or roll < 0.3:
        return rng.choice([1, "s", None, True, 2.5])
    if roll < 0.6:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = rng.sample(KEYS, rng.randint(0, 4))
    if rng.random() < 0.7:  # mostly messages without a collision
        keys = [k for k in keys if k == k.lower() and k != "request_state"]
    return {k: _value(rng, depth + 1) for k in keys}


def test_same_answers_as_the_plain_walk() -> None:
    rng = random.Random(18)
    shared = [_value(rng, 1) for _ in range(20)]  # subtrees that recur across messages
    for i in range(4000):
        params = rng.choice(shared) if rng.random() < 0.5 else _value(rng, 1)
        message = {"jsonrpc": "2.0", "id": i, "params": {"s": params, "t": rng.choice(shared)}}
        for budget in (100_000, rng.randint(1, 30)):
            assert object_has_colliding_keys(message, budget) == _reference(message, budget)


def test_deep_and_wide_messages() -> None:
    deep: Any = {"k": 1, "K": 2}
    for _ in range(3000):
        deep = {"x": [deep]}
    assert object_has_colliding_keys(deep)
    assert object_has_colliding_keys(deep, max_nodes=100) is _reference(deep, 100) is False
    wide = {"params": {"schema": {f"f{i}": {"type": "string"} for i in range(500)}}}
    assert not object_has_colliding_keys(wide)
    wide["params"]["schema"]["F7"] = {}
    assert object_has_colliding_keys(wide)
