"""Compile the hot modules with mypyc in a scratch copy: ``python scripts/mypyc_build.py [--out DIR]``.

Why a copy: the team ships the pure-Python wheel, and a compiled module beside its source in
the working tree would shadow the source for every test and editable install on the machine.
The copy holds the whole tree (tests, rules, schema, benchmarks), so the suite and
``benchmarks/run.py`` run against it unchanged with ``PYTHONPATH=DIR/src``.

Why these modules: they are the ones ``benchmarks/run.py --quick`` spends its time in
(``cProfile`` of the core rows, own time summed per module), minus those mypyc cannot
compile faithfully (see ``EXCLUDED``). The list is the experiment's subject: the figures in
the README's Performance section were measured with exactly this list.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The modules compiled, each with why it is on the list (the profile row it serves).
HOT_MODULES: dict[str, str] = {
    # The engine and the message model: every frame goes through these (engine.py alone is
    # a quarter of the profile's own time).
    "elicitguard/engine/engine.py": "every row: evaluate, dispatch, the fast route",
    "elicitguard/engine/ordinary.py": "fast path: ordinary traffic decided without an envelope",
    "elicitguard/engine/verdicts.py": "repeated items: reused hits of pure checks",
    "elicitguard/engine/state.py": "every evaluation: per-session state",
    "elicitguard/engine/decision_ids.py": "every decision: its id",
    "elicitguard/protocol/extract.py": "every elicitation: items out of a message",
    "elicitguard/protocol/parsing.py": "fast path: frame to message",
    "elicitguard/protocol/reading.py": "fast path: the top-level keys of a frame",
    "elicitguard/protocol/frame_route.py": "fast path from bytes: routing on the top-level keys",
    "elicitguard/protocol/session.py": "every message: session and pending-request bookkeeping",
    "elicitguard/protocol/surrogates.py": "every string read: lone surrogates",
    "elicitguard/protocol/envelope.py": "every message: the envelope",
    "elicitguard/protocol/items.py": "every elicitation: the item model",
    "elicitguard/protocol/versions.py": "every message: era of the protocol",
    "elicitguard/base/pointer.py": "every hit: JSON pointers",
    "elicitguard/base/decision.py": "every evaluation: the decision",
    # The audit record: about half of an elicitation's cost.
    "elicitguard/audit/records.py": "every decision: the audit record",
    "elicitguard/audit/processors.py": "every record: stamp, redact, seal",
    # Checks on the rows.
    "elicitguard/checks/request_state.py": "input-required and retry rows: requestState",
    "elicitguard/checks/forms/_text.py": "form rows: field text normalisation",
    "elicitguard/checks/forms/_scan.py": "form rows: the field scan",
    "elicitguard/checks/url_parts.py": "URL rows: splitting the URL",
    "elicitguard/checks/url_facts.py": "URL rows: facts of a URL",
}

#: Modules the profile names but that are not compiled, and why.
EXCLUDED: dict[str, str] = {
    "elicitguard/engine/context.py": "a pydantic model: with the pydantic mypy plugin mypyc emits C that does not build",
    "elicitguard/engine/builtin/conformance*.py, identity_rules.py": "their rule parameters are pydantic models: compiled, pydantic reads their annotations as no type and every policy load fails",
    "elicitguard/audit/sink.py": "its line collector aliases a method (info = msg): compiled, the class fails to build at import",
    "elicitguard/checks/forms/_lexicon.py": "its time is the one-off lexicon load, not per message",
    "elicitguard/engine/yamlfile.py, policy.py, rule_overrides.py": "policy loading: once per process",
}

_IGNORED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "build",
    "out",
    "*.so",
    ".hypothesis",
)


def copy_tree(out: Path) -> None:
    """A fresh copy of the working tree (no build products, caches or virtualenv)."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(ROOT, out, ignore=_IGNORED)


def compile_modules(out: Path, modules: list[str], opt_level: str, jobs: int) -> None:
    """mypyc the modules in place in the copy: the extension lands beside its source."""
    setup = (
        "import sys\n"
        "from setuptools import setup\n"
        "from mypyc.build import mypycify\n"
        "mods = sys.argv[1:]\n"
        "sys.argv = [sys.argv[0], 'build_ext', '--inplace', '-j', " + repr(str(jobs)) + "]\n"
        "setup(name='elicitguard-mypyc', ext_modules=mypycify(['--config-file', '../pyproject.toml', *mods], "
        "opt_level=" + repr(opt_level) + "))\n"
    )
    env = {**os.environ, "MYPYC_OPT_LEVEL": opt_level}
    subprocess.run([sys.executable, "-c", setup, *modules], cwd=out / "src", env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("/tmp/elicitguard-mypyc"),
        help="scratch directory (replaced)",
    )
    parser.add_argument(
        "--module", action="append", help="compile only these (paths under src/); repeatable"
    )
    parser.add_argument("--opt-level", default="3", help="mypyc/C optimisation level (default 3)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel C compiles")
    parser.add_argument("--list", action="store_true", help="print the module list and exit")
    args = parser.parse_args(argv)
    modules = args.module or list(HOT_MODULES)
    if args.list:
        for module in modules:
            print(f"{module}: {HOT_MODULES.get(module, '(named on the command line)')}")
        for module, why in EXCLUDED.items():
            print(f"not compiled: {module}: {why}")
        return 0
    started = time.perf_counter()
    out = args.out.resolve()
    copy_tree(out)
    compile_modules(out, modules, args.opt_level, args.jobs)
    built = sorted(
        p.relative_to(out / "src" / "elicitguard")
        for p in (out / "src" / "elicitguard").rglob("*.so")
    )
    print(
        f"\ncompiled {len(modules)} modules into {out} in {time.perf_counter() - started:,.0f} s:"
    )
    for module in modules:
        print(f"  {module}")
    print("extensions:")
    for path in built:
        print(f"  src/elicitguard/{path}")
    print("\nrun the tests or benchmarks against the compiled copy:")
    print(f"  cd {out} && PYTHONPATH={out}/src nice -n 19 python -m pytest -q -x tests/protocol")
    print(f"  cd {out} && PYTHONPATH={out}/src python benchmarks/run.py --quick --only core")
    print(
        f"check that the compiled modules load: PYTHONPATH={out}/src python -c 'import elicitguard.protocol.parsing as m; print(m.__file__)'"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
