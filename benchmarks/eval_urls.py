"""Recall, precision and false-positive rate of the URL and host rules on public labelled data.

Two data sets, both copied from public peers' test suites with their provenance in the file:

* ``data/url_host_cases.tsv``: hosts from the WHATWG URL standard's own tests
  (web-platform-tests ``urltestdata.json``) and the filter-bypass payloads of
  PayloadsAllTheThings' SSRF page, labelled attack (an IP spelling, an invalid host, a parser
  discrepancy, a non-https scheme, a special address) or control (a host written canonically);
* ``data/chromium_idn_cases.tsv``: the hosts of Chromium's IDN spoof checker unit test with
  Chromium's verdict (safe, unsafe, invalid);
* ``data/url_mode_cases.tsv``: PayloadsAllTheThings' open-redirect payloads and URL-mode
  targets on the user's own network, protected names in paths, and harmless OAuth and
  ordinary URLs (provenance in the file); written after the EG307/EG308 code, scored once.

* ``data/brand_host_cases.tsv``: real phishing hosts that name a protected brand, sampled from
  the public Phishing.Database feed, against Chromium's list of the popular sites its
  look-alike heuristics protect (every one a real site's own domain, so a control); gathered
  after the first EG404 brand checks, whose later changes were tuned on the tuning half's
  misses only.

A third set measures decoding: every URL of the EG303, EG304 and EG305 rule cases (ours,
written from vendor documentation) is rewritten the ways an attacker hides a value (each query
value percent-encoded twice and three times, the query base64-wrapped under a neutral name,
the query moved to the fragment); a variant of a ``ruleid`` URL must still trip that rule and
a variant of an ``ok`` URL must not.

Each URL goes through the engine as the ``url`` of a URL-mode ``elicitation/create`` (default
preset, 2025-11-25, a client that declared URL mode). An attack is caught when the decision
blocks (for the encoded variants: when the rule of its case fires); a control passes when it
does not. ``http://`` host payloads are judged as ``https://`` so that the host decides, not the
scheme. Rows are split into a tuning half and a checking half by a hash of the URL
(deterministic); both halves are printed. The rules were changed while reading the misses of
both halves of the first two sets, so their checking half is not strictly unseen; the encoded
variants were scored once, after the decoding was written. Chromium's rows that depend on its
test-only top-domain list are reported apart, not scored: elicitguard does not bundle that list.

Run: ``.venv/bin/python benchmarks/eval_urls.py`` (add ``--misses`` to list what was missed).
"""

from __future__ import annotations

import base64
import hashlib
import io
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import yaml

from elicitguard import Direction, Engine, Envelope, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing

HERE = Path(__file__).resolve().parent
RULES = HERE.parent / "rules" / "url"
ENCODED_RULES = ("EG303", "EG304", "EG305")
HOSTS = HERE / "data" / "url_host_cases.tsv"
IDN = HERE / "data" / "chromium_idn_cases.tsv"
URL_MODE = HERE / "data" / "url_mode_cases.tsv"
BRAND_HOSTS = HERE / "data" / "brand_host_cases.tsv"
NOT_SCORED = frozenset({"chromium_top_domains"})
SESSION = "eval-urls"


@dataclass(frozen=True)
class Row:
    """One labelled URL; ``rule`` set when only that rule's finding counts."""

    url: str
    attack: bool
    cls: str
    source: str
    rule: str | None = None


def _lines(path: Path) -> list[list[str]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            out.append(line.split("\t"))
    return out


def host_rows() -> list[Row]:
    rows = []
    for url, label, cls, source in _lines(HOSTS):
        if cls != "scheme" and url.startswith("http://"):
            url = "https://" + url[len("http://") :]
        rows.append(Row(url, label == "attack", cls, source))
    return rows


def idn_rows() -> list[Row]:
    return [
        Row(f"https://{host}/", verdict != "safe", cls, "chromium")
        for host, verdict, cls in _lines(IDN)
    ]


def url_mode_rows() -> list[Row]:
    rows = []
    for url, label, cls, source, *rule in _lines(URL_MODE):
        rows.append(Row(url, label == "attack", cls, source, rule[0] if rule else None))
    return rows


def brand_host_rows() -> list[Row]:
    return [
        Row(f"https://{host}/", label == "attack", cls, source)
        for host, label, cls, source in _lines(BRAND_HOSTS)
    ]


def _case_urls(code: str) -> list[tuple[str, bool]]:
    """``(url, is_ruleid)`` of each URL-mode case of rule ``code``."""
    path = next(RULES.glob(f"{code}-*.cases.yaml"))
    out = []
    for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
        found = _find_url(case.get("message"))
        if found is not None and case.get("expect") in ("ruleid", "ok"):
            out.append((found, case["expect"] == "ruleid"))
    return out


def _find_url(value: object) -> str | None:
    if isinstance(value, dict):
        if value.get("mode") == "url" and isinstance(value.get("url"), str):
            return value["url"]
        for item in value.values():
            found = _find_url(item)
            if found is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            found = _find_url(item)
            if found is not None:
                return found
    return None


def _requote(query: str, times: int) -> str:
    pairs = []
    for pair in query.split("&"):
        key, eq, value = pair.partition("=")
        for _ in range(times):
            value = quote(value, safe="")
        pairs.append(key + eq + value)
    return "&".join(pairs)


def variants(url: str) -> list[tuple[str, str]]:
    """``(how, url)``: the ways an attacker re-encodes the query of ``url``."""
    base, mark, rest = url.partition("?")
    if not mark:
        return []
    query, _, fragment = rest.partition("#")
    tail = "#" + fragment if fragment else ""
    wrapped = base64.urlsafe_b64encode(query.encode("utf-8")).decode("ascii").rstrip("=")
    return [
        ("encoded_twice", f"{base}?{_requote(query, 1)}{tail}"),
        ("encoded_thrice", f"{base}?{_requote(query, 2)}{tail}"),
        ("base64_wrapped", f"{base}?ref={wrapped}{tail}"),
        ("in_fragment", f"{base}#{query}"),
    ]


def encoded_rows() -> list[Row]:
    rows = []
    for code in ENCODED_RULES:
        for url, ruleid in _case_urls(code):
            for how, variant in variants(url):
                rows.append(Row(variant, ruleid, f"{code}_{how}", "rule-cases", code))
    return rows


def half(url: str) -> str:
    """``tuning`` or ``checking``, fixed by the URL's SHA-256."""
    return "tuning" if hashlib.sha256(url.encode("utf-8")).digest()[0] % 2 == 0 else "checking"


def _engine() -> Engine:
    """The default preset, with a 2025-11-25 session whose client declared URL mode."""
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"url": {}}}},
    }
    engine.evaluate(Envelope(init, Direction.CLIENT_TO_SERVER, session=SESSION))
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}
    engine.evaluate(Envelope(answer, Direction.SERVER_TO_CLIENT, session=SESSION))
    return engine


