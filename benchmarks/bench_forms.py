"""Form classification per second (1, 10, 50 fields) and EG204 next to detect-secrets.

Why: every form request runs the multilingual classifier (EG201, EG203, EG205, EG206) and
every answer the secret scan (EG204). Servers repeat their forms, so the classifier caches per
field; but titles and keys differ between servers, so the cold path matters too. Each
classifier pair therefore runs twice: on **unseen** forms (a seeded pool consumed in slices,
every round new keys and titles) and on **repeated** forms (the same batch every round).

Pairs:

* ``forms: classify N fields, unseen|repeated`` – ``classify_form`` (seven languages) versus
  detect-secrets' keyword denylist (``KeywordDetector``) over the same keys, titles and
  descriptions, the nearest thing a user could run today (DETECTION.md section 5);
* ``forms: EG204 answer scan`` – the EG204 check on answers (catalogue, key-name and
  field-class support) versus every detect-secrets 1.5.0 plugin (regex, keyword, Base64 and
  hex high-entropy with their default limits) over one ``key: "value"`` line per content
  value. Both see the same labelled answers; the run prints their agreement and each one's
  precision and recall on those labels.

Needs the ``bench`` extra (``pip install -e .[bench]``: detect-secrets is never a runtime
dependency). Run alone: ``.venv/bin/python benchmarks/bench_forms.py [--quick]``.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Pair, measure_pair, missing_peer, print_table

from elicitguard.checks.forms import classify_form
from elicitguard.engine.builtin.form_rules import secret_in_answer
from elicitguard.engine.context import CheckContext
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.session import SessionState

ALNUM = string.ascii_letters + string.digits

#: (key stem, title) pairs across the seven languages; about a third ask for a secret.
FIELDS: tuple[tuple[str, str], ...] = (
    ("name", "Full name"),
    ("guests", "Number of guests"),
    ("password", "Password"),
    ("api_key", "API key"),
    ("remember_password", "Remember my password"),
    ("max_tokens", "Max tokens"),
    ("key_name", "Name for the new API key"),
    ("card", "Card number"),
    ("city", "City"),
    ("mima", "登录密码"),
    ("yanzhengma", "短信验证码"),
    ("nicheng", "昵称"),
    ("token", "存取權杖"),
    ("dizhi", "地址"),
    ("pw", "パスワード"),
    ("namae", "お名前"),
    ("max", "最大トークン数"),
    ("clave", "Contraseña"),
    ("nombre", "Nombre"),
    ("cp", "Código postal"),
    ("schluessel", "API-Schlüssel"),
    ("strasse", "Straße"),
    ("merken", "Passwort merken"),
    ("mdp", "Mot de passe"),
    ("prenom", "Prénom"),
    ("longueur", "Longueur minimale du mot de passe"),
)


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 8)))


def _form(rng: random.Random, fields: int, unseen: bool) -> dict[str, Any]:
    """A requestedSchema; unseen forms get a fresh key suffix and title word per field."""
    props: dict[str, Any] = {}
    for index in range(fields):
        stem, title = FIELDS[rng.randrange(len(FIELDS))]
        key = f"{stem}_{index}"
        if unseen:
            key = f"{key}_{_word(rng)}"
            title = f"{title} ({_word(rng)})"
        props[key] = {"type": "string", "title": title, "maxLength": 64}
    return {"type": "object", "properties": props}


def _pool(fields: int, count: int, seed: int, unseen: bool) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [_form(rng, fields, unseen) for _ in range(count)]


def _slices(pool: list[Any], size: int) -> Callable[[], list[Any]]:
    """Each call returns the next ``size`` items (wrapping only after the pool is used up)."""
    state = {"start": 0}

    def next_slice() -> list[Any]:
        start = state["start"]
        if start + size > len(pool):
            start = 0
        state["start"] = start + size
        return pool[start : start + size]

    return next_slice


def _keyword_detector() -> Callable[[dict[str, Any]], int]:
    """detect-secrets' keyword denylist over a form's keys, titles and descriptions."""
    from detect_secrets.plugins.keyword import DENYLIST_REGEX

    denylist = re.compile(DENYLIST_REGEX, re.IGNORECASE)

    def run(schema: dict[str, Any]) -> int:
        hits = 0
        for key, prop in schema["properties"].items():
            for text in (key, prop.get("title", ""), prop.get("description", "")):
                if text and denylist.search(text):
                    hits += 1
                    break
        return hits

    return run


def classify_pairs(quick: bool) -> list[Pair]:
    """Classifier throughput for 1, 10 and 50 fields, unseen and repeated."""
    rounds = (15 if quick else 41) + 4
    keyword = _keyword_detector()
    pairs: list[Pair] = []
    for fields, batch in ((1, 200), (10, 40), (50, 8)):
        if quick:
            batch = max(4, batch // 2)
        for unseen in (True, False):
            count = batch * rounds if unseen else batch
            subject_pool = _pool(fields, count, seed=fields * 7 + unseen, unseen=unseen)
            next_subject = _slices(subject_pool, batch)
            next_baseline = _slices(subject_pool, batch)

            def subject(next_subject: Callable[[], list[Any]] = next_subject) -> None:
                for schema in next_subject():
                    classify_form(schema)

            def baseline(next_baseline: Callable[[], list[Any]] = next_baseline) -> None:
                for schema in next_baseline():
                    keyword(schema)

            label = "unseen" if unseen else "repeated"
            pairs.append(
                Pair(
                    f"forms: classify {fields} field{'s' if fields > 1 else ''}, {label}",
                    subject,
                    baseline,
                    batch,
                    baseline_name="detect-secrets keyword denylist",
                )
            )
    return pairs


# --------------------------------------------------------------------------- EG204 workload


def _b64u(obj: dict[str, Any]) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _secret(rng: random.Random) -> str:
    """One credential in a format a user might paste."""
    r = lambda n, a=ALNUM: "".join(rng.choice(a) for _ in range(n))  # noqa: E731
    kind = rng.randrange(7)
    if kind == 0:
        return "ghp_" + r(36)
    if kind == 1:
        return "AKIA" + r(16, string.ascii_uppercase + "234567")
    if kind == 2:
        sig = r(43, ALNUM + "_-")
        return _b64u({"alg": "HS256", "typ": "JWT"}) + "." + _b64u({"sub": r(8)}) + "." + sig
    if kind == 3:
        return f"postgres://app:{r(16)}@db.internal.example:5432/app"
    if kind == 4:
        body = "\n".join(r(64, ALNUM + "+/") for _ in range(4))
        return f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    if kind == 5:
        return "xoxb-" + r(12, string.digits) + "-" + r(12, string.digits) + "-" + r(24)
    return "sk_live_" + r(24)


def _benign_value(rng: random.Random) -> str:
    r = lambda n, a=ALNUM: "".join(rng.choice(a) for _ in range(n))  # noqa: E731
    kind = rng.randrange(8)
    if kind == 0:
        return rng.choice(("Ada Lovelace", "李小龙", "山田太郎", "Lucía Pérez", "Jürgen Weiß"))
    if kind == 1:
        return r(40, "0123456789abcdef")  # a commit SHA
    if kind == 2:
        h = "0123456789abcdef"
        return f"{r(8, h)}-{r(4, h)}-4{r(3, h)}-a{r(3, h)}-{r(12, h)}"
    if kind == 3:
        return f"/var/lib/app/exports/{rng.randint(2020, 2030)}-{rng.randint(1, 12):02d}.csv"
    if kind == 4:
        return "Please rotate the API key for the staging project next week"
    if kind == 5:
        return f"ORD-{rng.randint(2024, 2030)}-{rng.randint(0, 999999):06d}"
    if kind == 6:
        return "production-deploy-key-" + str(rng.randint(2024, 2030))
    return "sha256:" + r(64, "0123456789abcdef")


#: (key, title, secret-bearing?) of the answered fields: free text, keyed, multilingual.
ANSWER_FIELDS: tuple[tuple[str, str], ...] = (
    ("notes", "Notes"),
    ("comment", "Commentaire"),
    ("beizhu", "备注"),
    ("api_key", "API key"),
    ("schluessel", "API-Schlüssel"),
    ("token", "存取權杖"),
    ("name", "Name"),
    ("commit", "Commit"),
)
KEYED = {"api_key", "schluessel", "token"}


def answers(count: int, seed: int = 5) -> list[tuple[dict[str, Any], dict[str, Any], bool]]:
    """(schema, content, carries a secret) triples; about 40 % carry one.

    A field that asks for a key is answered with a key (whatever a user types there is one),
    so benign answers go to the other fields: names, notes, commit ids, paths, order numbers.
    """
    rng = random.Random(seed)
    free = [f for f in ANSWER_FIELDS if f[0] not in KEYED]
    out = []
    for _ in range(count):
        secret = rng.random() < 0.4
        key, title = (
            ANSWER_FIELDS[rng.randrange(len(ANSWER_FIELDS))]
            if secret
            else free[rng.randrange(len(free))]
        )
        schema = {"type": "object", "properties": {key: {"type": "string", "title": title}}}
        if not secret:
            value = _benign_value(rng)
        elif key in KEYED and rng.random() < 0.5:
            value = "".join(rng.choice(ALNUM) for _ in range(40))  # context-only key
        else:
            value = ("here it is: " if key not in KEYED else "") + _secret(rng)
        out.append((schema, {key: value}, secret))
    return out


def _context() -> CheckContext:
    envelope = Envelope({}, Direction.CLIENT_TO_SERVER, side=Side.CAPTURE)
    return CheckContext(envelope, "prod", Side.CAPTURE, {}, SessionState(), "2025-11-25")


PARAMS: dict[str, Any] = {}


def elicitguard_flags(schema: dict[str, Any], content: dict[str, Any]) -> bool:
    """The EG204 check on one answer."""
    item = Item(
        ItemKind.ELICIT_RESULT,
        "/result",
        "2025-11-25",
        {"action": "accept", "content": content},
        schema=schema,
    )
    return any(True for _ in secret_in_answer(item, _context(), PARAMS))


def _detect_secrets() -> Callable[[dict[str, Any]], bool]:
    """Every detect-secrets plugin, default limits, on ``key: "value"`` lines."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import default_settings

    with default_settings():
        plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values()]

    def run(content: dict[str, Any]) -> bool:
        with default_settings():
            for key, value in content.items():
                for line in str(value).splitlines() or [""]:
                    text = f'{key}: "{line}"'
                    for plugin in plugins:
                        if plugin.analyze_line(filename="answer.yaml", line=text, line_number=1):
                            return True
        return False

    return run


