"""Two (then three) real `elicitguard proxy http` processes sharing one Redis and one key file.

The upstream is a minimal Streamable HTTP endpoint on loopback that issues a tricky
``requestState`` and echoes back whatever state a retry brings. The proxies verify bearer
tokens (JWKS file), seal the state, and share single-use markers through a real
redis-server: state sealed by one proxy is accepted by the other, once; tampered,
truncated, expired, replayed and cross-principal state is refused with -32602 and audited;
a key rotation in the middle of a flow keeps it working.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from tests.identity.asgi_server import serve_asgi
from tests.identity.conftest import key_json
from tests.identity.jwt_support import AUDIENCE, ISSUER, Signer, write_jwks
from tests.integration_support import require_module

ELICITGUARD = str(Path(sys.executable).with_name("elicitguard"))
INNER = 'upstream:{"step":2,"user":"alice"} é\u00e9 ✓'
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
SIGNER = Signer("as-1")
TTL_S = 4


class Upstream:
    """A 2026-07-28 tool that asks once, then reports the state its retry carried."""

    def __init__(self) -> None:
        self.retries: list[Any] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        params = request.get("params", {})
        if "requestState" in params:
            self.retries.append(params["requestState"])
            result: dict[str, Any] = {
                "resultType": "complete",
                "content": [{"type": "text", "text": json.dumps(params["requestState"])}],
            }
        else:
            result = {
                "resultType": "input_required",
                "inputRequests": {
                    "q": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "How many guests?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"n": {"type": "integer"}},
                            },
                        },
                    }
                },
                "requestState": INNER,
            }
        payload = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def _read_line(stream: Any, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the proxy did not print its URL")
        ready, _, _ = select.select([stream], [], [], left)
        if ready:
            chunk = os.read(stream.fileno(), 1)
            if not chunk:
                break
            data += chunk
    return data.decode().strip()


@contextmanager
def _proxy(upstream: str, policy: Path, *extra: str) -> Iterator[str]:
    process = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "http",
            "--upstream",
            upstream,
            "--listen",
            "127.0.0.1:0",
            "--policy",
            str(policy),
            "--seal-request-state",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if not k.startswith("ELICITGUARD_")},
    )
    try:
        url = _read_line(process.stdout)
        if not url.startswith("http://"):
            raise AssertionError(process.stderr.read().decode() if process.stderr else url)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _policy(folder: Path, name: str, keys_file: str, redis_url: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        "extends: ['builtin:default']\n"
        f"name: {name}\n"
        "identity:\n"
        "  require_auth: true\n"
        f"  audience: {AUDIENCE}\n"
        f"  issuers: [{ISSUER}]\n"
        "  jwks: ./jwks.json\n"
        f"  store: {redis_url}\n"
        "  replicas: 2\n"
        f"  request_state_ttl_s: {TTL_S}\n"
        f"keys: {{file: ./{keys_file}}}\n"
        f"audit: {{sink: file, file: {folder / (name + '-audit.jsonl')}}}\n"
    )
    return path


def _call(url: str, token: str, rid: int, state: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "book", "arguments": {"table": 4}, "_meta": META}
    if state is not None:
        params["inputResponses"] = {"q": {"action": "accept", "content": {"n": 2}}}
        params["requestState"] = state
    response = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
        },
        timeout=20,
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def _refused(answer: dict[str, Any]) -> None:
    assert answer["error"]["code"] == -32602, answer
    assert answer["error"]["data"]["elicitguard"]["codes"] == ["EG504"]


def _events(folder: Path, *names: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for name in names:
        path = folder / f"{name}-audit.jsonl"
        if path.exists():
            events.extend(json.loads(line) for line in path.read_text().splitlines() if line)
    return [e for e in events if e.get("event") == "elicitguard.request_state"]


def test_two_proxies_share_sealed_state(tmp_path: Path, redis_url: str) -> None:
    """Sealed by A, opened by B once; every bad state refused and audited; rotation works."""
    require_module("uvicorn")
    write_jwks(tmp_path / "jwks.json", SIGNER)
    old_keys = key_json("2026-10")
    (tmp_path / "keys.json").write_text(old_keys)
    rotated = json.loads(key_json("2026-11"))["keys"] + json.loads(old_keys)["keys"]
    (tmp_path / "rotated.json").write_text(json.dumps({"keys": rotated}))
    alice = SIGNER.token(sub="alice")
    bob = SIGNER.token(sub="bob")
    upstream = Upstream()
    with serve_asgi(upstream) as base:
        mcp = base + "/mcp"
        pa = _policy(tmp_path, "proxy-a", "keys.json", redis_url)
        pb = _policy(tmp_path, "proxy-b", "keys.json", redis_url)
        with _proxy(mcp, pa) as a, _proxy(mcp, pb) as b:
            first = _call(a, alice, 1)
            token = first["result"]["requestState"]
            assert token.startswith("egs1.")
            assert "alice" not in token
            assert first["result"]["inputRequests"]["q"]["params"]["message"] == "How many guests?"

            # Sealed by A, accepted by B: the upstream gets exactly what it issued.
            done = _call(b, alice, 2, token)
            assert upstream.retries == [INNER]
            assert json.dumps(INNER) == done["result"]["content"][0]["text"]

            # Replayed, at either proxy: refused, and the upstream never sees it.
            _refused(_call(a, alice, 3, token))
            _refused(_call(b, alice, 4, token))

            # Bob presents Alice's fresh state: refused, and it still works for Alice.
            fresh = _call(a, alice, 5)["result"]["requestState"]
            _refused(_call(b, bob, 6, fresh))

            # Tampered (one character) and truncated: refused.
            flipped = fresh[:-3] + ("A" if fresh[-3] != "A" else "B") + fresh[-2:]
            _refused(_call(b, alice, 7, flipped))
            _refused(_call(b, alice, 8, fresh[:-10]))
            _call(b, alice, 9, fresh)
            assert upstream.retries == [INNER, INNER]

            # Expired: the TTL passes between the question and the retry.
            stale = _call(a, alice, 10)["result"]["requestState"]
            time.sleep(TTL_S + 0.5)
            _refused(_call(b, alice, 11, stale))
            assert len(upstream.retries) == 2

            # Key rotation mid-flow: a proxy with the rotated file (new key signs, old key
            # still verifies) accepts what A sealed with the old key.
            # Proxy C starts first: its start-up may outlast the TTL on a busy machine.
            pc = _policy(tmp_path, "proxy-c", "rotated.json", redis_url)
            with _proxy(mcp, pc) as c:
                pending = _call(a, alice, 12)["result"]["requestState"]
                _call(c, alice, 13, pending)
                assert len(upstream.retries) == 3
                newer = _call(c, alice, 14)["result"]["requestState"]
                _call(c, alice, 15, newer)
                assert len(upstream.retries) == 4
                # A proxy that never got the new key cannot open what the new key sealed.
                newest = _call(c, alice, 16)["result"]["requestState"]
                _refused(_call(a, alice, 17, newest))

    reasons = Counter(e["reason"] for e in _events(tmp_path, "proxy-a", "proxy-b", "proxy-c"))
    assert sum(reasons.values()) == 7
    assert tuple(reasons[r] for r in ("replayed", "wrong_principal", "expired", "unknown_key")) == (
        2,
        1,
        1,
        1,
    )
    assert reasons["tampered"] + reasons["malformed"] == 2  # the flipped and the cut token
    audit_text = "".join(
        (tmp_path / f"{n}-audit.jsonl").read_text()
        for n in ("proxy-a", "proxy-b", "proxy-c")
        if (tmp_path / f"{n}-audit.jsonl").exists()
    )
    assert INNER not in audit_text
    assert token not in audit_text
    assert alice not in audit_text
    decisions = [
        json.loads(line)
        for line in audit_text.splitlines()
        if line and json.loads(line).get("event") == "elicitguard.decision"
    ]
    assert decisions  # the elicitation rounds were judged ...
    assert all(d["principal"]["iss"] == ISSUER for d in decisions)  # ... for a verified user
    assert not any(f["code"] == "EG501" for d in decisions for f in d["findings"])


def test_replicas_refuse_to_start_on_a_random_key(tmp_path: Path, redis_url: str) -> None:
    """Without configured keys the proxy refuses to start with a shared store or replicas."""
    write_jwks(tmp_path / "jwks.json", SIGNER)
    policy = tmp_path / "p.yaml"
    policy.write_text(f"identity: {{store: {redis_url}, replicas: 2}}\n")
    result = subprocess.run(
        [
            ELICITGUARD,
            *("proxy", "http", "--upstream", "http://127.0.0.1:9/mcp"),
            *("--listen", "127.0.0.1:0", "--policy", str(policy), "--seal-request-state"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("ELICITGUARD_")},
        check=False,
    )
    assert result.returncode == 2
    assert "needs configured keys" in result.stderr
    assert "ELICITGUARD_KEYS" in result.stderr
