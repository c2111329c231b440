"""The built-in checks that rule files name in ``check:``.

Each module adapts pure detection functions from :mod:`elicitguard.checks` to the check
signature ``(item, ctx, params) -> Iterable[Hit]``.
"""

from elicitguard.engine.builtin import conformance

__all__ = ["conformance"]
