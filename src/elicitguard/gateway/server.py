"""Building and running the gRPC policy services (``elicitguard serve ext-proc|ext-mcp``).

One asyncio gRPC server per process. The guard is the HTTP proxy's own
(:class:`~elicitguard.integrations.asgi.ElicitGuardMiddleware` over a
:class:`~elicitguard.integrations.actions.Relay`, behind
:class:`~elicitguard.identity.http_auth.RequireAuth` when the policy configures bearer
authentication), with its rounds and sessions in the shared store when one is named.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from elicitguard.engine.engine import Engine
from elicitguard.gateway.asgi_bridge import SideRequest, dispatch_upstream
from elicitguard.gateway.shared_state import SharedGuard, SharedState, SharedStateStore
from elicitguard.identity.http_auth import BearerAuth, RequireAuth
from elicitguard.identity.sealing import RequestStateGuard
from elicitguard.identity.stores import SecureStore
from elicitguard.integrations.actions import Relay
from elicitguard.integrations.asgi import ASGIApp, ElicitGuardMiddleware, Message, Scope
from elicitguard.protocol.envelope import Side, Transport

__all__ = ["GatewayConfig", "build_guard", "grpc_options", "run_server"]


@dataclass(slots=True)
class GatewayConfig:
    """What ``serve`` was asked for."""

    host: str = "127.0.0.1"
    port: int = 9002
    port_file: Path | None = None
    path: str | None = "/mcp"
    server: str | None = None
    upstream: str | None = None
    trust_jwt_metadata: str | None = None


def grpc_options(engine: Engine) -> list[tuple[str, int]]:
    """Message size limits: a body over the policy's limit is refused, with some margin."""
    limit = max(4 << 20, 2 * engine.policy.limits.max_message_bytes + (64 << 10))
    return [
        ("grpc.max_receive_message_length", limit),
        ("grpc.max_send_message_length", limit),
        ("grpc.so_reuseport", 0),
    ]


def build_guard(
    engine: Engine,
    *,
    path: str | None,
    server: str | None,
    shared: SecureStore | None,
    sealing: RequestStateGuard | None,
    auth: BearerAuth | None,
) -> tuple[ASGIApp, SharedState | None]:
    """The HTTP proxy's guard around the gateway's upstream stand-in."""
    relay = Relay(engine, side=Side.PROXY, transport=Transport.HTTP, server=server, sealing=sealing)
    state: SharedState | None = None
    guard: ElicitGuardMiddleware
    if shared is not None:
        ttl = engine.policy.limits.state_ttl_s
        sessions = SharedStateStore(shared, ttl_s=ttl)
        engine.store = sessions
        relay.engine.store = sessions
        shared_guard = SharedGuard(dispatch_upstream, relay, path=path, shared=shared, ttl_s=ttl)
        state = SharedState(sessions, shared_guard)
        guard = shared_guard
    else:
        guard = ElicitGuardMiddleware(dispatch_upstream, relay, path=path)
    if auth is None:
        return guard, state
    return RequireAuth(guard, auth), state


def side_requests(
    upstream: str | None, engine: Engine
) -> tuple[SideRequest, Callable[[], Awaitable[None]]]:
    """Where the guard's own requests go (the push era's reply POST): ``--upstream``.

    Without an upstream the request cannot be sent (the gateway forwards only what it was
    asked to): it is dropped and audited, and the server's request times out there.
    """
    if upstream is None:

        async def drop(scope: Scope, body: bytes) -> None:
            engine.audit.event("elicitguard.reply_not_sent", reason="no_upstream")

        return drop, _nothing
    from elicitguard.integrations.http_proxy import UpstreamApp

    forward = UpstreamApp(upstream)

    async def send(scope: Scope, body: bytes) -> None:
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(30)
            return {"type": "http.disconnect"}

        done = asyncio.Event()

        async def discard(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                done.set()

        await forward(scope, receive, discard)

    return send, forward.aclose


async def _nothing() -> None:
    return None


async def run_server(
    add: Callable[[grpc.aio.Server], None],
    engine: Engine,
    config: GatewayConfig,
    *,
    on_close: Callable[[], Awaitable[None]] = _nothing,
    label: str = "grpc",
) -> int:
    """Serve until SIGINT or SIGTERM; print the address once listening."""
    server = grpc.aio.server(options=grpc_options(engine))
    add(server)
    shown = f"[{config.host}]" if ":" in config.host else config.host
    try:
        bound = server.add_insecure_port(f"{shown}:{config.port}")
    except RuntimeError as exc:
        print(f"elicitguard: cannot listen on {config.host}:{config.port}: {exc}", file=sys.stderr)
        return 2
    if bound == 0:
        print(f"elicitguard: cannot listen on {config.host}:{config.port}", file=sys.stderr)
        return 2
    await server.start()
    if config.port_file is not None:
        config.port_file.write_text(f"{bound}\n")
    print(f"{label}://{shown}:{bound}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    waiter = asyncio.ensure_future(server.wait_for_termination())
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    await server.stop(grace=2.0)
    waiter.cancel()
    stopper.cancel()
    await on_close()
    return 0


def serve(run: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run a server coroutine to its end."""
    try:
        return asyncio.run(run())
    except KeyboardInterrupt:
        return 130
