"""URL checks per second on unseen URLs, next to parsing the same URLs with ``urllib.parse``.

Why: URL analysis (EG301-EG306) runs on every URL-mode request, and servers put a fresh
``state``, ``elicitationId`` or ``eg_bind`` into every URL, so the per-value caches rarely
hit in production. Each round therefore gets URLs that no earlier round has seen (a seeded
pool, consumed in slices). The workload is mostly benign (OAuth authorisation requests,
connect pages with a handle, marketing and pagination parameters) with a share of signed
URLs, URLs carrying credentials and URLs carrying personal data, as a gateway would see.

Pairs:

* ``url checks`` – ``parse_url`` plus every EG3xx check (scheme, validity, credentials,
  PII, pre-authentication, binding) versus ``urlsplit`` + ``parse_qsl`` of the same URLs;
* ``evaluate: URL request, unseen URLs`` – a whole URL-mode message through the engine
  (default policy) versus ``orjson.loads`` of the same frame; issue 9's target is 20x.

Run alone: ``.venv/bin/python benchmarks/bench_urls.py [--quick]``.
"""

from __future__ import annotations

import io
import random
import string
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Pair, measure_pair, print_table

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.checks.url_safety import (
    binding_handle,
    credentials_in_url,
    insecure_scheme,
    invalid_url,
    pii_in_url,
    preauthenticated_url,
)
from elicitguard.checks.urls import parse_url

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
HOSTS = (
    "auth.example.com",
    "accounts.acme.io",
    "login.shop.example.net",
    "app.contoso.com",
    "id.example.org",
    "github.com",
    "console.cloud.example.dev",
)
WORDS = ("connect", "oauth", "authorize", "consent", "billing", "settings", "setup", "start")
DEV_HOSTS = ("localhost", "127.0.0.0/8", "::1")


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _uuid(rng: random.Random) -> str:
    h = _r(rng, 32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _benign(rng: random.Random) -> str:
    host = rng.choice(HOSTS)
    kind = rng.random()
    if kind < 0.35:
        return (
            f"https://{host}/oauth2/authorize?response_type=code&client_id={_r(rng, 20)}"
            f"&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback&scope=openid%20email%20profile"
            f"&state={_r(rng, 32, URLSAFE)}&code_challenge={_r(rng, 43, URLSAFE)}"
            "&code_challenge_method=S256"
        )
    if kind < 0.65:
        return f"https://{host}/{rng.choice(WORDS)}?eg_bind={_r(rng, 43, URLSAFE)}&service=github"
    if kind < 0.8:
        return f"https://{host}/elicit/{_uuid(rng)}?lang=en&theme=dark"
    if kind < 0.9:
        return (
            f"https://{host}/{rng.choice(WORDS)}/{rng.choice(WORDS)}?utm_source=mcp&utm_medium=client"
            f"&utm_campaign=spring_{rng.randint(2020, 2030)}&page={rng.randint(1, 99)}"
        )
    return f"https://{host}/billing/upgrade?plan=pro&seats={rng.randint(1, 500)}&flow_id={_uuid(rng)}"


def _risky(rng: random.Random) -> str:
    host = rng.choice(HOSTS)
    kind = rng.random()
    if kind < 0.25:
        return (
            f"https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            f"&X-Amz-Credential=AKIA{_r(rng, 16, string.ascii_uppercase)}%2F20250101%2Fus-east-1%2Fs3%2Faws4_request"
            f"&X-Amz-Date=20250101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
            f"&X-Amz-Signature={_r(rng, 64, HEX)}"
        )
    if kind < 0.5:
        return f"https://{host}/connect?api_key={_r(rng, 32)}&state={_r(rng, 24, URLSAFE)}"
    if kind < 0.7:
        return f"https://{host}/welcome?email=user{rng.randint(1, 9999)}%40gmail.com&step=2"
    if kind < 0.85:
        return f"https://{host}/login?token={_r(rng, 40, URLSAFE)}"
    return f"http://{host}/connect?session={_r(rng, 26)}"


def url_pool(count: int, seed: int = 11) -> list[str]:
    """``count`` distinct URLs, about 80% benign and 20% risky, reproducible from ``seed``."""
    rng = random.Random(seed)
    return [(_risky(rng) if rng.random() < 0.2 else _benign(rng)) for _ in range(count)]


def check_all(url: str) -> int:
    """Every EG3xx check on one URL, as the rules run them; returns the number of issues."""
    parsed = parse_url(url)
    issues = insecure_scheme(parsed, environment="prod", dev_hosts=DEV_HOSTS)
    issues += invalid_url(url)
    issues += credentials_in_url(parsed)
    issues += pii_in_url(parsed)
    issues += preauthenticated_url(parsed)
    return len(issues) + (not binding_handle(parsed))


def parse_only(url: str) -> int:
    """The baseline: what parsing the URL with the standard library costs."""
    parts = urlsplit(url)
    return len(parse_qsl(parts.query, keep_blank_values=True)) + len(parts.path.split("/"))


def _slices(pool: list[str], size: int) -> Callable[[], Iterator[list[str]]]:
    """A function returning the next unseen slice each call (wrapping only when exhausted)."""
    state = {"at": 0}

    def next_slice() -> Iterator[list[str]]:
        start = state["at"]
        if start + size > len(pool):
            start = 0
        state["at"] = start + size
        yield pool[start : start + size]

    return next_slice


def _message(url: str, request_id: int) -> bytes:
    params = {"mode": "url", "message": "Connect your account", "url": url, "elicitationId": f"e-{request_id}"}
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params})