def judge(engine: Engine, url: str) -> tuple[bool, tuple[str, ...]]:
    """Whether the engine blocks ``url`` as a URL-mode target, and the codes it found."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "Connect your account",
            "url": url,
            "elicitationId": "e-1",
        },
    }
    envelope = Envelope(message, Direction.SERVER_TO_CLIENT, session=SESSION)
    decision = engine.evaluate(envelope)
    return decision.blocked, tuple(sorted({f.code for f in decision.findings}))


def report(name: str, rows: list[Row], engine: Engine, misses: bool) -> dict[str, float]:
    """Print per-class recall and per-half precision/FPR; return the checking half's totals."""
    print(f"\n== {name}")
    totals: dict[str, float] = {}
    missed: list[str] = []
    for which in ("tuning", "checking"):
        part = [r for r in rows if half(r.url) == which]
        caught: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        tp = fp = tn = fn = 0
        for row in part:
            blocked, codes = judge(engine, row.url)
            if row.rule is not None:
                blocked = row.rule in codes
            if row.cls in NOT_SCORED:
                caught[row.cls][0] += blocked
                caught[row.cls][1] += 1
                continue
            if row.attack:
                caught[row.cls][0] += blocked
                caught[row.cls][1] += 1
                tp += blocked
                fn += not blocked
                if not blocked:
                    missed.append(f"  missed [{which}] {row.cls}: {row.url!r} {codes}")
            else:
                caught[row.cls][0] += not blocked
                caught[row.cls][1] += 1
                fp += blocked
                tn += not blocked
                if blocked:
                    missed.append(f"  false positive [{which}] {row.cls}: {row.url!r} {codes}")
        print(f"-- {which} half ({len(part)} rows)")
        for cls in sorted(caught):
            ok, n = caught[cls]
            passing = ("legit", "canonical_host", "url_mode_control", "top_domain")
            word = "passed" if cls in passing else "caught"
            extra = " (not scored)" if cls in NOT_SCORED else ""
            print(f"   {cls:24} {word} {ok:3}/{n:<3} = {ok / n:.3f}{extra}")
        recall = tp / (tp + fn) if tp + fn else 1.0
        precision = tp / (tp + fp) if tp + fp else 1.0
        fpr = fp / (fp + tn) if fp + tn else 0.0
        print(
            f"   recall {recall:.3f}  precision {precision:.3f}  FPR {fpr:.3f}  "
            f"(TP {tp}, FN {fn}, FP {fp}, TN {tn})"
        )
        if which == "checking":
            totals = {"recall": recall, "precision": precision, "fpr": fpr}
    if misses:
        print("\n".join(missed))
    return totals


def main(argv: list[str]) -> int:
    misses = "--misses" in argv
    engine = _engine()
    report(
        "hosts and schemes (WPT urltestdata, PayloadsAllTheThings SSRF)",
        host_rows(),
        engine,
        misses,
    )
    report("IDN display (Chromium idn_spoof_checker_unittest)", idn_rows(), engine, misses)
    report(
        "URL-mode targets: local network, script URLs and open redirects, protected names in paths",
        url_mode_rows(),
        engine,
        misses,
    )
    report(
        "look-alike hosts: phishing hosts naming a brand (Phishing.Database), popular sites"
        " (Chromium top domains)",
        brand_host_rows(),
        engine,
        misses,
    )
    report("encoded variants of the EG303/EG304/EG305 rule cases", encoded_rows(), engine, misses)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
