"""``ClientGuard`` inside a real ``mcp`` 2.3.0 client talking to a real server over stdio.

The server (``servers/elicit_server.py``) elicits with the SDK's own APIs for each era; the
client wraps its elicitation callback and its transport with the guard, and the test
policy blocks a form field named ``pin`` (TST002) and URLs on ``*.evil.example`` (TST001).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from tests.integration_support import require_module
from tests.integrations.sdk_peers import (
    ELICIT_SERVER,
    ERAS,
    FORM_ONLY_POLICY,
    GUARD_POLICY,
    Host,
    blocked_by,
    outcome,
    server_params,
)

require_module("mcp")

from mcp import Client, ClientSession  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from elicitguard.consent import ConsentGate  # noqa: E402
from elicitguard.engine.policy import load_policy  # noqa: E402
from elicitguard.integrations.mcp_client import (  # noqa: E402
    ClientGuard,
    GuardNotice,
    current_ticket,
    restrict_capabilities,
    restrict_elicitation,
)
from elicitguard.protocol.items import ABSENT  # noqa: E402


def run_client(
    guard: ClientGuard,
    era: str,
    host: Any,
    body: Callable[[Any], Awaitable[Any]],
    *,
    wrap_transport: bool = True,
) -> Any:
    """Connect a guarded client to the elicitation server and run ``body(client)``."""

    async def main() -> Any:
        transport = stdio_client(server_params(ELICIT_SERVER))
        if wrap_transport:
            transport = guard.transport(transport)  # type: ignore[assignment]
        async with Client(transport, mode=era, elicitation_callback=guard.callback(host)) as c:
            return await body(c)

    return anyio.run(main)


def answered(result: dict[str, Any]) -> tuple[str, Any]:
    """The server's report ``kind:action:content`` as ``(action, content)``."""
    _kind, action, content = result["text"].split(":", 2)
    return action, json.loads(content)


@pytest.mark.parametrize("era", ERAS)
def test_benign_requests_reach_the_user_and_violating_ones_are_declined(era: str) -> None:
    """Form and URL requests, pushed or embedded: benign ones are shown and answered; a form
    asking for a PIN and a link to evil.example never reach the user, the server receives
    ``decline``, and the host's ``on_block`` hook learns why (rule codes, no values)."""
    notices: list[GuardNotice] = []
    guard = ClientGuard(policy=GUARD_POLICY, server="elicit-test", on_block=notices.append)
    host = Host()

    async def body(client: Any) -> dict[str, Any]:
        results = {}
        for tool in ("form_tool", "url_tool"):
            for variant in ("benign", "violating"):
                before = len(host.shown)
                result = await outcome(client, tool, variant=variant)
                results[f"{tool}:{variant}"] = (result, len(host.shown) - before)
        return results

    results = run_client(guard, era, host, body)
    form_ok, form_shown = results["form_tool:benign"]
    assert answered(form_ok) == ("accept", {"name": "x"})
    assert form_shown == 1
    url_ok, url_shown = results["url_tool:benign"]
    assert answered(url_ok) == ("accept", None)
    assert url_shown == 1
    for key in ("form_tool:violating", "url_tool:violating"):
        result, shown = results[key]
        assert answered(result) == ("decline", None), key
        assert shown == 0, key
    assert [(n.stage, n.outcome) for n in notices] == [("request", "decline")] * 2
    assert "TST002" in notices[0].codes
    assert "TST001" in notices[1].codes
    assert notices[1].ticket.mode == "url"
    assert notices[1].ticket.url is not None
    assert "evil.example" in notices[1].ticket.url
    assert "TST001 evil-url-host" in notices[1].reason


def test_task_augmented_push_requests_are_guarded() -> None:
    """A 2025-11-25 task-augmented request (``params.task``) is evaluated like any other."""
    guard = ClientGuard(policy=GUARD_POLICY)
    host = Host()

    async def body(client: Any) -> list[dict[str, Any]]:
        return [await outcome(client, "task_form_tool", variant=v) for v in ("benign", "violating")]

    benign, violating = run_client(guard, "legacy", host, body)
    assert answered(benign) == ("accept", {"name": "x"})
    assert answered(violating) == ("decline", None)
    assert len(host.shown) == 1
    assert host.shown[0]["task"] == {"ttl": 60000}


