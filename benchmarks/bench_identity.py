"""What identity costs per request: sealing and opening requestState, tokens, the vault.

Why: with ``--seal-request-state`` every ``InputRequiredResult`` is sealed and every retry
opened (AES-GCM plus a single-use marker in the store); with identity configured every HTTP
request verifies a bearer token; with a non-empty credential vault every server message is
searched. Each is measured next to the parse of the same frame (``orjson.loads``), which a
proxy pays anyway, so the ratio says how much heavier a request gets.

Pairs:

* ``seal requestState`` - :meth:`RequestStateGuard.server_message` on an input-required
  result (1 KiB of upstream state) versus ``orjson.loads`` of that frame;
* ``open requestState (memory store)`` - :meth:`RequestStateGuard.client_message` on the
  retry, single use through the memory store, versus ``orjson.loads`` of the retry;
* ``open requestState (redis store)`` - the same through a real redis-server on loopback,
  when one is installed (the round trip to Redis dominates);
* ``verify RS256 bearer token`` - :meth:`TokenVerifier.verify` with a cached JWKS, versus
  ``orjson.loads`` of a tools/call frame;
* ``server result, 200 vault tokens`` - ``Engine.evaluate`` of an ordinary tool result with
  EG603's vault search, versus the same with an empty vault (the fast path).

Run alone: ``.venv/bin/python benchmarks/bench_identity.py [--quick]``.
"""

from __future__ import annotations

import atexit
import base64
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Pair, measure_pair, print_table

from elicitguard import Direction, Engine, Envelope, Side, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing, load_keyring
from elicitguard.identity.principal import Principal
from elicitguard.identity.sealing import RequestStateGuard, RequestStateSealer
from elicitguard.identity.stores import MemoryStore, RedisStore, SecureStore
from elicitguard.identity.vault import CredentialVault

ALICE = Principal("https://auth.example.com", "alice")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
INNER = base64.b64encode(os.urandom(768)).decode()  # ~1 KiB of upstream state


def _keys() -> KeyRing:
    secret = base64.b64encode(os.urandom(32)).decode()
    return load_keyring(
        environ={"ELICITGUARD_KEYS": json.dumps({"keys": [{"id": "k1", "secret": secret}]})}
    )


def _request(rid: int, state: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "book", "arguments": {"table": 4, "guests": 2}, "_meta": META}
    if state is not None:
        params["inputResponses"] = {"q": {"action": "accept", "content": {"n": 2}}}
        params["requestState"] = state
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _result(rid: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "result": {
            "resultType": "input_required",
            "inputRequests": {
                "q": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Guests?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"n": {"type": "integer"}},
                        },
                    },
                }
            },
            "requestState": INNER,
        },
    }


def _sealing_pairs(n: int, store: SecureStore, keys: KeyRing, label: str) -> list[Pair]:
    """Seal n results per round; open n retries per round. Each sealed state opens once, so
    every run of the opening subject gets a fresh batch, sealed untimed beforehand
    (``Pair.prepare``): however many rounds and warm-ups the harness does."""
    guard = RequestStateGuard(RequestStateSealer(keys, store, ttl_s=3600))
    result_frames = [orjson.dumps(_result(i)) for i in range(n)]
    ids = iter(range(10**9))

    def sealed_batch() -> list[bytes]:
        batch: list[bytes] = []
        for _ in range(n):
            rid = next(ids)
            guard.client_message(_request(rid), principal=ALICE)
            out = guard.server_message(_result(rid))
            assert out.message is not None
            batch.append(orjson.dumps(_request(rid + 1, out.message["result"]["requestState"])))
        return batch

    retry_frames = sealed_batch()  # the baseline parses these; they are never opened
    prepared: list[list[bytes]] = []

    def seal() -> None:
        for frame in result_frames:
            rid = next(ids)
            guard.client_message(_request(rid), principal=ALICE)
            message = orjson.loads(frame)
            message["id"] = rid
            guard.server_message(message)

    def parse_results() -> None:
        for frame in result_frames:
            orjson.loads(frame)

    def open_retries() -> None:
        for frame in prepared.pop():
            outcome = guard.client_message(orjson.loads(frame), principal=ALICE)
            if outcome.reply is not None:
                raise RuntimeError(f"state refused: {outcome.reason}")

    def parse_retries() -> None:
        for frame in retry_frames:
            orjson.loads(frame)

    pairs = []
    if label == "memory":
        pairs.append(Pair("seal requestState", seal, parse_results, n, None, "", "orjson.loads"))
    pairs.append(
        Pair(
            f"open requestState ({label} store)",
            open_retries,
            parse_retries,
            n,
            None,
            "",
            "orjson.loads",
            prepare=lambda: prepared.append(sealed_batch()),
        )
    )
    return pairs


