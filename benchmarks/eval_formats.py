"""EG204 recall on credential formats of many vendors, sampled from gitleaks's rule patterns.

Why: peers' fixtures hold a few literal examples per vendor, often fillers; the held-out data
this project is scored on holds real-format credentials of many vendors with random bodies.
This script reads gitleaks's ``config/gitleaks.toml`` (a public, community-maintained list of
~220 formats; read from a git directory with ``git show``, nothing built or run), draws random
strings from each rule's secret group (Python's own regex parser walks the pattern; repeats
are capped at their minimum plus eight), and asks the engine whether a one-field answer holding
each one is a secret:

* formats whose secret carries the rule's keyword (a vendor prefix, ``hf_``, ``NRAK-``): the
  token alone, and inside a neutral sentence;
* formats that gitleaks finds only by the vendor's name near a random value: ``VENDOR_KEY=…``
  and ``vendor: …``.

Rules are split into a tuning half and a checking half by a hash of the rule id (stable across
runs). The samples have no negatives, so this measures recall only: false-positive rates come
from ``eval_answers.py`` (peers' labelled negatives). Random strings from a pattern are not all
realistic (a pattern's ``[a-z0-9]`` class never yields the mixed case of a real key), so read
the misses before acting on them. Usage: ``python benchmarks/eval_formats.py --gitleaks DIR``
(a git directory) or ``--config gitleaks.toml``; ``--misses`` lists what was missed.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import random
import re
import re._constants as sre_constants  # type: ignore[import-not-found]
import re._parser as sre_parser  # type: ignore[import-not-found]
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import eval_answers

_PRINTABLE = [chr(c) for c in range(33, 127)]
_CATEGORIES = {
    sre_constants.CATEGORY_DIGIT: "0123456789",
    sre_constants.CATEGORY_WORD: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    sre_constants.CATEGORY_SPACE: " ",
}
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)


def _class_chars(items: list[tuple[Any, Any]]) -> list[str]:
    negate, chars = False, set()
    for op, arg in items:
        if op is sre_constants.NEGATE:
            negate = True
        elif op is sre_constants.LITERAL:
            chars.add(chr(arg))
        elif op is sre_constants.RANGE:
            chars.update(chr(c) for c in range(arg[0], min(arg[1], 126) + 1))
        elif op is sre_constants.CATEGORY:
            chars.update(_CATEGORIES.get(arg, ""))
    if negate:
        chars = set(_PRINTABLE) - chars
    return sorted(c for c in chars if 32 < ord(c) < 127) or ["a"]


def _draw(parsed: Any, rnd: random.Random, mixed_case: bool, groups: dict[int, str]) -> str:
    """One random string the parsed pattern matches (lookarounds and anchors ignored)."""
    out: list[str] = []
    for op, arg in parsed:
        if op is sre_constants.LITERAL:
            out.append(chr(arg))
        elif op is sre_constants.NOT_LITERAL:
            out.append(rnd.choice([c for c in _PRINTABLE if c != chr(arg)]))
        elif op is sre_constants.ANY:
            out.append(rnd.choice(_PRINTABLE[15:70]))
        elif op is sre_constants.IN:
            char = rnd.choice(_class_chars(arg))
            out.append(char.upper() if mixed_case and rnd.random() < 0.5 else char)
        elif op in _REPEATS:
            low, high, sub = arg
            high = low + 8 if high == sre_constants.MAXREPEAT else min(high, low + 8)
            out.extend(_draw(sub, rnd, mixed_case, groups) for _ in range(rnd.randint(low, high)))
        elif op is sre_constants.SUBPATTERN:
            group, _, _, sub = arg
            text = _draw(sub, rnd, mixed_case, groups)
            if group:
                groups[group] = text
            out.append(text)
        elif op is sre_constants.BRANCH:
            out.append(_draw(rnd.choice(arg[1]), rnd, mixed_case, groups))
        elif op is sre_constants.GROUPREF:
            out.append(groups.get(arg, ""))
        elif op not in (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            raise ValueError(f"unsupported pattern element {op}")
    return "".join(out)


def _python_pattern(go: str) -> tuple[str, bool]:
    """A Go (RE2) pattern as Python's parser reads it, and whether it ignores case."""
    mixed_case = "(?i)" in go
    text = go.replace("(?-i:", "(?:").replace("(?i)", "").replace(r"\z", "$")
    return text.replace("[:alnum:]", "a-zA-Z0-9"), mixed_case


