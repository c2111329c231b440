"""``BoundedMap.put`` tells a new key from a replaced one by the map's size (one hash
look-up): it must keep the same entries, in the same order, with the same evictions as
the two-look-up version it replaced, kept here as the reference."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from elicitguard.protocol.session import BoundedMap


class _Reference:
    """The previous ``put``: look the key up, then insert or move it."""

    def __init__(self, limit: int) -> None:
        self.data: OrderedDict[Any, Any] = OrderedDict()
        self.limit = limit
        self.evictions = 0

    def put(self, key: Any, value: Any) -> None:
        data = self.data
        if key in data:
            data.move_to_end(key)
            data[key] = value
            return
        data[key] = value
        if len(data) > self.limit:
            data.popitem(last=False)
            self.evictions += 1

    def pop(self, key: Any) -> Any:
        return self.data.pop(key, None)


_KEYS = st.one_of(
    st.integers(-3, 12),
    st.sampled_from(["1", "a", "b"]),
    st.tuples(st.sampled_from(["int", "str", "bool", "float"]), st.integers(0, 6)),
)
_OPS = st.lists(st.tuples(st.sampled_from(["put", "pop"]), _KEYS, st.integers()), max_size=80)


@settings(max_examples=400, deadline=None)
@given(limit=st.integers(0, 6), ops=_OPS)
def test_put_keeps_the_entries_order_and_evictions_of_the_reference(
    limit: int, ops: list[tuple[str, Any, int]]
) -> None:
    fast: BoundedMap[Any, int] = BoundedMap(limit)
    reference = _Reference(limit)
    for op, key, value in ops:
        if op == "put":
            fast.put(key, value)
            reference.put(key, value)
        else:
            assert fast.pop(key) == reference.pop(key)
        assert list(fast._data.items()) == list(reference.data.items())
        assert fast.evictions == reference.evictions


def test_a_replaced_key_moves_last_and_evicts_nothing() -> None:
    bounded: BoundedMap[str, int] = BoundedMap(2)
    bounded.put("a", 1)
    bounded.put("b", 2)
    bounded.put("a", 3)
    assert list(bounded._data.items()) == [("b", 2), ("a", 3)]
    assert bounded.evictions == 0
    bounded.put("c", 4)
    assert list(bounded._data.items()) == [("a", 3), ("c", 4)]
    assert bounded.evictions == 1