def test_one_blocked_entry_of_a_round_is_declined_and_the_other_answered() -> None:
    """2026-07-28: the callback runs once per ``inputRequests`` key; the blocked entry is
    declined without the user seeing it, the benign one is answered."""
    guard = ClientGuard(policy=GUARD_POLICY)
    host = Host()

    async def body(client: Any) -> dict[str, Any]:
        return await outcome(client, "two_questions")

    result = run_client(guard, "2026-07-28", host, body)
    assert json.loads(result["text"].removeprefix("two:")) == {
        "name": {"action": "accept", "content": {"name": "x"}},
        "secret": {"action": "decline"},
    }
    assert [p["message"] for p in host.shown] == ["Name?"]


@pytest.mark.parametrize("era", ERAS)
def test_an_answer_is_checked_before_it_leaves(era: str) -> None:
    """The user's answer is evaluated too: content that does not match the form's schema
    (EG110, blocked in the test policy) is withheld: the call fails with the policy's error,
    marked ``withheld``, never a false ``decline``."""
    notices: list[GuardNotice] = []
    guard = ClientGuard(policy=GUARD_POLICY, on_block=notices.append)
    host = Host(content={"name": "x", "card_number": "4111 1111 1111 1111"})

    async def body(client: Any) -> dict[str, Any]:
        return await outcome(client, "form_tool", variant="benign")

    result = run_client(guard, era, host, body)
    assert blocked_by(result, "EG110"), result
    assert result["data"]["elicitguard"]["withheld"] is True
    assert len(host.shown) == 1
    assert [(n.stage, n.outcome) for n in notices] == [("answer", "withheld")]
    assert "EG110" in notices[0].codes
    assert "4111" not in repr(notices[0]) + notices[0].reason
    assert all("4111" not in f.message for f in notices[0].findings)


@pytest.mark.parametrize("era", ERAS)
def test_the_transport_declares_only_the_modes_the_policy_offers(era: str) -> None:
    """With ``client.elicitation_modes: [form]`` the wrapped transport removes ``url`` from
    ``initialize`` / every request's ``_meta`` (the SDK declares both), the server sees a
    form-only client, and a URL request anyway is blocked as undeclared (EG102)."""
    notices: list[GuardNotice] = []
    guard = ClientGuard(policy=FORM_ONLY_POLICY, on_block=notices.append)
    host = Host()

    async def body(client: Any) -> list[dict[str, Any]]:
        return [
            await outcome(client, "declared_modes"),
            await outcome(client, "url_tool", variant="benign"),
            await outcome(client, "form_tool", variant="benign"),
        ]

    modes, url, form = run_client(guard, era, host, body)
    assert modes["text"] == "modes:form"
    assert answered(url) == ("decline", None)
    assert answered(form) == ("accept", {"name": "x"})
    assert "EG102" in notices[0].codes
    assert [p.get("mode", "form") for p in host.shown] == ["form"]


def test_without_the_transport_wrapper_the_sdk_declares_both_modes() -> None:
    """Why the transport wrapper exists: the SDK alone declares form and url."""
    guard = ClientGuard(policy=FORM_ONLY_POLICY)

    async def body(client: Any) -> dict[str, Any]:
        return await outcome(client, "declared_modes")

    result = run_client(guard, "legacy", Host(), body, wrap_transport=False)
    assert result["text"] == "modes:form,url"


def test_a_client_session_uses_the_same_two_wrappers() -> None:
    """``ClientSession(read, guard.write_stream(write), elicitation_callback=...)``: the
    low-level session declares form only and declines the URL request."""
    guard = ClientGuard(policy=FORM_ONLY_POLICY)
    host = Host()

    async def main() -> list[dict[str, Any]]:
        async with stdio_client(server_params(ELICIT_SERVER)) as (read, write):
            session = ClientSession(
                read, guard.write_stream(write), elicitation_callback=guard.callback(host)
            )
            async with session:
                await session.initialize()
                return [
                    await outcome(session, "declared_modes"),
                    await outcome(session, "url_tool", variant="benign"),
                ]

    modes, url = anyio.run(main)
    assert modes["text"] == "modes:form"
    assert answered(url) == ("decline", None)
    assert host.shown == []


