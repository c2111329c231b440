"""Every HTTP door, on real processes: what a compliant or lenient client could read is judged.

The upstream is ``disguise_http_server.py`` (a raw asyncio HTTP server that sends the same
elicitation in many disguises: labels, content codings, SSE framings); in front of it runs
the real ``elicitguard proxy http`` under ``builtin:default`` (and once with
``limits.unlabelled_jsonrpc: judge``); ``disguise_asgi_app.py`` serves the same answers as an
ASGI app inside the middleware under uvicorn. Clients are httpx (to see the bytes) and the
real ``mcp`` SDK client (for the harmless controls, which must pass unchanged).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration_support import require_module
from tests.integrations.support import http_proxy, read_line, stop

from elicitguard.protocol.sse import parse_events

HERE = Path(__file__).parent
SERVER = HERE / "disguise_http_server.py"
ASGI_APP = HERE / "disguise_asgi_app.py"

pytestmark = pytest.mark.integration

#: Attacks that reach a client's reader in each disguise; the harmless controls that pass.
SSE_FRAMINGS = [
    "bom-sse",
    "cr-sse",
    "crlf-split-sse",
    "comment-sse",
    "event-type-sse",
    "unterminated-sse",
    "gzip-sse",
    "br-sse",
    "zstd-sse",
]
ENCODED_JSON = [
    "gzip-json",
    "deflate-json",
    "rawdeflate-json",
    "br-json",
    "zstd-json",
    "stacked-json",
]
UNLABELLED = [
    "text-plain",
    "octet-stream",
    "no-type",
    "text-plain-sse",
    "gzip-text-plain",
    "two-types",
]
BROKEN = {"unknown-coding": "compress", "corrupt-gzip": "gzip", "bomb-gzip": "gzip"}
PASSING = ["plain-json", *ENCODED_JSON, *SSE_FRAMINGS]


@pytest.fixture(autouse=True)
def _needs_http() -> None:
    for module in ("httpx", "uvicorn", "brotli", "backports.zstd"):
        require_module(module)


@contextlib.contextmanager
def spawn(*args: str) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        line = read_line(process.stdout, 30).decode()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        stop(process)


def policy(tmp: Path, name: str, extra: str = "") -> Path:
    path = tmp / f"{name}.yaml"
    audit = json.dumps({"sink": "file", "file": str(tmp / f"{name}.audit.jsonl")})
    path.write_text(
        f"name: {name}\nextends: [builtin:default]\naudit: {audit}\n{extra}", encoding="utf-8"
    )
    return path


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with spawn(str(SERVER)) as url:
        yield url


@pytest.fixture(scope="module")
def tmp_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("disguises")


@pytest.fixture(scope="module")
def proxy(upstream: str, tmp_module: Path) -> Iterator[str]:
    """``elicitguard proxy http`` under builtin:default."""
    with http_proxy(upstream, policy=policy(tmp_module, "default")) as url:
        yield url


@pytest.fixture(scope="module")
def judging_proxy(upstream: str, tmp_module: Path) -> Iterator[str]:
    """The same, with ``limits.unlabelled_jsonrpc: judge``."""
    extra = "limits: {unlabelled_jsonrpc: judge}\n"
    with http_proxy(upstream, policy=policy(tmp_module, "judge", extra)) as url:
        yield url


@pytest.fixture(scope="module")
def asgi(tmp_module: Path) -> Iterator[str]:
    """The disguising app inside the ASGI middleware (builtin:default), under uvicorn."""
    with spawn(str(ASGI_APP), str(policy(tmp_module, "asgi"))) as url:
        yield url


HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def call(url: str, name: str, *, attack: bool, ident: int = 7, **headers: str) -> Any:
    import httpx

    body = {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": name, "arguments": {"attack": attack}},
    }
    merged = {**HEADERS, "mcp-session-id": "disguise-session-1", **headers}
    return httpx.post(url, content=json.dumps(body).encode(), headers=merged, timeout=30)


def messages(response: Any) -> list[dict[str, Any]]:
    """What a lenient client reads in the response: every event's data, or the JSON body."""
    assert "content-encoding" not in response.headers  # passed on decoded
    body = response.content
    if not body.strip():
        return []
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        with contextlib.suppress(ValueError):
            return [json.loads(body)]
    return [json.loads(e.data) for e in parse_events(body) if e.data and e.data.strip()]


def answer(response: Any, ident: int = 7) -> dict[str, Any]:
    found = [m for m in messages(response) if m.get("id") == ident and "method" not in m]
    assert len(found) == 1, response.content
    return found[0]


