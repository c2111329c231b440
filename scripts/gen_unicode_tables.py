"""Regenerate the Unicode tables that ``elicitguard.checks.domains`` ships.

Why this script exists: the host checks need four Unicode properties that Python's
``unicodedata`` does not have (Script, Script_Extensions, UTS 39 Identifier_Status and the
UTS 39 confusable skeleton mapping).  We ship them as small committed JSON files instead of
depending on ICU at run time (see ``elicitguard.checks.domains._unicode`` for the reasons).

Source of the data: the Unicode files themselves (``Scripts.txt``, ``ScriptExtensions.txt``,
``IdentifierStatus.txt``, ``confusables.txt``) are not reachable from the build machines, and
no PyPI package ships the security files, so the tables are read from ICU's compiled copy of
exactly those files through ``pyicu-wheels`` (prebuilt wheels, no compiler; dev-time only):

    .venv/bin/pip install 'pyicu-wheels==2.15.2'     # ICU 77.1, Unicode 16.0
    .venv/bin/python scripts/gen_unicode_tables.py

``Soft_Dotted`` is included for ICU's hidden-overlay check.  The allowed set is ICU's
*recommended* plus *inclusion* sets (UTS 39 Identifier_Status=Allowed as ICU exposes it),
before Chromium-style removals, which live in code.  The skeleton map holds ``skeleton(c)``
for every code point that is NFD-stable and whose skeleton differs from itself, so that at run
time ``skeleton(s) = NFD(concat(map.get(c, c) for c in NFD(s)))``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/elicitguard/checks/data/unicode"
MAX_CP = 0x110000


def _ranges(flags: list[object]) -> list[list[object]]:
    """Run-length encode ``flags`` into ``[start, end, value]`` rows, dropping ``None``."""
    rows: list[list[object]] = []
    start = 0
    for cp in range(1, MAX_CP + 1):
        if cp == MAX_CP or flags[cp] != flags[start]:
            if flags[start] is not None:
                rows.append([start, cp - 1, flags[start]])
            start = cp
    return rows


def main() -> int:
    try:
        import icu  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        sys.stderr.write("needs pyicu-wheels: .venv/bin/pip install 'pyicu-wheels==2.15.2'\n")
        return 2

    names: dict[int, str] = {}

    def short(code: int) -> str:
        if code not in names:
            names[code] = icu.Script(code).getShortName()
        return names[code]

    sc: list[object] = [None] * MAX_CP
    scx: list[object] = [None] * MAX_CP
    for cp in range(MAX_CP):
        script = short(icu.Script.getScript(cp).getScriptCode())
        if script != "Zzzz":
            sc[cp] = script
        ext = tuple(sorted(short(c) for c in icu.Script.getScriptExtensions(cp)))
        if ext != (script,):
            scx[cp] = " ".join(ext)

    allowed = icu.UnicodeSet()  # a copy of a frozen set stays frozen: build a fresh one
    allowed.addAll(icu.SpoofChecker.getRecommendedUnicodeSet())
    allowed.addAll(icu.SpoofChecker.getInclusionUnicodeSet())
    allowed_rows = [
        [ord(allowed.getRangeStart(i)), ord(allowed.getRangeEnd(i))]
        for i in range(allowed.getRangeCount())
    ]

    soft = icu.UnicodeSet("[:Soft_Dotted:]")
    soft_rows = [
        [ord(soft.getRangeStart(i)), ord(soft.getRangeEnd(i))] for i in range(soft.getRangeCount())
    ]

    checker = icu.SpoofChecker()
    nfd = icu.Normalizer2.getNFDInstance()
    skeletons: dict[str, str] = {}
    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        if nfd.normalize(ch) != ch:
            continue
        skel = checker.getSkeleton(0, ch)
        if skel != ch:
            skeletons[f"{cp:X}"] = skel

    meta = {
        "unicode_version": icu.UNICODE_VERSION,
        "icu_version": icu.ICU_VERSION,
        "generator": "scripts/gen_unicode_tables.py",
    }
    OUT.mkdir(parents=True, exist_ok=True)
    tables = {
        "scripts.json": {**meta, "sc": _ranges(sc), "scx": _ranges(scx)},
        "identifier_allowed.json": {**meta, "allowed": allowed_rows, "soft_dotted": soft_rows},
        "confusables.json": {**meta, "skeleton": skeletons},
    }
    for name, data in tables.items():
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        (OUT / name).write_text(text + "\n", encoding="utf-8")
        sys.stdout.write(f"{name}: {len(text)} bytes\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