def _sizes(quick: bool) -> tuple[int, int]:
    """URLs per round, and rounds plus warm-up (every round gets unseen URLs)."""
    return (200 if quick else 500), (15 if quick else 41) + 4


def url_checks_pair(quick: bool) -> Pair:
    """Every EG3xx check on unseen URLs versus ``urlsplit`` + ``parse_qsl`` of other unseen URLs."""
    batch, rounds = _sizes(quick)
    subject_pool = url_pool(batch * rounds, seed=11)
    baseline_pool = url_pool(batch * rounds, seed=12)
    next_subject = _slices(subject_pool, batch)
    next_baseline = _slices(baseline_pool, batch)

    def subject() -> None:
        for urls in next_subject():
            for url in urls:
                check_all(url)

    def baseline() -> None:
        for urls in next_baseline():
            for url in urls:
                parse_only(url)

    return Pair(
        "url checks: EG3xx on unseen URLs",
        subject,
        baseline,
        batch,
        None,
        "",
        "urlsplit+parse_qsl",
    )


def message_pair(quick: bool) -> Pair:
    """A URL-mode request with an unseen URL through the engine versus ``orjson.loads``."""
    batch, rounds = _sizes(quick)
    frames = [_message(url, i) for i, url in enumerate(url_pool(batch * rounds, seed=13))]
    engine = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}, "url": {}}}},
    }
    engine.evaluate(Envelope(init, Direction.CLIENT_TO_SERVER, side=Side.PROXY, session="b"))
    next_frames = _slices(frames, batch)
    next_loads = _slices(frames, batch)

    def evaluate() -> None:
        for chunk in next_frames():
            for frame in chunk:
                engine.evaluate(Envelope(orjson.loads(frame), Direction.SERVER_TO_CLIENT, side=Side.PROXY, session="b"))

    def loads() -> None:
        for chunk in next_loads():
            for frame in chunk:
                orjson.loads(frame)

    return Pair(
        "evaluate: URL request, unseen URLs",
        evaluate,
        loads,
        batch,
        50.0,
        "<= 50x orjson.loads",
        "orjson.loads",
    )


def pairs(quick: bool) -> list[Pair]:
    """URL checks vs ``urllib.parse``, and whole URL messages vs ``orjson.loads``; unseen URLs."""
    return [url_checks_pair(quick), message_pair(quick)]


def main(argv: list[str] | None = None) -> int:
    """Print the table and URL checks per second."""
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    results = [measure_pair(p, rounds=15 if quick else 41) for p in pairs(quick)]
    print_table(results)
    for result in results:
        subject = 1_000_000 / result.subject_median_us if result.subject_median_us else 0
        base = 1_000_000 / result.baseline_median_us if result.baseline_median_us else 0
        print(f"  {result.name}: {subject:,.0f}/s (baseline {result.baseline_name}: {base:,.0f}/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
