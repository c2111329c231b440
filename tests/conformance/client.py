"""An ``mcp`` SDK client for the conformance suite's client scenarios, bare or guarded.

The harness (``conformance client --command "python client.py SETUP" --scenario NAME``)
starts a test server per scenario, appends its URL to the command and names the scenario in
``MCP_CONFORMANCE_SCENARIO`` (and, with ``--spec-version``, the version in
``MCP_CONFORMANCE_PROTOCOL_VERSION``). The client does what every scenario asks of an
ordinary host: connect in the era the harness names, list the tools, call each one (the
scenario's server records what it needs to judge), and answer each elicitation by accepting
with the schema's defaults (SEP-1034).

``SETUP`` is one of:

* ``bare``: the plain ``mcp.Client``;
* ``guard``: the same client with elicitguard's :class:`ClientGuard` around its transport
  and elicitation callback (``builtin:default``);
* ``proxy``: the plain client talking through ``elicitguard proxy http`` (``builtin:default``)
  started here in front of the scenario's server.

The guarded and proxied runs must pass and fail exactly the checks the bare run does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from elicitguard.integrations.mcp_client import ClientGuard

POLICY = "builtin:default"
ELICITGUARD = Path(sys.executable).with_name("elicitguard")
#: Arguments for the tools whose scenario checks the values it receives.
KNOWN_ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 5, "b": 3}}
ECHO_TOOL, ECHO_FOCAL = "json_schema_echo", "json_schema_2020_12_tool"


async def accept_with_defaults(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """What a host's form does when the user presses OK: every default filled in."""
    content: dict[str, Any] = {}
    if isinstance(params, types.ElicitRequestFormParams):
        for name, schema in (params.requested_schema.get("properties") or {}).items():
            if isinstance(schema, dict) and "default" in schema:
                content[name] = schema["default"]
    return types.ElicitResult(action="accept", content=content)


def arguments_for(tool: types.Tool, listing: list[types.Tool]) -> dict[str, Any]:
    """Plausible arguments for ``tool``: known ones, else one value per required property.

    ``json_schema_echo`` is the harness's way to see what the client kept of another tool's
    input schema: it is sent that schema, as the client holds it, verbatim.
    """
    if tool.name == ECHO_TOOL:
        focal = next((t for t in listing if t.name == ECHO_FOCAL), None)
        return {"schema": focal.input_schema if focal is not None else {}}
    if tool.name in KNOWN_ARGUMENTS:
        return KNOWN_ARGUMENTS[tool.name]
    schema = tool.input_schema or {}
    samples = {"number": 1, "integer": 1, "boolean": True, "string": "x", "array": [], "object": {}}
    args: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = (schema.get("properties") or {}).get(name) or {}
        args[name] = samples.get(str(prop.get("type")), "x")
    return args


def connect_mode() -> str:
    """``legacy`` (initialize handshake) for dated versions through 2025-11-25, else the pin."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    return version if version >= "2026" else "legacy"


async def run(url: str, setup: str) -> None:
    callback: Any = accept_with_defaults
    transport: Any = url
    if setup == "guard":
        guard = ClientGuard(policy=POLICY, server="conformance")
        callback = guard.callback(accept_with_defaults)
        transport = guard.transport(streamable_http_client(url))
    async with Client(transport, mode=connect_mode(), elicitation_callback=callback) as client:
        listing = await client.list_tools()
        for tool in listing.tools:
            try:
                await client.call_tool(tool.name, arguments_for(tool, listing.tools))
            except Exception as error:  # the scenario's checks judge; carry on to the next tool
                print(f"{tool.name}: {type(error).__name__}: {error}", file=sys.stderr)


@contextlib.contextmanager
def proxied(url: str) -> Iterator[str]:
    """``url`` behind ``elicitguard proxy http`` on 127.0.0.1, for as long as the block runs."""
    work = Path(tempfile.mkdtemp(prefix="eg-conformance-"))
    port_file = work / "port"
    base = url.split("://", 1)[1].split("/", 1)
    path = "/" + base[1] if len(base) > 1 else "/"
    proxy = subprocess.Popen(
        [
            str(ELICITGUARD),
            "proxy",
            "http",
            "--upstream",
            url,
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            str(port_file),
            "--policy",
            POLICY,
        ],
        stdout=subprocess.DEVNULL,
        stderr=sys.stderr,
    )
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if proxy.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("elicitguard proxy http did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text().strip()}{path}"
    finally:
        proxy.terminate()
        try:
            proxy.wait(10)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.wait()


def main() -> None:
    setup, url = sys.argv[1], sys.argv[-1]
    url = url.replace("://localhost:", "://127.0.0.1:")
    if setup == "proxy":
        with proxied(url) as front:
            asyncio.run(run(front, "bare"))
    else:
        asyncio.run(run(url, setup))


if __name__ == "__main__":
    main()