def assert_blocked(response: Any) -> None:
    """No elicitation reached the client, in any reading of the bytes."""
    assert b"elicitation/create" not in response.content
    assert b"password" not in response.content.lower()


def refusal(response: Any) -> dict[str, Any]:
    error = answer(response)["error"]
    assert error["code"] == -32603
    detail: dict[str, Any] = error["data"]["elicitguard"]
    assert detail["codes"], error
    return {"message": error["message"], **detail}


@pytest.mark.parametrize("name", PASSING)
def test_each_disguised_attack_is_blocked_and_each_control_passes(proxy: str, name: str) -> None:
    """builtin:default: the elicitation is blocked in every framing and coding; the same
    answer without it passes with the tool's result intact."""
    attacked = call(proxy, name, attack=True)
    assert_blocked(attacked)
    harmless = call(proxy, name, attack=False)
    assert harmless.status_code == 200
    assert answer(harmless)["result"]["content"][0]["text"] == f"ok {name}"


@pytest.mark.parametrize("name", UNLABELLED)
def test_unlabelled_jsonrpc_is_refused_by_default(proxy: str, name: str) -> None:
    """A JSON-RPC body labelled text/plain, octet-stream or nothing: refused, saying why."""
    for attack in (True, False):
        response = call(proxy, name, attack=attack)
        assert_blocked(response)
        assert response.headers["content-type"] == "application/json"
        detail = refusal(response)
        assert detail["reason"] == "unlabelled_jsonrpc"
        assert "labelled" in detail["message"]


def test_json_under_an_sse_label_is_refused(proxy: str, asgi: str) -> None:
    """A plain JSON body labelled text/event-stream (no ``data:`` field): a client that falls
    back to reading it as JSON would act on it, so it is refused in the stream."""
    for url in (proxy, asgi):
        for attack in (True, False):
            response = call(url, "sse-label-json", attack=attack)
            assert_blocked(response)
            assert refusal(response)["reason"] == "unlabelled_jsonrpc"


@pytest.mark.parametrize("name", UNLABELLED)
def test_unlabelled_jsonrpc_is_judged_when_the_policy_says_judge(
    judging_proxy: str, name: str
) -> None:
    """``limits.unlabelled_jsonrpc: judge``: the attack is blocked, the control passes."""
    assert_blocked(call(judging_proxy, name, attack=True))
    harmless = call(judging_proxy, name, attack=False)
    assert answer(harmless)["result"]["content"][0]["text"] == f"ok {name}"


@pytest.mark.parametrize(("name", "coding"), BROKEN.items())
def test_undecodable_bodies_are_refused_naming_the_encoding(
    proxy: str, name: str, coding: str
) -> None:
    """An unknown coding, a corrupt body and a decompression bomb are refused; the error
    names the coding."""
    for attack in (True, False):
        response = call(proxy, name, attack=attack)
        assert_blocked(response)
        detail = refusal(response)
        assert detail["encoding"] == coding
        assert f"{coding}-encoded" in detail["message"]


def test_the_upstream_is_asked_for_identity_and_a_gzip_post_is_decoded(proxy: str) -> None:
    """``Accept-Encoding: identity`` upstream whatever the client accepts; a gzip-encoded
    client POST is decoded, judged and sent on decoded (not answered 400)."""
    import httpx

    body = json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo"}}
    ).encode()
    response = httpx.post(
        proxy,
        content=gzip.compress(body),
        headers={**HEADERS, "content-encoding": "gzip", "accept-encoding": "gzip, br, zstd"},
        timeout=30,
    )
    assert response.status_code == 200, response.content
    seen = json.loads(answer(response, 3)["result"]["content"][0]["text"])
    headers = dict(seen["headers"])
    assert headers["accept-encoding"] == "identity"
    assert "content-encoding" not in headers
    assert seen["body"] == body.decode()


def test_an_undecodable_client_post_is_refused_naming_the_encoding(proxy: str) -> None:
    """A corrupt gzip POST and an unknown coding get 415, a gzip bomb 413, each with an
    error naming the coding."""
    import httpx

    secret = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo"}}
    bad = gzip.compress(json.dumps(secret).encode())[:-4] + b"\x00\x00\x00\x00"
    response = httpx.post(
        proxy, content=bad, headers={**HEADERS, "content-encoding": "gzip"}, timeout=30
    )
    assert response.status_code == 415
    assert "gzip" in response.json()["error"]["message"]
    bomb = httpx.post(
        proxy,
        content=gzip.compress(b" " * (8 << 20)),
        headers={**HEADERS, "content-encoding": "gzip"},
        timeout=30,
    )
    assert bomb.status_code == 413
    assert bomb.json()["error"]["data"]["elicitguard"]["encoding"] == "gzip"
    unknown = httpx.post(
        proxy, content=b"xx", headers={**HEADERS, "content-encoding": "compress"}, timeout=30
    )
    assert unknown.status_code == 415
    assert unknown.json()["error"]["data"]["elicitguard"]["encoding"] == "compress"