def half_of(rule_id: str) -> str:
    """``tuning`` or ``checking``, from a hash of the rule id."""
    return "tuning" if hashlib.sha256(rule_id.encode()).digest()[0] % 2 == 0 else "checking"


def samples(config: dict[str, Any], per_rule: int, seed: int) -> Iterator[dict[str, Any]]:
    """``per_rule`` random secrets per rule, each with its rule id, keyword and half."""
    rnd = random.Random(seed)
    for rule in config.get("rules", []):
        pattern = rule.get("regex")
        if not pattern:
            continue
        text, mixed_case = _python_pattern(pattern)
        try:
            parsed = sre_parser.parse(text, re.IGNORECASE if mixed_case else 0)
        except re.error:
            continue
        keywords = [k.lower() for k in rule.get("keywords", [])]
        for _ in range(per_rule):
            groups: dict[int, str] = {}
            try:
                whole = _draw(parsed, rnd, mixed_case, groups)
            except ValueError:
                break
            secret = (groups.get(rule.get("secretGroup", 1)) or whole).strip()
            yield {
                "rule": rule["id"],
                "keyword": keywords[0] if keywords else rule["id"].split("-")[0],
                "prefixed": any(k in secret.lower() for k in keywords),
                "secret": secret,
                "half": half_of(rule["id"]),
            }


def contexts(sample: dict[str, Any]) -> dict[str, str]:
    """The answers one sample is written into."""
    secret, keyword = sample["secret"], sample["keyword"]
    if sample["prefixed"]:
        return {"prefixed, alone": secret, "prefixed, in a sentence": f"ok, here: {secret} done"}
    name = re.sub(r"[^A-Za-z0-9]+", "_", keyword).strip("_").upper() or "VENDOR"
    return {
        "vendor named, NAME_KEY=": f"{name}_KEY={secret}",
        "vendor named, name:": f"{keyword}: {secret}",
    }


def evaluate(config: dict[str, Any], per_rule: int = 3, seed: int = 7) -> dict[str, Any]:
    """Recall per half and context, and the misses."""
    engine = eval_answers._engine()
    seen: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    misses: list[tuple[str, str, str, str]] = []
    for number, sample in enumerate(samples(config, per_rule, seed)):
        for context, text in contexts(sample).items():
            request = eval_answers._request(10_000 + number, {"notes": "Notes"})
            engine.evaluate(eval_answers.Envelope(request, eval_answers.S2C, session="e"))
            answer = {
                "jsonrpc": "2.0",
                "id": 10_000 + number,
                "result": {"action": "accept", "content": {"notes": text}},
            }
            decision = engine.evaluate(eval_answers.Envelope(answer, eval_answers.C2S, session="e"))
            found = any(f.code == "EG204" for f in decision.findings)
            tally = seen[(sample["half"], context)]
            tally[0] += found
            tally[1] += 1
            if not found:
                misses.append((sample["half"], context, sample["rule"], text))
    return {"recall": dict(seen), "misses": misses}


def _config(args: argparse.Namespace) -> dict[str, Any]:
    if args.config:
        return tomllib.loads(Path(args.config).read_text(encoding="utf-8"))
    text = subprocess.run(
        ["git", "--git-dir", args.gitleaks, "show", "HEAD:config/gitleaks.toml"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return tomllib.loads(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--gitleaks", help="a git directory of gitleaks")
    where.add_argument("--config", help="a gitleaks.toml file")
    parser.add_argument("--per-rule", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--misses", action="store_true", help="list the missed samples")
    args = parser.parse_args(argv)
    result = evaluate(_config(args), args.per_rule, args.seed)
    for half in ("tuning", "checking"):
        print(f"== {half} half (rules split by a hash of their id)")
        for (row_half, context), (hits, total) in sorted(result["recall"].items()):
            if row_half == half:
                print(f"  {context:28} R {hits / total:.3f}  ({hits}/{total})")
    if args.misses:
        for half, context, rule, text in result["misses"]:
            print(f"  missed [{half}] {rule:40} {context:28} {text[:90]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
