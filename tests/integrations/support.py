"""Shared pieces of the integration tests: paths, real peers, the scenario matrix."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
POLICY = HERE / "policy" / "test-policy.yaml"
PY = sys.executable
ELICITGUARD = str(Path(sys.executable).with_name("elicitguard"))
SDK_SERVER = SERVERS / "sdk_server.py"
ERAS = ("legacy", "2026-07-28")


@dataclass
class Seen:
    """What the client's elicitation callback was shown."""

    requests: list[dict[str, Any]] = field(default_factory=list)


def make_callback(seen: Seen) -> Any:
    """An elicitation callback that accepts, filling each form field from its type."""
    from mcp.types import ElicitResult

    async def callback(context: Any, params: Any) -> Any:
        seen.requests.append(params.model_dump(exclude_none=True))
        if getattr(params, "mode", None) == "url":
            return ElicitResult(action="accept")
        properties = params.requested_schema.get("properties", {})
        content = {
            name: 2 if spec.get("type") in ("integer", "number") else "x"
            for name, spec in properties.items()
        }
        return ElicitResult(action="accept", content=content)

    return callback


async def call(client: Any, seen: Seen, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool; return what happened (text or the JSON-RPC error) and what the user saw."""
    from mcp.shared.exceptions import MCPError

    seen.requests.clear()
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as exc:
        return {
            "error": exc.error.code,
            "data": exc.error.data,
            "shown": len(seen.requests),
        }
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return {"text": text, "is_error": result.is_error, "shown": len(seen.requests)}


async def run_matrix(client: Any, seen: Seen, era: str) -> dict[str, dict[str, Any]]:
    """The {form, url} x {benign, violating} calls, plus two entries in one modern round."""
    outcomes = {
        "form_ok": await call(client, seen, "book_table", {"restaurant": "Luigi"}),
        "form_blocked": await call(client, seen, "unlock", {}),
        "url_ok": await call(client, seen, "connect_account", {"host": "auth.example.com"}),
        "url_blocked": await call(client, seen, "connect_account", {"host": "a.evil.example"}),
    }
    if era != "legacy":
        outcomes["two"] = await call(
            client, seen, "connect_two", {"good": "auth.example.com", "bad": "b.evil.example"}
        )
    return outcomes


def assert_matrix(outcomes: dict[str, dict[str, Any]], era: str) -> None:
    """Benign elicitation passes; violating elicitation never reaches the user."""
    assert outcomes["form_ok"] == {"text": "Booked Luigi for 2", "is_error": False, "shown": 1}
    assert outcomes["url_ok"] == {"text": "connect: accept", "is_error": False, "shown": 1}
    for name, code in (("form_blocked", "TST002"), ("url_blocked", "TST001")):
        outcome = outcomes[name]
        assert outcome["shown"] == 0, name
        assert outcome["error"] == -31001, name
        assert code in outcome["data"]["elicitguard"]["codes"], name
        assert len(outcome["data"]["elicitguard"]["decision_id"]) == 24, name
    if era != "legacy":
        assert outcomes["two"] == {
            "text": "answers: bad=decline, good=accept",
            "is_error": False,
            "shown": 1,
        }


def read_line(stream: Any, timeout: float = 20.0) -> bytes:
    """One line from a subprocess pipe, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    buffer = b""
    fd = stream.fileno()
    while not buffer.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no line from the subprocess in time")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1)
        if not chunk:
            break
        buffer += chunk
    return buffer


@contextlib.contextmanager
def sdk_http_server() -> Iterator[str]:
    """The SDK server on Streamable HTTP at 127.0.0.1; yields its MCP endpoint URL."""
    process = subprocess.Popen(
        [PY, str(SDK_SERVER), "http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        line = read_line(process.stdout).decode()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        stop(process)


@contextlib.contextmanager
def http_proxy(upstream: str, *extra: str, policy: Path | str = POLICY) -> Iterator[str]:
    """``elicitguard proxy http`` in front of ``upstream``; yields the proxy's MCP URL."""
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
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = read_line(process.stdout).decode().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate and reap a subprocess."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@contextlib.contextmanager
def sdk_asgi_server(policy: Path = POLICY) -> Iterator[str]:
    """The SDK server's app inside elicitguard's ASGI middleware; yields its MCP URL."""
    process = subprocess.Popen(
        [PY, str(SDK_SERVER), "asgi", str(policy)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        line = read_line(process.stdout).decode()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        stop(process)