def _score(flags: list[bool], labels: list[bool]) -> tuple[float, float]:
    tp = sum(f and y for f, y in zip(flags, labels, strict=True))
    fp = sum(f and not y for f, y in zip(flags, labels, strict=True))
    fn = sum(y and not f for f, y in zip(flags, labels, strict=True))
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0)


def answer_pair(quick: bool) -> Pair:
    """EG204 versus detect-secrets on the same labelled answers; prints agreement."""
    work = answers(200 if quick else 600)
    detect = _detect_secrets()
    ours = [elicitguard_flags(schema, content) for schema, content, _ in work]
    theirs = [detect(content) for _, content, _ in work]
    labels = [label for _, _, label in work]
    agree = sum(a == b for a, b in zip(ours, theirs, strict=True)) / len(work)
    p1, r1 = _score(ours, labels)
    p2, r2 = _score(theirs, labels)
    print(
        f"forms: EG204 vs detect-secrets on {len(work)} labelled answers: agreement {agree:.3f}; "
        f"elicitguard P {p1:.3f} R {r1:.3f}; detect-secrets P {p2:.3f} R {r2:.3f}"
    )

    def subject() -> None:
        for schema, content, _ in work:
            elicitguard_flags(schema, content)

    def baseline() -> None:
        for _, content, _ in work:
            detect(content)

    return Pair(
        "forms: EG204 answer scan",
        subject,
        baseline,
        len(work),
        baseline_name="detect-secrets 1.5.0 plugins",
    )


def pairs(quick: bool) -> list[Pair]:
    """Every pair of this module (benchmarks/run.py collects them)."""
    built: list[Pair] = []
    try:
        built += classify_pairs(quick)
    except ImportError as exc:
        built.append(missing_peer("forms: classify vs detect-secrets keyword denylist", exc))
    try:
        built.append(answer_pair(quick))
    except ImportError as exc:
        built.append(missing_peer("forms: EG204 vs detect-secrets", exc))
    return built


def main(argv: list[str] | None = None) -> int:
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    results = [measure_pair(p, rounds=15 if quick else 41) for p in pairs(quick)]
    print_table(results)
    for result in results:
        per_second = 1_000_000 / result.subject_median_us if result.subject_median_us else 0.0
        print(f"  {result.name}: {per_second:,.0f} per second on one core")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
