"""elicitguard: a security policy engine for MCP elicitation.

One rule engine used three ways: middleware around a real MCP client or server, a linter
over captured traffic, and this library::

    from elicitguard import Engine, Envelope, Direction, load_policy

    engine = Engine(load_policy("builtin:default"))
    decision = engine.evaluate(frame_bytes, Direction.SERVER_TO_CLIENT, session="conn-1")
    if decision.blocked:
        ...

``Engine.evaluate`` is the one way in: it takes a frame's bytes, the parsed object or an
:class:`Envelope` (and ``aevaluate`` is its async twin).

The names below are the public API; everything else may change between releases.
"""

from elicitguard._version import __version__
from elicitguard.base.decision import (
    Action,
    Confidence,
    Decision,
    Finding,
    Hit,
    Severity,
    Suppressed,
)
from elicitguard.engine.context import CheckContext, CheckFn, check
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy, load_policy
from elicitguard.errors import (
    ElicitguardError,
    FrameError,
    KeyConfigError,
    PackLoadError,
    PolicyError,
    RuleSpecError,
    UnknownRuleError,
)
from elicitguard.protocol.envelope import Direction, Envelope, Side, Transport
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.parsing import parse_frame

__all__ = [
    "Action",
    "CheckContext",
    "CheckFn",
    "Confidence",
    "Decision",
    "Direction",
    "ElicitguardError",
    "Engine",
    "Envelope",
    "Finding",
    "FrameError",
    "Hit",
    "Item",
    "ItemKind",
    "KeyConfigError",
    "PackLoadError",
    "Policy",
    "PolicyError",
    "RuleSpecError",
    "Severity",
    "Side",
    "Suppressed",
    "Transport",
    "UnknownRuleError",
    "__version__",
    "check",
    "load_policy",
    "parse_frame",
]
