"""The egress guard: a server's outbound calls, checked for token passthrough (EG601, EG604).

A server that calls third-party APIs on the user's behalf must use a token from that third
party's own authorization server, never the token the MCP client sent it (AU-04, EL-19:
"token passthrough"), and never put a token in a URL (AU-07). Those calls leave the server
process directly; no proxy in front of the MCP server can see them. The guard sits inside:

* :meth:`EgressGuard.check_outbound` describes one call as an ``outbound_call`` item and
  lets the engine decide under the policy (audited like every decision); when the decision
  blocks it raises :class:`~elicitguard.errors.PassthroughBlocked` and the call never leaves;
* :class:`GuardedTransport` and :class:`AsyncGuardedTransport` wrap any httpx transport so
  that every request of a client goes through ``check_outbound`` first::

      guard = EgressGuard(engine, audience="https://mcp.example.com/mcp", vault=vault)
      client = httpx.AsyncClient(transport=AsyncGuardedTransport(guard))

* the guard's :class:`~elicitguard.identity.vault.CredentialVault` is where the server
  registers the third-party tokens it obtained; the engine then looks for them in every
  message the server sends to the client (EG603).

The client's token is recognised by the keyed fingerprint in the current principal
(:data:`~elicitguard.identity.principal.current_principal`, set by the HTTP middleware), so
the engine and the token verifier must share one keyring; a JWT whose ``aud`` is this server
is refused whoever it belongs to. Needs ``httpx`` (``elicitguard[http]``) for the transports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import httpx

from elicitguard.base.decision import Decision
from elicitguard.errors import PassthroughBlocked
from elicitguard.identity.outbound import outbound_item
from elicitguard.identity.principal import Principal, current_principal
from elicitguard.identity.vault import CredentialVault
from elicitguard.protocol.envelope import Direction, Envelope, Side

if TYPE_CHECKING:
    from elicitguard.identity.host import HostEngine

__all__ = ["AsyncGuardedTransport", "EgressGuard", "GuardedTransport"]


class EgressGuard:
    """Checks outbound calls under the engine's policy; holds the credential vault.

    ``audience`` is this server's canonical URI (default: the policy's
    ``identity.audience``). Passing a ``vault`` registers it with the engine (EG603).
    """

    def __init__(
        self,
        engine: HostEngine,
        *,
        audience: str | None = None,
        vault: CredentialVault | None = None,
        server: str | None = None,
    ) -> None:
        self.engine = engine
        self.audience = audience or engine.policy.identity.get("audience")
        self.vault = vault if vault is not None else CredentialVault()
        self.server = server
        engine.services["vault"] = self.vault

    def check_outbound(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        method: str = "GET",
        principal: Principal | None = None,
    ) -> Decision:
        """Decide about one call; raise :class:`PassthroughBlocked` when it must not leave."""
        who = principal if principal is not None else current_principal.get()
        item = outbound_item(
            url,
            headers,
            keys=self.engine.keys,
            method=method,
            principal=who,
            audience=self.audience,
        )
        envelope = Envelope(
            message={},
            direction=Direction.CLIENT_TO_SERVER,
            side=Side.SERVER,
            principal=who,
            server=self.server,
        )
        decision = self.engine.evaluate(envelope, items=[item])
        if decision.blocked:
            codes = ", ".join(decision.codes)
            msg = (
                f"outbound {method.upper()} to {item.facts['host'] or 'a host'} refused ({codes}): "
                "use a token from the third party's own authorization server, in the "
                "Authorization header"
            )
            code = decision.codes[0] if decision.codes else None
            raise PassthroughBlocked("passthrough", msg, code=code)
        return decision


def _headers(request: httpx.Request) -> dict[str, str]:
    return dict(request.headers.items())


class GuardedTransport(httpx.BaseTransport):
    """An httpx transport that checks every request with the guard before sending it."""

    def __init__(self, guard: EgressGuard, transport: httpx.BaseTransport | None = None) -> None:
        self.guard = guard
        self.transport = transport if transport is not None else httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.guard.check_outbound(str(request.url), _headers(request), method=request.method)
        return self.transport.handle_request(request)

    def close(self) -> None:
        self.transport.close()


class AsyncGuardedTransport(httpx.AsyncBaseTransport):
    """The async twin of :class:`GuardedTransport`."""

    def __init__(
        self, guard: EgressGuard, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.guard = guard
        self.transport = transport if transport is not None else httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.guard.check_outbound(str(request.url), _headers(request), method=request.method)
        return await self.transport.handle_async_request(request)

    async def aclose(self) -> None:
        await self.transport.aclose()
