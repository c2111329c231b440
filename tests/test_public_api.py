"""The public API is small and deliberate (httpx's exported-members test)."""

from __future__ import annotations

import types

import elicitguard


def test_all_is_sorted_and_complete() -> None:
    """__all__ lists exactly the public names, sorted."""
    public = sorted(
        n
        for n in dir(elicitguard)
        if (not n.startswith("_") or n == "__version__")
        and not isinstance(getattr(elicitguard, n), types.ModuleType)
    )
    assert public == sorted(elicitguard.__all__)
    assert list(elicitguard.__all__) == sorted(elicitguard.__all__)


def test_every_exported_name_resolves() -> None:
    """Each name in __all__ is importable."""
    for name in elicitguard.__all__:
        assert getattr(elicitguard, name) is not None
