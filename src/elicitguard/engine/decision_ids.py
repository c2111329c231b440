"""Decision ids: 96 random bits each, in hex, drawn from ``os.urandom`` in batches.

Why: every judged message gets an id (its audit record and any refusal name it), and one
``os.urandom`` call per message is a system call on the elicitation hot path. Reading
randomness for 256 ids at once costs one call; the ids are exactly as random. A forked
child starts a batch of its own (two processes must never hand out the same ids).
"""

from __future__ import annotations

import os

__all__ = ["new_decision_id"]

_BATCH = 256
_ID_BYTES = 12
_pending: list[str] = []


def _refill() -> list[str]:
    raw = os.urandom(_ID_BYTES * _BATCH).hex()
    width = 2 * _ID_BYTES
    return [raw[i : i + width] for i in range(0, len(raw), width)]


def new_decision_id() -> str:
    """A fresh id: 24 hex digits, as ``os.urandom(12).hex()`` gives."""
    try:
        return _pending.pop()  # atomic: two threads never get one id
    except IndexError:
        _pending.extend(_refill())
        return new_decision_id()


def _forget_parent_ids() -> None:
    _pending.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parent_ids)