def _redis(n: int, keys: KeyRing) -> tuple[list[Pair], Callable[[], None]]:
    binary = shutil.which("redis-server")
    if binary is None:
        return [], lambda: None
    try:
        import redis
    except ImportError:
        return [], lambda: None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    folder = tempfile.mkdtemp()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", folder],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    client.close()
    store = RedisStore(f"redis://127.0.0.1:{port}/0", keys)

    def stop() -> None:
        if process.poll() is not None:  # already stopped (main() and atexit both call this)
            return
        store.close()
        process.terminate()
        process.wait(timeout=10)

    return _sealing_pairs(n, store, keys, "redis"), stop


def _token_pair(n: int) -> Pair:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    from elicitguard.identity.tokens import TokenConfig, TokenVerifier

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid="k1", alg="RS256", use="sig")
    folder = Path(tempfile.mkdtemp())
    (folder / "jwks.json").write_text(json.dumps({"keys": [jwk]}))
    verifier = TokenVerifier(
        TokenConfig(
            "https://mcp.example.com/mcp",
            ("https://auth.example.com",),
            jwks_file=str(folder / "jwks.json"),
        )
    )
    now = int(time.time())
    token = jwt.encode(
        {
            "iss": "https://auth.example.com",
            "sub": "alice",
            "aud": "https://mcp.example.com/mcp",
            "exp": now + 3600,
        },
        key,
        algorithm="RS256",
        headers={"kid": "k1"},
    )
    frame = orjson.dumps(_request(1))

    def subject() -> None:
        for _ in range(n):
            verifier.verify(token)

    def baseline() -> None:
        for _ in range(n):
            orjson.loads(frame)

    return Pair("verify RS256 bearer token", subject, baseline, n, None, "", "orjson.loads")


def _vault_pair(n: int) -> Pair:
    full = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    empty = Engine(load_policy(environ={}), audit=AuditSink(io.StringIO()), keys=KeyRing.random())
    vault = CredentialVault()
    for _ in range(200):
        vault.register("gho_" + base64.b32encode(os.urandom(20)).decode().rstrip("="))
    full.services["vault"] = vault
    text = "Found 12 repositories: " + ", ".join(f"repo-{i}" for i in range(40))
    message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}
    frame = orjson.dumps(message)

    def run(engine: Engine) -> Callable[[], None]:
        def go() -> None:
            for _ in range(n):
                engine.evaluate(
                    Envelope(orjson.loads(frame), Direction.SERVER_TO_CLIENT, side=Side.SERVER)
                )

        return go

    return Pair(
        "server result, 200 vault tokens", run(full), run(empty), n, None, "", "empty vault"
    )


_CLEANUP: list[Callable[[], None]] = []
ROUNDS_QUICK = 9
ROUNDS = 31


def pairs(quick: bool) -> list[Pair]:
    """Sealing, opening, token verification and the vault, each next to its baseline."""
    n = 200 if quick else 1_000
    keys = _keys()
    result = _sealing_pairs(n, MemoryStore(keys), keys, "memory")
    redis_pairs, stop = _redis(n // 4, keys)
    _CLEANUP.append(stop)
    atexit.register(stop)  # run.py never calls main(): stop redis-server when the run ends
    result.extend(redis_pairs)
    result.append(_token_pair(n // 2))
    result.append(_vault_pair(n))
    return result


def main(argv: list[str] | None = None) -> int:
    """Print the table and the per-request cost of each identity feature."""
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    try:
        results = [measure_pair(p, rounds=ROUNDS_QUICK if quick else ROUNDS) for p in pairs(quick)]
    finally:
        for stop in _CLEANUP:
            stop()
    print_table(results)
    for result in results:
        print(
            f"  {result.name}: {result.subject_median_us:.1f} µs per request "
            f"({result.ratio:.1f}x {result.baseline_name})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
