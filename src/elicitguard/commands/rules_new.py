"""``elicitguard rules new CODE NAME --family F``: the skeleton of a new rule, in three places.

A rule is its YAML file, its ``.cases.yaml`` beside it, and, for a built-in (``EG``) rule, one
check function in the module named after its family (``engine/builtin/form_rules.py`` for
``form``). The skeleton is a working rule: its check fires on the word ``<name>-example`` in
an elicitation's message, its docs example and its two cases say so, and ``elicitguard rules
test`` passes on it at once; the author then replaces the starter logic, the cases and the
docs. A user rule (own prefix, ``--pack DIR``) gets a declarative ``match:`` instead of
Python. CONTRIBUTING.md walks through the whole change.

As ruff's ``scripts/add_rule.py`` does for ruff: no rule is added by hand-copying another.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from elicitguard.engine.models import CODE_PATTERN

__all__ = ["FAMILY_MODULES", "add_parser", "register", "run", "scaffold"]

#: The module of ``engine/builtin/`` that holds each family's checks.
FAMILY_MODULES: dict[str, str] = {
    "conformance": "conformance",
    "form": "form_rules",
    "url": "url_rules",
    "domain": "domain_rules",
    "identity": "identity_rules",
    "token": "token_rules",
}
#: The item each family's skeleton looks at (one that has a ``message``).
_ITEMS: dict[str, str] = {"url": "url_request", "domain": "url_request"}
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_BUILTIN = Path("src") / "elicitguard" / "engine" / "builtin"


class ScaffoldError(ValueError):
    """The rule cannot be created as asked; the message says what to write instead."""


def register(rules_sub: Any) -> None:
    """Add ``new`` to the ``rules`` command's subparsers (``cli.SUBCOMMANDS``)."""
    add_parser(rules_sub)


