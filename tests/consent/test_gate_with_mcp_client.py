"""ConsentGate inside a real ``mcp`` client (ClientGuard) talking to a real stdio server.

The guard opens the gate before the host's callback runs; the host finds the view the gate
prepared with ``describe_url``, shows it through the gate's presenter, and answers
``accept``; the server receives ``accept`` only when the user's recorded answer was yes.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.integration_support import require_module
from tests.integrations.sdk_peers import ELICIT_SERVER, GUARD_POLICY, Host, outcome, server_params

from elicitguard.consent import ConsentGate, UrlView

require_module("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from elicitguard.integrations.mcp_client import ClientGuard, GuardNotice, current_ticket  # noqa: E402


@pytest.mark.parametrize(
    ("era", "user_says"),
    [("2026-07-28", True), ("2026-07-28", False), ("legacy", True), ("legacy", False)],
)
def test_only_a_recorded_yes_lets_the_url_accept_through(era: str, user_says: bool) -> None:
    """The host's unconditional accept reaches the server only after the user said yes to
    the gate's view of that very URL; otherwise the server receives decline."""
    shown: list[UrlView] = []

    def presenter(view: UrlView) -> bool:
        shown.append(view)
        return user_says

    gate = ConsentGate(presenter, policy=GUARD_POLICY)
    notices: list[GuardNotice] = []
    guard = ClientGuard(
        policy=GUARD_POLICY, server="elicit-test", consent=gate, on_block=notices.append
    )
    inner = Host()

    async def host(context: Any, params: Any) -> Any:
        view = gate.view_for(current_ticket())
        assert view is not None
        gate.show(view)
        return await inner(context, params)

    async def main() -> dict[str, Any]:
        transport = guard.transport(stdio_client(server_params(ELICIT_SERVER)))
        async with Client(transport, mode=era, elicitation_callback=guard.callback(host)) as client:
            return await outcome(client, "url_tool", variant="benign")

    result = anyio.run(main)
    action = result["text"].split(":", 2)[1]
    assert action == ("accept" if user_says else "decline")
    assert len(shown) == 1
    view = shown[0]
    assert view.server == "elicit-test"
    assert view.highlight == "example.com"
    assert view.url == "https://auth.example.com/connect?service=github"
    assert [n.stage for n in notices] == ([] if user_says else ["consent"])
