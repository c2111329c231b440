"""The package layering of DESIGN.md holds: no upward import, no import cycle, no optional defence.

The layers, lowest first (a module may import its own package and any lower layer; packages
side by side in one layer may not import each other)::

    0  elicitguard._version, elicitguard._resources, elicitguard.errors
    1  elicitguard.base            keys, decisions and findings: what every layer speaks
    2  elicitguard.protocol        wire knowledge only
    3  elicitguard.checks          detection as pure functions
    4  elicitguard.audit           records, redaction, sinks (no engine)
    5  elicitguard.identity        tokens, principals, sealing, binding, stores, egress
    6  elicitguard.engine          rules, policies, evaluation
    7  elicitguard.consent, elicitguard.lint, elicitguard.integrations
    8  elicitguard (the public API), elicitguard.testing
    9  elicitguard.commands
    10 elicitguard.cli
    11 elicitguard.__main__

Every import counts: module level, inside functions, and under ``TYPE_CHECKING`` (a type-only
import is still a dependency a reader has to follow). ``identity`` takes an engine through the
:class:`elicitguard.identity.host.HostEngine` protocol for that reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("elicitguard._version", "elicitguard._resources", "elicitguard.errors"),
    ("elicitguard.base",),
    ("elicitguard.protocol",),
    ("elicitguard.checks",),
    ("elicitguard.audit",),
    ("elicitguard.identity",),
    ("elicitguard.engine",),
    ("elicitguard.consent", "elicitguard.lint", "elicitguard.integrations"),
    ("elicitguard", "elicitguard.testing"),
    ("elicitguard.commands",),
    ("elicitguard.cli",),
    ("elicitguard.__main__",),
)


@dataclass(frozen=True)
class Import:
    """One import of an elicitguard module by another."""

    source: str
    target: str
    line: int
    guarded: bool  # inside ``try: ... except ImportError``

    def __str__(self) -> str:
        path = self.source.replace(".", "/")
        return f"src/{path}.py:{self.line}: imports {self.target}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / "elicitguard").rglob("*.py"))}


MODULES = _modules()


def _resolve(module: str, package: str) -> str:
    """``from package import module``: the submodule when there is one, else the package."""
    candidate = f"{package}.{module}"
    return candidate if candidate in MODULES else package


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names: list[ast.expr] = []
    if isinstance(handler.type, ast.Tuple):
        names = list(handler.type.elts)
    elif handler.type is not None:
        names = [handler.type]
    return any(
        isinstance(n, ast.Name) and n.id in {"ImportError", "ModuleNotFoundError"} for n in names
    )


def _imports(name: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    guarded_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        guarded_lines.add(sub.lineno)
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                package = ".".join(base + ([node.module] if node.module else []))
            else:
                package = node.module or ""
            targets = [_resolve(a.name, package) for a in node.names]
        for target in targets:
            if target == "elicitguard" or target.startswith("elicitguard."):
                yield Import(name, target, node.lineno, node.lineno in guarded_lines)


ALL_IMPORTS = [imp for name, path in MODULES.items() for imp in _imports(name, path)]


def _layer_of(module: str) -> tuple[int, str]:
    """The layer index and the owning package (longest listed prefix) of ``module``."""
    best: tuple[int, str] | None = None
    for index, packages in enumerate(LAYERS):
        for package in packages:
            if (module == package or module.startswith(package + ".")) and (
                best is None or len(package) > len(best[1])
            ):
                best = (index, package)
    if best is None:
        pytest.fail(f"{module} is in no layer: add it to LAYERS in tests/test_layering.py")
    return best


def _is_ancestor(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def test_every_module_has_a_layer() -> None:
    """A new top-level package or module must be placed in the layering on purpose."""
    for module in MODULES:
        _layer_of(module)


def test_no_upward_or_sideways_import() -> None:
    """Each import goes to the module's own package or to a lower layer."""
    wrong = []
    for imp in ALL_IMPORTS:
        source_layer, source_package = _layer_of(imp.source)
        target_layer, target_package = _layer_of(imp.target)
        if source_package == target_package or target_layer < source_layer:
            continue
        wrong.append(f"{imp} (layer {target_layer} from layer {source_layer})")
    assert wrong == []


def test_no_import_cycle_between_modules() -> None:
    """No module reaches itself through imports (a package's own ``__init__`` aside)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in ALL_IMPORTS:
        if imp.target in MODULES and not _is_ancestor(imp.target, imp.source):
            graph[imp.source].add(imp.target)
    cycles = _strongly_connected(graph)
    assert cycles == []


def test_no_defence_behind_an_import_guard() -> None:
    """No defence (engine and below) is imported under ``except ImportError``.

    Such a guard switches a defence off silently when the import fails (a redactor that
    scans nothing). Integrations may be guarded: they need extras, and the command that
    guards one says which extra to install.
    """
    engine_layer, _ = _layer_of("elicitguard.engine")
    guarded = [str(i) for i in ALL_IMPORTS if i.guarded and _layer_of(i.target)[0] <= engine_layer]
    assert guarded == []


def test_the_checker_sees_function_level_and_type_only_imports(tmp_path: Path) -> None:
    """The parser counts imports inside functions and under TYPE_CHECKING."""
    source = tmp_path / "mod.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from elicitguard.engine.engine import Engine\n"
        "def f():\n    from elicitguard.audit import records\n"
        "try:\n    import elicitguard.checks.secrets\nexcept ImportError:\n    pass\n",
        encoding="utf-8",
    )
    found = {(i.target, i.guarded) for i in _imports("elicitguard.protocol.mod", source)}
    assert found == {
        ("elicitguard.engine.engine", False),
        ("elicitguard.audit.records", False),
        ("elicitguard.checks.secrets", True),
    }


def test_the_layer_table_is_the_documented_one() -> None:
    """The module docstring lists the same layers, in the same order, as LAYERS."""
    documented = [
        line.split()[1:]
        for line in (__doc__ or "").splitlines()
        if line.strip()[:2].strip().isdigit()
    ]
    names = [[w.rstrip(",") for w in words if w.startswith("elicitguard")] for words in documented]
    assert names == [list(layer) for layer in LAYERS]


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)
