"""Precision, recall and false-positive rate of the form rules on labelled forms, per language
and per class, on a tuning half and a checking half.

Samples, each with its provenance:

* ``data/forms_heldout.yaml`` (``elicitguard-heldout``): forms written before the rules were
  tuned, in seven languages, half of them traps;
* ``data/forms_public.yaml`` (``chromium-autofill``): fields of real web forms from Chromium's
  autofill heuristics test data (card numbers, security codes, one-time codes, passwords, and
  many address and contact fields in thirteen languages), each turned into a one-field form;
* ``data/forms_languages.yaml`` (``elicitguard-phrases``): five phrases in each of the 31
  languages (password title, an ask for an API key, a one-time code title, a "never type your
  password" trap and a key-name trap);
* ``disguise``: every Latin-script secret title above written four ways a hostile server would
  (digits for letters, spaced letters, one Cyrillic look-alike letter, an HTML character
  reference), derived here deterministically;
* ``data/forms_mcp_public.yaml`` (``mcp-public``): real elicitation forms that public MCP servers,
  SDK examples and SDK docs send (message and properties as on the wire, each with its
  ``owner/repo@commit:path``), labelled by reading them as their user would; a source apart
  from the others, so it is not disguised here.

The split is deterministic: a sample goes to the tuning half when the first byte of the
SHA-256 of its id is even. Tune lexicons on the tuning half only; the checking half is what the
numbers mean. Each form goes through the engine (default preset, 2025-11-25, a client that
declared form mode); a form counts as flagged when EG201 or EG206 fires. Each answer of the
held-out file goes through the EG204 check with its form's schema. The keyword denylist of
detect-secrets over keys, titles, descriptions and the message is printed beside when the
``bench`` extra is installed.

Run: ``.venv/bin/python benchmarks/eval_forms.py [--misses]``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import re
import string
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from elicitguard import Direction, Engine, Envelope, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "forms_heldout.yaml"
PUBLIC = HERE / "data" / "forms_public.yaml"
PHRASES = HERE / "data" / "forms_languages.yaml"
MCP_PUBLIC = HERE / "data" / "forms_mcp_public.yaml"
CHROMIUM = "chromium/chromium@{commit}:components/test/data/autofill/heuristics/output/{file}.out"
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


@dataclass(frozen=True)
class Sample:
    """One labelled form and where it came from."""

    id: str
    source: str
    provenance: str
    lang: str
    secret: bool
    cls: str
    message: str
    properties: dict[str, Any]

    @property
    def half(self) -> str:
        return "tuning" if hashlib.sha256(self.id.encode()).digest()[0] % 2 == 0 else "checking"


def _heldout(data: dict[str, Any]) -> list[Sample]:
    return [
        Sample(
            f"heldout/{i}",
            "elicitguard-heldout",
            f"benchmarks/data/forms_heldout.yaml forms[{i}]",
            form["lang"],
            form["label"] == "secret",
            "secret (any)" if form["label"] == "secret" else "benign",
            form["message"],
            form["properties"],
        )
        for i, form in enumerate(data["forms"])
    ]


def _public() -> list[Sample]:
    data = yaml.safe_load(PUBLIC.read_text(encoding="utf-8"))
    out = []
    for i, line in enumerate(data["fields"].splitlines()):
        file, lang, label, cls, key, title = line.split("|", 5)
        out.append(
            Sample(
                f"chromium/{file}/{key}/{i}",
                "chromium-autofill",
                CHROMIUM.format(commit=data["sources"][file], file=file) + f" ({key})",
                lang,
                label == "secret",
                cls or "benign",
                "Please fill in the form",
                {key or "field": {"type": "string", "title": title}},
            )
        )
    return out


def _phrases() -> list[Sample]:
    data = yaml.safe_load(PHRASES.read_text(encoding="utf-8"))
    out = []
    for lang, p in data.items():
        where = f"benchmarks/data/forms_languages.yaml {lang}"
        text = {"type": "string"}
        rows = (
            ("password", True, "password", "", {"a": {**text, "title": p["password_title"]}}),
            ("ask", True, "api_key", p["api_key_ask"], {"value": text}),
            ("otp", True, "otp", "", {"a": {**text, "title": p["otp_title"]}}),
            ("deny", False, "benign", p["deny_message"], {"comment": text}),
            ("keyname", False, "benign", "", {"label": {**text, "title": p["key_name_title"]}}),
        )
        for name, secret, cls, message, props in rows:
            out.append(
                Sample(f"phrases/{lang}/{name}", "elicitguard-phrases", f"{where}.{name}",
                       lang, secret, cls, message or "Please fill in the form", props)
            )  # fmt: skip
    return out


def _mcp_public() -> list[Sample]:
    data = yaml.safe_load(MCP_PUBLIC.read_text(encoding="utf-8"))
    return [
        Sample(
            f"mcp-public/{form['id']}",
            "mcp-public",
            f"{form['source']} ({form['id']})",
            form["lang"],
            form["label"] == "secret",
            "secret (any)" if form["label"] == "secret" else "benign",
            form["message"],
            form["properties"],
        )
        for form in data["forms"]
    ]


_LEET = str.maketrans({"a": "4", "e": "3", "o": "0", "s": "5", "i": "1"})


def _disguises(text: str) -> dict[str, str]:
    """Four disguises of a Latin-script text (the first letter that allows each)."""
    out: dict[str, str] = {}
    leet = text.translate(_LEET)
    if leet != text:
        out["leet"] = leet
    out["spaced"] = " ".join(text)
    for latin, cyrillic in (("a", "а"), ("o", "о"), ("e", "е"), ("p", "р"), ("c", "с")):
        if latin in text:
            out["lookalike"] = text.replace(latin, cyrillic, 1)
            break
    first = next((c for c in text if c.isalpha()), None)
    if first is not None:
        out["html"] = text.replace(first, f"&#{ord(first)};", 1)
    return out


def _disguised(samples: list[Sample]) -> list[Sample]:
    out = []
    for sample in samples:
        if not sample.secret or sample.source == "elicitguard-heldout":
            continue
        for key, prop in sample.properties.items():
            title = prop.get("title")
            if not isinstance(title, str) or not title.isascii():
                continue
            for kind, variant in _disguises(title.rstrip(":*")).items():
                props = {key: {**prop, "title": variant}}
                out.append(
                    Sample(f"{sample.id}/disguise/{kind}", "disguise", f"{sample.provenance} ({kind})",
                           sample.lang, True, f"disguise:{kind}", sample.message, props)
                )  # fmt: skip
            break
    return out


def samples() -> list[Sample]:
    """Every labelled form sample, in a stable order."""
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    base = _heldout(data) + _public() + _phrases()
    return base + _disguised(base) + _mcp_public()


def _rates(rows: list[tuple[bool, bool]]) -> str:
    tp = sum(f and y for f, y in rows)
    fp = sum(f and not y for f, y in rows)
    fn = sum(y and not f for f, y in rows)
    tn = sum(not f and not y for f, y in rows)
    precision = f"{tp / (tp + fp):.3f}" if tp + fp else "  -  "
    recall = f"{tp / (tp + fn):.3f}" if tp + fn else "  -  "
    fpr = f"{fp / (fp + tn):.3f}" if fp + tn else "  -  "
    return f"P {precision} R {recall} FPR {fpr} (tp {tp}, fp {fp}, fn {fn}, tn {tn})"


def _pr(rows: list[tuple[bool, bool]]) -> str:
    tp = sum(f and y for f, y in rows)
    fp = sum(f and not y for f, y in rows)
    fn = sum(y and not f for f, y in rows)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return f"P {precision:.3f} R {recall:.3f} (tp {tp}, fp {fp}, fn {fn}, n {len(rows)})"


def _report(title: str, groups: dict[str, list[tuple[bool, bool]]]) -> None:
    print(title)
    for group in sorted(groups, key=lambda g: (g == "all", g)):
        print(f"  {group:18} {_rates(groups[group])}")


def evaluate_forms(show_misses: bool) -> None:
    """Print the form figures per half, language, class and source."""
    engine = _engine()
    baseline = _keyword_baseline()
    by: dict[str, dict[str, dict[str, list[tuple[bool, bool]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    misses: list[str] = []
    for rid, sample in enumerate(samples(), start=1):
        decision = engine.evaluate(
            Envelope(_request(rid, sample.message, sample.properties), S2C, session="e")
        )
        flagged = bool({"EG201", "EG206"} & set(decision.codes))
        row = (flagged, sample.secret)
        for half in (sample.half, "both"):
            by[half]["language"][sample.lang].append(row)
            by[half]["language"]["all"].append(row)
            by[half]["class"][sample.cls].append(row)
            by[half]["source"][sample.source].append(row)
            if baseline is not None:
                by[half]["baseline"][sample.lang].append(
                    (baseline(sample.message, sample.properties), sample.secret)
                )
                by[half]["baseline"]["all"].append(
                    (baseline(sample.message, sample.properties), sample.secret)
                )
        if flagged != sample.secret:
            kind = "missed" if sample.secret else "false alarm"
            misses.append(
                f"  {sample.half:8} {kind}: {sample.lang} {sample.cls} {sample.provenance}"
            )
    for half in ("tuning", "checking"):
        print(f"=== {half} half: EG201/EG206 (a form is flagged when either fires)")
        _report("per language", by[half]["language"])
        _report("per class (benign rows give the false-positive rate)", by[half]["class"])
        _report("per source", by[half]["source"])
        if baseline is not None:
            _report("detect-secrets keyword denylist, per language", by[half]["baseline"])
    print(f"misses: {len(misses)}")
    if show_misses:
        print("\n".join(misses))


def evaluate_answers(data: dict[str, Any]) -> None:
    """EG204 on the held-out answers."""
    engine = _engine()
    samples_ = _samples()
    rows: list[tuple[bool, bool]] = []
    answer_misses: list[str] = []
    for rid, answer in enumerate(data["answers"], start=1000):
        props = answer["properties"]
        engine.evaluate(Envelope(_request(rid, "Please answer", props), S2C, session="e"))
        content = _fill(answer["content"], samples_)
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


def main(argv: list[str]) -> int:
    evaluate_forms("--misses" in argv)
    evaluate_answers(yaml.safe_load(DATA.read_text(encoding="utf-8")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
