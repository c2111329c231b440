"""ConsentGate: a URL-mode accept passes only after a shown view and an explicit yes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from elicitguard.consent import ConsentGate, UrlView, describe_url

URL = "https://accounts.example.com/oauth/authorize?client_id=abc"


@dataclass(frozen=True)
class Ticket:
    """The shape of the client integration's ElicitationTicket."""

    id: str
    server: str | None
    mode: str
    params: Mapping[str, Any] = field(default_factory=dict)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_accept_needs_a_shown_view_and_a_yes() -> None:
    """Without a record nothing passes; a yes admits, a no or a cancel does not."""
    shown: list[UrlView] = []
    answers = iter([True, False, "cancel", "accept"])

    def presenter(view: UrlView) -> bool | str:
        shown.append(view)
        return next(answers)

    gate = ConsentGate(presenter)
    assert not gate.allows_accept("eid:1", URL)
    view = gate.describe(URL, server="crm", message="Connect", key="eid:1")
    assert gate.show(view).accepted
    assert gate.allows_accept("eid:1", URL)
    assert gate.show(view).choice == "decline"
    assert not gate.allows_accept("eid:1", URL)
    assert gate.show(view).choice == "cancel"
    assert not gate.allows_accept("eid:1")
    assert gate.show(view).accepted
    assert [view] * 4 == shown


def test_consent_is_for_this_url_only() -> None:
    """A yes to one URL does not admit an accept for another URL under the same key."""
    gate = ConsentGate(lambda view: True)
    gate.show(describe_url(URL, key="k"))
    assert gate.allows_accept("k", URL)
    assert not gate.allows_accept("k", "https://other.example/")
    assert not gate.allows_accept("other-key", URL)


def test_blocked_url_is_never_admitted() -> None:
    """Even an explicit yes does not admit a URL the policy blocks."""
    gate = ConsentGate(lambda view: True)
    record = gate.show(gate.describe("https://аррӏе.com/", key="k"))
    assert record.choice == "accept"
    assert record.blocked
    assert not record.accepted
    assert not gate.allows_accept("k")
    assert gate.enforce("k", "accept") == "decline"


def test_consent_expires() -> None:
    """A yes is valid for ttl_s seconds."""
    clock = Clock()
    gate = ConsentGate(lambda view: True, ttl_s=60, clock=clock)
    gate.show(gate.describe(URL, key="k"))
    clock.now += 59
    assert gate.allows_accept("k", URL)
    clock.now += 2
    assert not gate.allows_accept("k", URL)


def test_record_for_asynchronous_uis_and_enforce() -> None:
    """Hosts may record the answer later; enforce turns an unconsented accept into decline."""
    gate = ConsentGate()
    view = gate.describe(URL, key="k")
    assert gate.enforce("k", "accept", url=URL) == "decline"
    assert gate.enforce("k", "cancel", url=URL) == "cancel"
    gate.record(view, True)
    assert gate.enforce("k", "accept", url=URL) == "accept"
    gate.forget("k")
    assert gate.enforce("k", "accept", url=URL) == "decline"
    with pytest.raises(TypeError):
        gate.record({"url": URL}, True)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        gate.show(view)


def test_presenter_failure_counts_as_cancel() -> None:
    """A presenter that raises leaves a cancel on record, and the error propagates."""

    def broken(view: UrlView) -> bool:
        raise ValueError("ui crashed")

    gate = ConsentGate(broken)
    with pytest.raises(ValueError, match="ui crashed"):
        gate.show(gate.describe(URL, key="k"))
    record = gate.consent_for("k")
    assert record is not None
    assert record.choice == "cancel"


def test_async_presenter() -> None:
    """ashow awaits coroutine presenters; show refuses them instead of guessing."""

    async def presenter(view: UrlView) -> str:
        await asyncio.sleep(0)
        return "accept"

    gate = ConsentGate(presenter)
    view = gate.describe(URL, key="k")
    assert asyncio.run(gate.ashow(view)).accepted
    with pytest.raises(TypeError, match="ashow"):
        gate.show(view)
    assert not gate.allows_accept("k")


def test_key_for() -> None:
    """Keys prefer elicitationId, then the inputRequests key, then the JSON-RPC id, then the URL."""
    assert ConsentGate.key_for({"elicitationId": "e-1", "url": URL}, request_id=3) == "eid:e-1"
    assert ConsentGate.key_for({"url": URL}, input_key="connect", request_id=3) == "input:connect"
    assert ConsentGate.key_for({"url": URL}, request_id=3) == "id:3"
    assert ConsentGate.key_for({"url": URL}).startswith("url:")
    assert ConsentGate.key_for({"url": URL}) == ConsentGate.key_for({"url": URL})


def test_ticket_protocol_of_the_client_integration() -> None:
    """open() prepares the view, the host records a yes against it, admit() uses it up."""
    gate = ConsentGate(lambda view: True)
    ticket = Ticket("t-1", "crm", "url", {"url": URL, "message": "Connect"})
    view = gate.open(ticket)
    assert view is not None
    assert view is gate.view_for(ticket)
    assert view is gate.view_for("t-1")
    assert view.server == "crm"
    assert view.message == "Connect"
    assert view.key == "t-1"
    assert not gate.admit(ticket, {"action": "accept"})
    gate.open(ticket)
    gate.show(gate.view_for(ticket))  # type: ignore[arg-type]
    assert gate.admit(ticket, {"action": "accept"})
    assert not gate.admit(ticket, {"action": "accept"}), "one yes admits one answer"
    assert gate.admit(ticket, {"action": "decline"})
    form = Ticket("t-2", "crm", "form", {"message": "m"})
    assert gate.open(form) is None
    assert gate.admit(form, {"action": "accept", "content": {}})


def test_gate_matches_the_client_integration_protocol() -> None:
    """The gate satisfies ConsentGateLike of the mcp client integration."""
    from elicitguard.integrations.mcp_client import ConsentGateLike

    assert isinstance(ConsentGate(), ConsentGateLike)
