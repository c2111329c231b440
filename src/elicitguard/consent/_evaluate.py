"""Run one elicitation request through the engine's rules, for a consent view.

Why the engine and not the detection functions directly: the consent screen must say what
the policy says. The same rules (EG2xx, EG3xx, EG4xx and whatever packs the policy adds),
with the same actions, exceptions and environment, decide what the user is warned about and
whether the request is blocked. The request is evaluated as a server-to-client message seen
by the client, in a throw-away session, with a silent audit sink: describing a URL is not a
decision about traffic and leaves no record. Nothing here touches the network.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from elicitguard.audit.sink import AuditSink
from elicitguard.base.decision import Decision
from elicitguard.base.keys import KeyRing
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy, load_policy
from elicitguard.protocol.envelope import Direction, Envelope, Side

__all__ = ["PolicyLike", "evaluate_request", "resolve_policy"]

PolicyLike = Policy | str | os.PathLike[str] | None
_ERA = "2025-11-25"


@lru_cache(maxsize=16)
def _load(source: str | None, env: str | None, env_var: str | None, stamp: float) -> Policy:
    environ = {"ELICITGUARD_ENV": env_var} if env_var else {}
    return load_policy(source, env=env, environ=environ)


def resolve_policy(policy: PolicyLike = None, env: str | None = None) -> Policy:
    """A compiled policy from a :class:`Policy`, a file, ``builtin:NAME`` or ``None``.

    Loaded policies are cached (keyed by the file's modification time), because a client
    describes many URLs under one policy. ``env`` applies when the policy is loaded here;
    a compiled :class:`Policy` already has its environment.
    """
    if isinstance(policy, Policy):
        return policy
    source = None if policy is None else os.fspath(policy)
    stamp = 0.0
    if source is not None and not source.startswith("builtin:"):
        try:
            stamp = Path(source).stat().st_mtime
        except OSError:
            stamp = -1.0
    return _load(source, env, os.environ.get("ELICITGUARD_ENV"), stamp)


def evaluate_request(
    params: dict[str, Any], policy: Policy, *, server: str | None, era: str | None = None
) -> Decision:
    """Evaluate ``elicitation/create`` with ``params`` as the client would receive it."""
    engine = Engine(policy, audit=AuditSink(None), keys=KeyRing.random(), default_era=era or _ERA)
    message: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": "consent-view",
        "method": "elicitation/create",
        "params": params,
    }
    envelope = Envelope(
        message=message,
        direction=Direction.SERVER_TO_CLIENT,
        side=Side.CLIENT,
        session="consent-view",
        server=server,
        protocol_version=era or _ERA,
    )
    return engine.evaluate(envelope)
