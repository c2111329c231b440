"""Adversarial 1 MB inputs against every regex catalogue and a user ``match: regex``.

``python benchmarks/bench_adversarial.py [--size BYTES]`` prints one line per (scanner,
input) with the time. A linear-time scanner takes milliseconds to a few hundred ms per MB;
a backtracking one would take minutes. tests/hardening/test_linear_time.py runs the same
table at 256 KiB with a time bound; each scanner here is also timed at half the size so the
growth ratio (about 2 when linear) is visible.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from elicitguard.checks.forms._lexicon import compile_lexicon
from elicitguard.checks.pii import scan_pii
from elicitguard.checks.schema._formats import _is_email, _is_uri
from elicitguard.checks.secrets import scan_text
from elicitguard.checks.urls import find_urls_in_text, parse_url
from elicitguard.engine.match import _operator
from elicitguard.engine.models import MatchExpr

#: Inputs built to make a backtracking engine explode (repetition with a failing tail).
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "a*N": lambda n: "a" * n,
    "digits": lambda n: "1" * n,
    "digit-space": lambda n: ("1 " * (n // 2 + 1))[:n] + "x",
    "label-dot": lambda n: ("a." * (n // 2 + 1))[:n] + "-",
    "label-dash": lambda n: ("a-" * (n // 2 + 1))[:n] + "!",
    "email-ish": lambda n: ("a@" + "a." * (n // 2))[:n],
    "percent": lambda n: "%" * n,
    "camel": lambda n: ("aA" * (n // 2 + 1))[:n],
    "base64ish": lambda n: ("Ab0/" * (n // 4 + 1))[:n] + "=",
    "url-run": lambda n: ("https://" + "a" * n)[:n],
    "key=value": lambda n: ("token=" + "x" * n)[:n],
    "unicode": lambda n: ("é𝓪\u200b" * (n // 3 + 1))[:n],
}

USER_REGEXES = (r"(a+)+$", r"(a|aa)+b", r"(.*a){20}", r"^(\w+\s?)*$")


def _lexicon() -> Callable[[str], Any]:
    pattern = compile_lexicon(("en", "de", "fr", "es", "ja", "zh-Hans", "zh-Hant")).pattern
    return lambda text: pattern.search(text)


def _user(regex: str) -> Callable[[str], Any]:
    test = _operator(MatchExpr(field="message", regex=regex), "message", None)
    return lambda text: test(text, None)  # type: ignore[arg-type]


def scanners() -> dict[str, Callable[[str], Any]]:
    """Every catalogue scan, the schema format checks (as used: fullmatch), each user regex."""
    table: dict[str, Callable[[str], Any]] = {
        "secrets.scan_text": scan_text,
        "pii.scan_pii": scan_pii,
        "pii.scan_pii[key=email]": lambda t: scan_pii(t, "email"),
        "forms.lexicon": _lexicon(),
        "urls.find_urls_in_text": find_urls_in_text,
        "urls.parse_url": parse_url,
        "schema format: email": _is_email,
        "schema format: uri": _is_uri,
    }
    for regex in USER_REGEXES:
        table[f"match: regex {regex}"] = _user(regex)
    return table


def measure(size: int) -> list[tuple[str, str, float]]:
    """Time every scanner on every adversarial input of ``size`` characters."""
    out = []
    inputs = {name: build(size) for name, build in ADVERSARIAL.items()}
    for scanner, fn in scanners().items():
        for name, text in inputs.items():
            started = time.perf_counter()
            fn(text)
            out.append((scanner, name, time.perf_counter() - started))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1 << 20)
    args = parser.parse_args()
    full = measure(args.size)
    half = {(s, i): t for s, i, t in measure(args.size // 2)}
    worst = 0.0
    for scanner, name, seconds in sorted(full, key=lambda r: -r[2]):
        ratio = seconds / max(half[(scanner, name)], 1e-6)
        worst = max(worst, seconds)
        print(f"{seconds * 1000:9.1f} ms  x{ratio:4.1f}  {scanner:55s} {name}")
    print(f"{len(full)} runs of {args.size} characters; slowest {worst * 1000:.1f} ms")


if __name__ == "__main__":
    main()
