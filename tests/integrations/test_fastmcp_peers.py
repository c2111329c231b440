"""elicitguard beside FastMCP 4.2's own client and proxy.

* FastMCP's proxy now forwards a backend's URL-mode elicitation as URL mode (2026-07-28
  ``inputRequests``; its push-era forwarding over stdio has no back-channel here): a guarded
  client behind it judges the URL (a link to ``evil.example`` never reaches the user; the
  benign one does, as a URL), where FastMCP 4.1 showed an empty form.
* FastMCP's client now validates accepted content against the ``requestedSchema`` it was
  shown: a form that elicitguard redacted (an optional secret field removed) must still be
  a schema the answer validates against, and the server must accept that answer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.integration_support import require_module
from tests.integrations.sdk_peers import GUARD_POLICY, SERVERS, Host, outcome

require_module("fastmcp")
require_module("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from elicitguard.integrations.mcp_client import ClientGuard, GuardNotice  # noqa: E402

PROXY = SERVERS / "fastmcp_proxy.py"
REDACT_SERVER = SERVERS / "fastmcp_optional_secret.py"
ELICITGUARD = Path(sys.executable).with_name("elicitguard")


def test_fastmcp_proxy_forwards_url_mode_and_the_guard_judges_it() -> None:
    notices: list[GuardNotice] = []
    guard = ClientGuard(policy=GUARD_POLICY, server="fastmcp-proxy", on_block=notices.append)
    host = Host()

    async def main() -> list[dict[str, Any]]:
        params = StdioServerParameters(command=sys.executable, args=[str(PROXY)])
        transport = guard.transport(stdio_client(params))
        async with Client(
            transport,
            mode="2026-07-28",
            elicitation_callback=guard.callback(host),  # type: ignore[arg-type]
        ) as client:
            return [
                await outcome(client, "url_tool", variant=variant)
                for variant in ("benign", "violating")
            ]

    benign, violating = anyio.run(main)
    assert benign["text"].startswith("url:accept"), benign
    assert violating["text"].startswith("url:decline"), violating
    assert [p.get("mode") for p in host.shown] == ["url"]
    assert [str(p.get("url")).split("?")[0] for p in host.shown] == [
        "https://auth.example.com/connect"
    ]
    assert [(n.stage, n.ticket.mode) for n in notices] == [("request", "url")]
    assert "TST001" in notices[0].codes


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_fastmcp_client_validates_a_redacted_form_and_the_server_accepts_it(
    era: str, tmp_path: Path
) -> None:
    from fastmcp import Client as FastMCPClient
    from fastmcp.client.transports import StdioTransport

    policy = tmp_path / "redact.yaml"
    policy.write_text(
        'name: redact-secret-fields\nextends: ["builtin:default"]\n'
        "rules:\n  EG201: {action: redact}\n  EG206: {action: log}\n"
    )
    shown: list[dict[str, Any]] = []

    async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
        schema = params.requested_schema
        shown.append(schema)
        return dict.fromkeys(schema.get("properties", {}), "Ada")

    async def main() -> str:
        transport = StdioTransport(
            command=str(ELICITGUARD),
            args=[
                "proxy",
                "stdio",
                "--policy",
                str(policy),
                "--",
                sys.executable,
                str(REDACT_SERVER),
            ],
        )
        async with FastMCPClient(transport, elicitation_handler=handler, mode=era) as client:
            result = await client.call_tool("sign_up", {})
            return " ".join(getattr(c, "text", "") for c in result.content)

    text = anyio.run(main)
    assert [sorted(s["properties"]) for s in shown] == [["name"]], shown
    assert json.loads(text) == {"action": "accept", "content": {"name": "Ada"}}
