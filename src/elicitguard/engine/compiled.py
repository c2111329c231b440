"""A compiled policy as the engine uses it: layers, limits, exceptions, rules, dispatch.

:func:`elicitguard.engine.policy.load_policy` builds these once; evaluation reads them and
never looks at YAML again.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from elicitguard.base.decision import Action, Confidence, Severity
from elicitguard.engine.context import CheckFn
from elicitguard.engine.match import Predicate
from elicitguard.engine.models import (
    ExceptionSpec,
    PolicySpec,
)
from elicitguard.engine.rules import LoadedRule
from elicitguard.engine.yamlfile import LineMap
from elicitguard.protocol.envelope import Direction, Side
from elicitguard.protocol.items import ItemKind

PRESETS = ("default", "strict", "dev", "monitor", "passthrough")
#: Lists whose entries are hosts (names, ``*.suffix``, IPs, CIDRs), validated at load.
HOST_LISTS = frozenset({"dev_hosts", "protected_domains", "allowed_hosts", "server_domains"})
DEFAULT_LISTS: dict[str, tuple[str, ...]] = {
    "dev_hosts": ("localhost", "127.0.0.0/8", "::1"),
    "protected_domains": (),
}
ENVIRONMENTS = ("dev", "test", "prod")


@dataclass(frozen=True, slots=True)
class Layer:
    """One policy file (or preset) in the stack."""

    spec: PolicySpec
    file: str
    lines: LineMap
    folder: Path
    raw: Any


@dataclass(frozen=True, slots=True)
class Limits:
    """Resolved limits (every value set)."""

    max_message_bytes: int = 4 * 1024 * 1024
    max_depth: int = 64
    bad_frames: str = "drop"
    state_ttl_s: float = 900.0
    state_max_sessions: int = 10_000
    elicitations_per_minute: int | None = None
    unlabelled_jsonrpc: str = "refuse"


@dataclass(slots=True)
class PolicyException:
    """An exception with its place in the files, and how often it was used."""

    spec: ExceptionSpec
    file: str
    line: int | None
    index: int
    uses: int = 0

    def expired(self, today: dt.date) -> bool:
        return self.spec.expires is not None and self.spec.expires < today

    def matches(self, code: str, server: str | None) -> bool:
        if not any(fnmatch.fnmatchcase(code, pattern) for pattern in self.spec.rules):
            return False
        wanted = self.spec.where.server
        if wanted is None:
            return True
        return server is not None and fnmatch.fnmatchcase(server, wanted)


@dataclass(slots=True)
class CompiledRule:
    """A rule resolved under a policy: effective action per side, params, the check."""

    code: str
    name: str
    severity: Severity
    confidence: Confidence
    actions: dict[Side, Action | None]
    params: dict[str, Any]
    check: CheckFn | None
    match: Predicate | None
    engine_only: bool
    items: frozenset[ItemKind]
    eras: frozenset[str] | None
    directions: frozenset[Direction] | None
    message: str
    requirements: tuple[str, ...]
    cwe: tuple[str, ...]
    fix: str
    loaded: LoadedRule
    #: The check promised its hits depend only on the item (``@check(..., pure=True)``),
    #: so the engine may reuse them for an identical item (engine/verdicts.py).
    pure: bool = False

    def action_for(self, side: Side) -> Action | None:
        return self.actions.get(side)


@dataclass(slots=True)
class Policy:
    """A compiled policy: what every evaluation needs, resolved once."""

    name: str
    revision: str
    environment: str
    mode: str
    on_error: str
    on_block_client: str
    push_error_code: int
    rules: dict[str, CompiledRule]
    lists: dict[str, tuple[str, ...]]
    exceptions: list[PolicyException]
    limits: Limits
    layers: list[Layer]
    keys_file: str | None = None
    keys_env: str | None = None
    audit_sink: str = "stderr"
    audit_file: str | None = None
    audit_chain: bool = False
    audit_queue: int = 8192
    audit_when_full: Literal["block", "count"] = "block"
    sample_allow: float = 1.0
    identity: dict[str, Any] = field(default_factory=dict)
    client_modes: tuple[str, ...] = ("form", "url")
    dispatch: dict[tuple[ItemKind, Side], list[CompiledRule]] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """The file (or preset) the policy was loaded from."""
        return self.layers[-1].file if self.layers else "builtin:default"

    def rule(self, code: str) -> CompiledRule | None:
        return self.rules.get(code)

    def rules_for(self, kind: ItemKind, side: Side) -> list[CompiledRule]:
        return self.dispatch.get((kind, side), [])
