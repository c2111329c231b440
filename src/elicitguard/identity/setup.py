"""Wiring the identity features from a policy: what the proxies and integrations call.

One place decides how ``identity:`` settings and the command line become objects, so that
the stdio proxy, the HTTP proxy and the server integrations behave the same:

* :func:`build_sealing` makes the :class:`~elicitguard.identity.sealing.RequestStateGuard`
  behind ``--seal-request-state``, with the state store the policy names (``identity.store``,
  or ``--state-store``) and the engine's keys; several replicas (``identity.replicas`` or
  ``--replicas``) need configured keys and a shared store, and refuse to start otherwise;
* :func:`build_auth` makes the :class:`~elicitguard.identity.http_auth.BearerAuth` behind
  the HTTP proxy's and the ASGI middleware's 401 challenges, when ``identity.audience`` is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from elicitguard.identity.http_auth import BearerAuth
from elicitguard.identity.sealing import RequestStateGuard, RequestStateSealer
from elicitguard.identity.stores import SecureStore, open_store
from elicitguard.identity.tokens import Introspector

if TYPE_CHECKING:
    from elicitguard.identity.host import HostEngine

__all__ = ["build_auth", "build_sealing", "build_store"]


def build_store(
    engine: HostEngine, *, store: str | None = None, replicas: int | None = None
) -> SecureStore:
    """The state store the policy (or the command line, which wins) names."""
    identity = engine.policy.identity
    url = store if store is not None else identity.get("store")
    count = replicas if replicas is not None else int(identity.get("replicas") or 1)
    return open_store(url, engine.keys, replicas=count)


def build_sealing(
    engine: HostEngine,
    *,
    store: str | None = None,
    replicas: int | None = None,
    server: str | None = None,
) -> RequestStateGuard:
    """The requestState guard for one proxy or integration, audited through the engine."""
    ttl = float(engine.policy.identity.get("request_state_ttl_s") or 600.0)
    sealer = RequestStateSealer(
        engine.keys, build_store(engine, store=store, replicas=replicas), ttl_s=ttl
    )
    return RequestStateGuard(sealer, audit=engine.audit, server=server)


def build_auth(
    engine: HostEngine, *, server: str | None = None, introspect: Introspector | None = None
) -> BearerAuth | None:
    """Bearer authentication per the policy, or ``None`` when no audience is configured."""
    return BearerAuth.from_policy(
        engine.policy.identity,
        engine.keys,
        audit=engine.audit,
        server=server,
        introspect=introspect,
    )
