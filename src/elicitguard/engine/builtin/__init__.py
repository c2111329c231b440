"""The built-in checks that rule files name in ``check:``.

Each module adapts pure detection functions from :mod:`elicitguard.checks` to the check
signature ``(item, ctx, params) -> Iterable[Hit]`` and registers them with ``@check``.
Every module in this package is imported here, so a new family is one new file.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__: list[str] = []

for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