def test_a_text_plain_client_post_is_refused_by_default(proxy: str, judging_proxy: str) -> None:
    """Requests too: a JSON-RPC POST labelled text/plain is refused, or judged under judge."""
    for url, status in ((proxy, 415), (judging_proxy, 200)):
        response = call(url, "plain-json", attack=False, **{"content-type": "text/plain"})
        assert response.status_code == status, response.content
    refused = call(proxy, "plain-json", attack=False, **{"content-type": "text/plain"})
    assert refused.json()["error"]["data"]["elicitguard"]["reason"] == "unlabelled_jsonrpc"
    import httpx

    body = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"plain-json"}}'
    two = httpx.post(
        proxy,
        content=body,
        headers=[
            ("content-type", "application/json"),
            ("content-type", "text/plain"),
            ("accept", HEADERS["accept"]),
        ],
        timeout=30,
    )
    assert two.status_code == 415  # two labels that disagree: neither is trusted


def test_harmless_controls_pass_to_a_real_sdk_client(proxy: str) -> None:
    """The real ``mcp`` SDK client through the proxy: every harmless control's result arrives
    unchanged; attacks never reach its elicitation callback."""
    require_module("mcp")
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    shown: list[Any] = []

    async def callback(context: Any, params: Any) -> Any:
        shown.append(params)
        raise AssertionError("an elicitation reached the client")

    controls = [n for n in PASSING if n != "event-type-sse"]  # the SDK reads message events

    async def main() -> tuple[dict[str, str], dict[str, str]]:
        texts: dict[str, str] = {}
        attacks: dict[str, str] = {}
        async with Client(proxy, mode="legacy", elicitation_callback=callback) as client:
            for name in controls:
                result = await client.call_tool(name, {"attack": False})
                texts[name] = " ".join(getattr(c, "text", "") for c in result.content)
            for name in ("plain-json", "gzip-json", "bom-sse", "gzip-sse", "unterminated-sse"):
                try:
                    await asyncio.wait_for(client.call_tool(name, {"attack": True}), 20)
                    attacks[name] = "result"
                except MCPError as exc:
                    attacks[name] = f"error {exc.error.code}"
        return texts, attacks

    texts, attacks = asyncio.run(main())
    assert texts == {name: f"ok {name}" for name in controls}
    assert not shown
    assert attacks["plain-json"].startswith("error")
    assert attacks["gzip-json"].startswith("error")


@pytest.mark.parametrize("name", ["plain-json", "gzip-json", "br-json", "zstd-json", *SSE_FRAMINGS])
def test_the_asgi_middleware_under_uvicorn(asgi: str, name: str) -> None:
    """The same doors in the middleware around a real app: attacks blocked, controls pass."""
    assert_blocked(call(asgi, name, attack=True))
    harmless = call(asgi, name, attack=False)
    assert answer(harmless)["result"]["content"][0]["text"] == f"ok {name}"


def test_the_asgi_middleware_refuses_unlabelled_and_broken_bodies(asgi: str) -> None:
    """Unlabelled JSON-RPC and undecodable bodies are refused there too."""
    assert refusal(call(asgi, "text-plain", attack=True))["reason"] == "unlabelled_jsonrpc"
    assert refusal(call(asgi, "no-type", attack=False))["reason"] == "unlabelled_jsonrpc"
    assert refusal(call(asgi, "corrupt-gzip", attack=False))["encoding"] == "gzip"
    assert refusal(call(asgi, "unknown-coding", attack=False))["encoding"] == "compress"


def test_gzip_post_through_the_proxy_to_a_real_sdk_server() -> None:
    """A real ``mcp`` SDK server behind the proxy gets a gzip client POST decoded."""
    require_module("mcp")
    import httpx
    from tests.integrations.support import sdk_http_server

    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    with sdk_http_server() as upstream, http_proxy(upstream, policy="builtin:default") as url:
        response = httpx.post(
            url,
            content=gzip.compress(json.dumps(init).encode()),
            headers={**HEADERS, "content-encoding": "gzip", "accept-encoding": "gzip"},
            timeout=30,
        )
    assert response.status_code == 200, response.content
    assert "content-encoding" not in response.headers
    assert answer(response, 1)["result"]["serverInfo"]