@pytest.mark.parametrize("yes", [True, False])
def test_the_consent_gate_holds_back_a_url_accept_without_a_recorded_yes(yes: bool) -> None:
    """With ``consent=ConsentGate(...)`` the gate prepares a ``UrlView`` before the host
    runs; the host finds it through ``current_ticket()`` and shows it; an ``accept`` the
    user did not confirm in that view reaches the server as ``decline``."""
    shown: list[Any] = []

    def dialog(view: Any) -> bool:
        shown.append(view)
        return yes

    gate = ConsentGate(presenter=dialog, policy=GUARD_POLICY)
    notices: list[GuardNotice] = []
    guard = ClientGuard(policy=GUARD_POLICY, consent=gate, on_block=notices.append)
    inner = Host()

    async def host(context: Any, params: Any) -> Any:
        view = gate.view_for(current_ticket())
        assert view is not None
        gate.show(view)
        return await inner(context, params)  # answers accept either way

    async def body(client: Any) -> dict[str, Any]:
        return await outcome(client, "url_tool", variant="benign")

    result = run_client(guard, "2026-07-28", host, body)
    assert answered(result) == (("accept" if yes else "decline"), None)
    assert [v.url for v in shown] == ["https://auth.example.com/connect?service=github"]
    assert [n.stage for n in notices] == ([] if yes else ["consent"])
    assert current_ticket() is None


def test_monitor_mode_changes_nothing() -> None:
    """Under the passthrough preset (monitor mode) violating requests reach the user."""
    notices: list[GuardNotice] = []
    guard = ClientGuard(policy="builtin:passthrough", on_block=notices.append)
    host = Host()

    async def body(client: Any) -> dict[str, Any]:
        return await outcome(client, "form_tool", variant="violating")

    result = run_client(guard, "legacy", host, body)
    assert answered(result) == ("accept", {"pin": "x"})
    assert notices == []
    assert len(host.shown) == 1


def test_on_block_client_cancel_is_what_the_server_receives() -> None:
    """``on_block: {client: cancel}`` answers a blocked request with ``cancel``."""
    policy = GUARD_POLICY.parent / "guard.yaml"
    guard = ClientGuard(
        policy=load_policy(policy, extra_layers=[{"on_block": {"client": "cancel"}}])
    )

    async def body(client: Any) -> dict[str, Any]:
        return await outcome(client, "url_tool", variant="violating")

    assert answered(run_client(guard, "2026-07-28", Host(), body)) == ("cancel", None)


@pytest.mark.parametrize(
    ("value", "modes", "expected"),
    [
        ({"form": {}, "url": {}}, ["form"], {"form": {}}),
        ({"form": {}, "url": {}}, ["url"], {"url": {}}),
        ({"form": {}, "url": {}}, ["form", "url"], {"form": {}, "url": {}}),
        ({}, ["form"], {}),  # `{}` is form only
        ({}, ["url"], ABSENT),  # nothing usable: the capability goes
        ({"url": {}}, ["form"], ABSENT),
        ({"form": {"applyDefaults": True}, "url": {}}, ["form"], {"form": {"applyDefaults": True}}),
        ("odd", ["form"], "odd"),  # unknown shapes are EG103's business
    ],
)
def test_restrict_elicitation(value: Any, modes: list[str], expected: Any) -> None:
    """Only the offered modes stay; an empty result removes the capability."""
    assert restrict_elicitation(value, modes) == expected


def test_restrict_capabilities_rewrites_copies_only() -> None:
    """``initialize`` and ``_meta`` are rewritten in copies (the SDK shares the dict)."""
    caps = {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
    init = {"protocolVersion": "2025-11-25", "capabilities": caps}
    new = restrict_capabilities("initialize", init, ["form"])
    assert new == {
        "protocolVersion": "2025-11-25",
        "capabilities": {"sampling": {}, "elicitation": {"form": {}}},
    }
    meta = {"_meta": {"io.modelcontextprotocol/clientCapabilities": caps}, "name": "t"}
    new = restrict_capabilities("tools/call", meta, [])
    assert new == {
        "_meta": {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}},
        "name": "t",
    }
    assert caps == {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
    assert restrict_capabilities("tools/call", meta, ["form", "url"]) is None
    assert restrict_capabilities("tools/list", {"cursor": "c"}, ["form"]) is None