def add_parser(rules_sub: Any) -> None:
    """Register ``rules new`` under the ``rules`` command's subparsers."""
    parser = rules_sub.add_parser(
        "new", help="write the skeleton of a new rule: YAML, cases and (EG) one check function"
    )
    parser.add_argument("code", help="the rule code: EG + three digits, or your own prefix")
    parser.add_argument("name", help="kebab-case name of the bad pattern (secret-in-title)")
    parser.add_argument("--family", required=True, choices=sorted(FAMILY_MODULES))
    parser.add_argument(
        "--pack", type=Path, help="your rule pack's folder (for a code with your own prefix)"
    )
    parser.add_argument(
        "--root", type=Path, default=Path(), help="the checkout to write into (default: here)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """The command: write the files, print them and what to do next."""
    try:
        written = scaffold(args.code, args.name, args.family, root=args.root, pack=args.pack)
    except ScaffoldError as exc:
        print(f"elicitguard: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    if args.pack is not None:
        print(f"next: edit them, then run `elicitguard rules test {args.pack}`")
    else:
        print(
            "next: edit them (CONTRIBUTING.md), then run `elicitguard rules test`, "
            "`elicitguard rules docs` and `python scripts/gen_readme_rules.py`"
        )
    return 0


def scaffold(
    code: str, name: str, family: str, *, root: Path = Path(), pack: Path | None = None
) -> list[Path]:
    """Write the rule's files; return their paths. Refuses to overwrite anything."""
    code = code.upper()
    if not re.fullmatch(CODE_PATTERN, code):
        msg = f"rule code {code!r} must be 2-4 capitals and three digits (EG207, ACME001)"
        raise ScaffoldError(msg)
    if not _NAME.fullmatch(name):
        msg = f"rule name {name!r} must be kebab-case: lower-case words joined by '-'"
        raise ScaffoldError(msg)
    if family not in FAMILY_MODULES:
        msg = f"family {family!r} is not one of {', '.join(sorted(FAMILY_MODULES))}"
        raise ScaffoldError(msg)
    builtin = code.startswith("EG")
    if builtin and pack is not None:
        msg = "EG codes are built-in rules; give a pack's rules your own prefix (ACME001)"
        raise ScaffoldError(msg)
    if not builtin and pack is None:
        msg = "a rule with your own prefix goes into your pack: add --pack ./our-rules"
        raise ScaffoldError(msg)
    folder = (root / "rules" / family) if builtin else (pack / family)  # type: ignore[operator]
    _refuse_taken(code, folder.parent)
    rule_path = folder / f"{code}-{name}.yaml"
    cases_path = folder / f"{code}-{name}.cases.yaml"
    module_path = root / _BUILTIN / f"{FAMILY_MODULES[family]}.py"
    if builtin and not module_path.is_file():
        msg = f"{module_path} is missing: run `rules new` for a built-in rule in a checkout"
        raise ScaffoldError(msg)
    for path in (rule_path, cases_path):
        if path.exists():
            raise ScaffoldError(f"{path} exists already")
    snake = name.replace("-", "_")
    check_name = f"{family}.{snake}"
    folder.mkdir(parents=True, exist_ok=True)
    rule_path.write_text(_rule_yaml(code, name, family, check_name if builtin else None))
    cases_path.write_text(_cases_yaml(code, name, family))
    written = [rule_path, cases_path]
    if builtin:
        _append_check(module_path, code, name, check_name)
        written.append(module_path)
    return written


def _refuse_taken(code: str, rules_root: Path) -> None:
    if rules_root.is_dir() and any(rules_root.rglob(f"{code}-*.yaml")):
        raise ScaffoldError(f"rule code {code} is taken (codes are never reused)")


def _message(family: str, name: str) -> dict[str, Any]:
    params: dict[str, Any] = {"message": f"A message with the word {name}-example"}
    if _ITEMS.get(family) == "url_request":
        params.update(mode="url", url="https://accounts.example.com/connect", elicitationId="e1")
    else:
        params.update(mode="form", requestedSchema={"type": "object", "properties": {}})
    return {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": params}


def _flow(value: Any) -> str:
    """A JSON value as one line of YAML flow syntax (JSON is YAML)."""
    return json.dumps(value, ensure_ascii=False)


def _rule_yaml(code: str, name: str, family: str, check_name: str | None) -> str:
    item = _ITEMS.get(family, "form_request")
    logic = (
        f"check: {check_name}   # engine/builtin/{FAMILY_MODULES[family]}.py\n"
        f"params: {{words: [{name}-example]}}\n"
        if check_name is not None
        else f'match: {{field: message, contains: "{name}-example"}}\n'
    )
    example = _message(family, name)
    return (
        f"code: {code}\n"
        f"name: {name}\n"
        f"summary: TODO one line that says what the rule finds\n"
        "severity: medium            # info | low | medium | high | critical\n"
        "confidence: medium          # low | medium | high\n"
        "action: warn                # block | redact | warn | log | off\n"
        "requirements: []            # ids from PROTOCOL.md section (b)\n"
        f"applies_to: {{items: [{item}]}}\n"
        f"{logic}"
        'message: "The message carries {word}; TODO say what is wrong and what to do"\n'
        "docs:\n"
        "  why: >\n"
        "    TODO why the pattern is dangerous, and what the rule does not flag.\n"
        "  example:\n"
        "    expect: ruleid\n"
        "    note: the shape the rule exists for\n"
        '    protocol_version: "2025-11-25"\n'
        '    client_elicitation: {"form": {}, "url": {}}\n'
        f"    message: {_flow(example)}\n"
        "  fix: >\n"
        "    TODO what the server should do instead.\n"
    )


def _cases_yaml(code: str, name: str, family: str) -> str:
    hit = _message(family, name)
    hit["id"] = 2
    clean = _message(family, name)
    clean["id"] = 3
    clean["params"]["message"] = "A message without the word"
    options = '"protocol_version": "2025-11-25", "client_elicitation": {"form": {}, "url": {}}'
    return (
        f"# Cases for {code}: each says whether the rule fires (ruleid) or not (ok), and why.\n"
        f"rule: {code}\n"
        "cases:\n"
        f'  - {{expect: ruleid, note: "the word in the message", {options},\n'
        f"     message: {_flow(hit)}}}\n"
        f'  - {{expect: ok, note: "a message without it", {options},\n'
        f"     message: {_flow(clean)}}}\n"
    )


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


_IMPORTS = (
    ("Iterator", "from collections.abc import Iterator"),
    ("Mapping", "from collections.abc import Mapping"),
    ("Any", "from typing import Any"),
    ("Hit", "from elicitguard.base.decision import Hit"),
    ("CheckContext", "from elicitguard.engine.context import CheckContext"),
    ("CheckParams", "from elicitguard.engine.context import CheckParams"),
    ("check", "from elicitguard.engine.context import check"),
    ("Item", "from elicitguard.protocol.items import Item"),
)


def _import_order(name: str) -> tuple[int, str]:
    """isort's order within one ``from`` import: constants, classes, then the rest."""
    if name.isupper() and len(name) > 1:
        return 0, name
    return (1 if name[:1].isupper() else 2), name


def _merge_import(lines: list[str], wanted: str) -> bool:
    """Add the name of ``wanted`` (``from M import N``) to a one-line import from ``M``
    already in ``lines``, in isort's order; False when there is none to add it to."""
    head, name = wanted.rsplit(" import ", 1)
    for index, line in enumerate(lines):
        if line.startswith(head + " import ") and "(" not in line:
            names = [n.strip() for n in line.split(" import ", 1)[1].split(",")]
            lines[index] = f"{head} import {', '.join(sorted({*names, name}, key=_import_order))}\n"
            return True
    return False


def _append_check(module: Path, code: str, name: str, check_name: str) -> None:
    """Add the starter check (and the imports it needs) to the family's module."""
    text = module.read_text(encoding="utf-8")
    snake = name.replace("-", "_")
    missing = [
        line
        for word, line in _IMPORTS
        if not re.search(rf"^(?:from \S+ )?import .*\b{word}\b", text, re.MULTILINE)
    ]
    if missing:
        lines = text.splitlines(keepends=True)
        missing = [m for m in missing if not _merge_import(lines, m)]
        last = max(
            i
            for i, line in enumerate(lines)
            if line.startswith(("from ", "import ")) and "(" not in line
        )
        lines[last + 1 : last + 1] = [m + "\n" for m in missing]
        text = "".join(lines)
    camel = _camel(name)
    text = text.rstrip("\n") + (
        "\n\n\n"
        f"class {camel}Params(CheckParams):\n"
        f'    """{code}: the words the starter check looks for (replace with your own)."""\n'
        "\n"
        f'    words: tuple[str, ...] = ("{name}-example",)\n'
        "\n\n"
        f'@check("{check_name}", pure=True, params={camel}Params)\n'
        f"def {snake}_check(\n"
        "    item: Item, ctx: CheckContext, params: Mapping[str, Any]\n"
        ") -> Iterator[Hit]:\n"
        f'    """{code}: TODO say what the check finds (the starter: a word in the message)."""\n'
        "    data = item.data\n"
        '    message = data.get("message") if isinstance(data, dict) else None\n'
        "    if not isinstance(message, str):\n"
        "        return\n"
        f'    for word in params.get("words") or {camel}Params().words:\n'
        "        if word in message:\n"
        '            yield Hit(pointer=item.pointer + "/message", args={"word": word})\n'
        "            return\n"
    )
    module.write_text(text, encoding="utf-8")
