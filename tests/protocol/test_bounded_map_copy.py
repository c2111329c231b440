"""BoundedMap copies itself (compiled builds cannot use the default copy): a copy must hold
what the default copy held, and stay independent of the original."""

from __future__ import annotations

import copy

from elicitguard.protocol.session import BoundedMap


def _filled() -> BoundedMap[str, list[int]]:
    bounded: BoundedMap[str, list[int]] = BoundedMap(3)
    for i in range(5):
        bounded.put(f"k{i}", [i])
    return bounded


def test_deepcopy_keeps_entries_order_limit_and_evictions() -> None:
    original = _filled()
    copied = copy.deepcopy(original)
    assert copied.values() == original.values() == [[2], [3], [4]]
    assert (copied.limit, copied.evictions) == (3, 2)
    entry = copied.get("k2")
    assert entry is not None
    entry.append(9)
    copied.put("k9", [9])
    assert original.values() == [[2], [3], [4]]
    assert (len(original), original.evictions, copied.evictions) == (3, 2, 3)


def test_shallow_copy_shares_values_not_the_map() -> None:
    original = _filled()
    copied = copy.copy(original)
    copied.put("k9", [9])
    assert "k9" not in original
    assert copied.get("k4") is original.get("k4")
    assert (copied.limit, original.evictions) == (3, 2)
