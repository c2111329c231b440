"""``ServerGuard`` inside a real ``mcp`` 2.3.0 server, driven by a real, unguarded client.

The server (``servers/elicit_server.py``) runs on stdio with either the stream wrapper
(``--guard streams``: every frame of both eras) or the ``MCPServer`` middleware (``--guard
middleware``: 2026-07-28 results and retries, and ``-32042`` errors). A block reaches the
client as the policy's JSON-RPC error (-31001 with ``data.elicitguard``); the user never sees
the blocked request.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anyio
import pytest
from tests.integration_support import require_module
from tests.integrations.sdk_peers import (
    ELICIT_SERVER,
    ERAS,
    FASTMCP_SERVER,
    GUARD_POLICY,
    Host,
    blocked_by,
    outcome,
    server_params,
)

require_module("mcp")

from mcp import Client  # noqa: E402


def run_calls(
    script: Any, args: list[str], era: str, host: Host, calls: list[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Start the server with ``args``, connect an unguarded client, make the calls."""

    async def main() -> list[dict[str, Any]]:
        async with Client(server_params(script, *args), mode=era, elicitation_callback=host) as c:
            return [await outcome(c, tool, **arguments) for tool, arguments in calls]

    return anyio.run(main)


MATRIX = [
    ("form_tool", {"variant": "benign"}),
    ("form_tool", {"variant": "violating"}),
    ("url_tool", {"variant": "benign"}),
    ("url_tool", {"variant": "violating"}),
]


def assert_matrix(results: list[dict[str, Any]], host: Host) -> None:
    """Benign form and URL requests pass; violating ones are the client's -31001 error."""
    form_ok, form_bad, url_ok, url_bad = results[:4]
    assert form_ok == {"text": 'form:accept:{"name": "x"}', "is_error": False}
    assert url_ok == {"text": "url:accept:null", "is_error": False}
    assert blocked_by(form_bad, "TST002"), form_bad
    assert blocked_by(url_bad, "TST001"), url_bad
    assert [p.get("url", "form") for p in host.shown[:2]] == [
        "form",
        "https://auth.example.com/connect?service=github",
    ]


TWO = {"name": {"action": "accept", "content": {"name": "x"}}, "secret": {"action": "decline"}}


@pytest.mark.parametrize("era", ERAS)
def test_streams_guard_both_eras(era: str) -> None:
    """The ``Server.run`` stream wrapper: a blocked pushed request never leaves the server
    (its own request fails with -31001 and the tool's error reaches the client); in
    2026-07-28 a blocked entry is removed, and answered with ``decline`` on the retry."""
    host = Host()
    extra = [("task_form_tool", {"variant": v}) for v in ("benign", "violating")]
    if era != "legacy":
        extra = [("two_questions", {})]
    results = run_calls(
        ELICIT_SERVER,
        ["--guard", "streams", "--policy", str(GUARD_POLICY)],
        era,
        host,
        MATRIX + extra,
    )
    assert_matrix(results, host)
    if era == "legacy":
        task_ok, task_bad = results[4:]
        assert task_ok["text"] == 'task:accept:{"name": "x"}'
        assert blocked_by(task_bad, "TST002"), task_bad
        assert len(host.shown) == 3
    else:
        assert json.loads(results[4]["text"].removeprefix("two:")) == TWO
        assert [p["message"] for p in host.shown[2:]] == ["Name?"]


def test_middleware_guards_2026_07_28_rounds() -> None:
    """The ``MCPServer`` middleware filters ``InputRequiredResult`` entries and adds the
    remembered ``decline`` to the retry (it sees the unsealed ``requestState``)."""
    host = Host()
    results = run_calls(
        ELICIT_SERVER,
        ["--guard", "middleware", "--policy", str(GUARD_POLICY)],
        "2026-07-28",
        host,
        [*MATRIX, ("two_questions", {})],
    )
    assert_matrix(results, host)
    assert json.loads(results[4]["text"].removeprefix("two:")) == TWO


def test_middleware_in_the_push_era_filters_url_required_errors_only() -> None:
    """Middleware never sees a pushed ``elicitation/create`` (use the streams for that), but
    a ``-32042`` error a tool raises passes through it: a blocked URL turns it into the
    policy's error, a benign one is forwarded unchanged."""
    host = Host()
    results = run_calls(
        ELICIT_SERVER,
        ["--guard", "middleware", "--policy", str(GUARD_POLICY)],
        "legacy",
        host,
        [
            ("form_tool", {"variant": "violating"}),
            ("url_required_tool", {"variant": "benign"}),
            ("url_required_tool", {"variant": "violating"}),
        ],
    )
    pushed, required_ok, required_bad = results
    assert pushed["text"] == 'form:accept:{"pin": "x"}'  # the middleware's blind spot
    assert required_ok["error"] == -32042
    assert required_ok["data"]["elicitations"][0]["url"].startswith("https://auth.example.com/")
    assert blocked_by(required_bad, "TST001"), required_bad


@pytest.mark.parametrize("era", ERAS)
def test_http_app_guards_both_eras(era: str) -> None:
    """``guard.http_app(mcp.streamable_http_app())``: the ASGI middleware on Streamable HTTP
    sees pushed requests on the SSE stream (answering the server with the error POST) and
    2026-07-28 bodies; benign requests pass, violating ones are the client's -31001."""
    host = Host()
    process = subprocess.Popen(
        [
            sys.executable,
            str(ELICIT_SERVER),
            "--http",
            "--guard",
            "asgi",
            "--policy",
            str(GUARD_POLICY),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"

        async def main() -> list[dict[str, Any]]:
            async with Client(url, mode=era, elicitation_callback=host) as client:
                return [await outcome(client, tool, **arguments) for tool, arguments in MATRIX]

        assert_matrix(anyio.run(main), host)
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()  # type: ignore[union-attr]


def test_fastmcp_middleware_guards_tool_rounds() -> None:
    """FastMCP: ``ElicitGuardMiddleware`` sees ``on_call_tool`` results in 2026-07-28;
    a blocked entry is removed (the client gets -31001 when none is left) and the retry
    carries ``decline`` for it, which the tool reads from ``ctx.input_responses``."""
    require_module("fastmcp")
    host = Host()
    results = run_calls(
        FASTMCP_SERVER,
        ["--guard", "--policy", str(GUARD_POLICY)],
        "2026-07-28",
        host,
        [
            ("form_tool", {"variant": "benign"}),
            ("form_tool", {"variant": "violating"}),
            ("two_questions", {}),
        ],
    )
    benign, violating, two = results
    assert benign["text"] == 'form:{"action": "accept", "content": {"name": "x"}}'
    assert blocked_by(violating, "TST002"), violating
    assert json.loads(two["text"].removeprefix("two:")) == TWO
    assert [p["message"] for p in host.shown] == ["Who are you?", "Name?"]
