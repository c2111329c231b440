"""What the identity features need from the engine that hosts them, as a protocol.

The egress guard, the URL binder and the identity setup run *inside* an engine: they read its
policy's ``identity`` section, its keys and audit log, register services, and hand the items
they build in process (``outbound_call``, ``url_binding``) to ``evaluate(envelope,
items=...)``, the engine's one way in. Naming that need here, instead of importing
:class:`~elicitguard.engine.engine.Engine`, keeps ``identity`` below ``engine`` in the layering (tests/test_layering.py): the engine uses the identity
primitives (principals, tokens), and the identity features use any engine-shaped object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from elicitguard.audit.records import AuditLog
from elicitguard.base.decision import Decision
from elicitguard.base.keys import KeyRing
from elicitguard.protocol.envelope import Envelope
from elicitguard.protocol.items import Item

__all__ = ["HostEngine", "HostPolicy"]


class HostPolicy(Protocol):
    """The part of a compiled policy the identity features read."""

    @property
    def identity(self) -> Mapping[str, Any]:
        """The policy's ``identity:`` section (audience, store, TTLs, token settings)."""
        ...


class HostEngine(Protocol):
    """An engine as the identity features see it (:class:`elicitguard.engine.engine.Engine`)."""

    @property
    def policy(self) -> HostPolicy:
        """The compiled policy."""
        ...

    @property
    def keys(self) -> KeyRing:
        """The key ring for fingerprints, sealing and binding."""
        ...

    @property
    def audit(self) -> AuditLog:
        """The audit log decisions and identity events are written to."""
        ...

    @property
    def services(self) -> dict[str, Any]:
        """What checks may use beyond the message; the egress guard adds its vault."""
        ...

    def evaluate(self, message: Envelope, *, items: Sequence[Item] | None = None) -> Decision:
        """Decide about a message; ``items``: items built in process rather than read from it."""
        ...
