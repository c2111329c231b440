"""Precision and recall of the form rules on the held-out set ``data/forms_heldout.yaml``.

The held-out forms were written before the rules were tuned and are never used to tune them:
change the lexicons or rules because a rule case fails, never because a number here moved.
Each form goes through the engine (default preset, 2025-11-25, a client that declared form
mode); a form counts as flagged when EG201 or EG206 fires. Each answer goes through the EG204
check with its form's schema. The keyword denylist of detect-secrets over keys, titles,
descriptions and the message is printed beside (DETECTION.md section 5 measured it on other
data), when the ``bench`` extra is installed.

Run: ``.venv/bin/python benchmarks/eval_forms.py``.
"""

from __future__ import annotations

import base64
import io
import json
import random
import re
import string
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from elicitguard import Direction, Engine, Envelope, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "forms_heldout.yaml"
C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT
ALNUM = string.ascii_letters + string.digits


def _samples() -> dict[str, str]:
    """Credential-shaped values for the answers' ``{name}`` slots (built, never stored)."""
    rng = random.Random(42)

    def r(n: int, alphabet: str = ALNUM) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    def b64u(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    pem_body = "\n".join(r(64, ALNUM + "+/") for _ in range(5))
    return {
        "github": "ghp_" + r(36),
        "slack": "xoxb-" + r(12, string.digits) + "-" + r(13, string.digits) + "-" + r(24),
        "random40": r(40),
        "random32": r(32),
        "random16": r(16),
        "pem": "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body + "\n-----END RSA PRIVATE KEY-----",
        "aws_pair": "aws_access_key_id = AKIA"
        + r(16, string.ascii_uppercase + "234567")
        + "\naws_secret_access_key = "
        + r(40, ALNUM + "/+"),
        "slack_webhook": "https://hooks.slack.com/services/T"
        + r(8, string.ascii_uppercase + string.digits)
        + "/B"
        + r(8, string.ascii_uppercase + string.digits)
        + "/"
        + r(24),
        "jwt": b64u({"alg": "HS256", "typ": "JWT"}) + "." + b64u({"sub": "42"}) + "." + r(43),
        "stripe": "sk_live_" + r(24),
    }


def _fill(value: Any, samples: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\}", lambda m: samples.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {k: _fill(v, samples) for k, v in value.items()}
    return value


def _engine() -> Engine:
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}},
    }
    engine.evaluate(Envelope(init, C2S, session="e"))
    engine.evaluate(
        Envelope(
            {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}},
            S2C,
            session="e",
        )
    )
    return engine


def _request(rid: int, message: str, props: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": props},
        },
    }


def _keyword_baseline() -> Any:
    try:
        from detect_secrets.plugins.keyword import DENYLIST_REGEX
    except ImportError:
        return None
    denylist = re.compile(DENYLIST_REGEX, re.IGNORECASE)

    def flagged(message: str, props: dict[str, Any]) -> bool:
        texts = [message]
        for key, prop in props.items():
            texts += [key, str(prop.get("title", "")), str(prop.get("description", ""))]
        return any(denylist.search(t) for t in texts if t)

    return flagged


def _pr(rows: list[tuple[bool, bool]]) -> str:
    tp = sum(f and y for f, y in rows)
    fp = sum(f and not y for f, y in rows)
    fn = sum(y and not f for f, y in rows)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return f"P {precision:.3f} R {recall:.3f} (tp {tp}, fp {fp}, fn {fn}, n {len(rows)})"


def main() -> int:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    engine = _engine()
    baseline = _keyword_baseline()
    ours: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    theirs: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    misses: list[str] = []
    for rid, form in enumerate(data["forms"], start=1):
        decision = engine.evaluate(
            Envelope(_request(rid, form["message"], form["properties"]), S2C, session="e")
        )
        flagged = bool({"EG201", "EG206"} & set(decision.codes))
        label = form["label"] == "secret"
        for group in (form["lang"], "all"):
            ours[group].append((flagged, label))
            if baseline is not None:
                theirs[group].append((baseline(form["message"], form["properties"]), label))
        if flagged != label:
            kind = "missed" if label else "false alarm"
            misses.append(
                f"  {kind}: {form['lang']} {form['message']!r} {list(form['properties'])}"
            )
    print("EG201/EG206 on held-out forms (a form is flagged when either fires)")
    for group in sorted(ours, key=lambda g: (g == "all", g)):
        line = f"  {group:8} elicitguard {_pr(ours[group])}"
        if baseline is not None:
            line += f" | detect-secrets denylist {_pr(theirs[group])}"
        print(line)
    print("\n".join(misses) or "  (no misses)")
    samples = _samples()
    rows: list[tuple[bool, bool]] = []
    answer_misses: list[str] = []
    for rid, answer in enumerate(data["answers"], start=1000):
        props = answer["properties"]
        engine.evaluate(Envelope(_request(rid, "Please answer", props), S2C, session="e"))
        content = _fill(answer["content"], samples)
        reply = {"jsonrpc": "2.0", "id": rid, "result": {"action": "accept", "content": content}}
        decision = engine.evaluate(Envelope(reply, C2S, session="e"))
        flagged = "EG204" in decision.codes
        label = answer["label"] == "secret"
        rows.append((flagged, label))
        if flagged != label:
            kind = "missed" if label else "false alarm"
            answer_misses.append(f"  {kind}: {list(props)} {answer['content']}")
    print(f"EG204 on held-out answers: {_pr(rows)}")
    print("\n".join(answer_misses) or "  (no misses)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
