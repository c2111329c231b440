"""What a check may look at besides its item: environment, lists, state and caches.

Checks are pure functions ``(item, ctx, params) -> Iterable[Hit]``; they never log and never
change traffic. The context is the only door to anything beyond the item.

A check declares the params it takes as a :class:`CheckParams` model (``@check(name,
params=Model)``); the policy compiler validates every rule's params against it, so a typo
(``langauges``) or a bad value is a load error with file and line, never an EG901 on every
message. A built-in check that declares nothing takes no params; a user's check that
declares nothing gets its params unvalidated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from elicitguard.base.decision import Action, Hit
from elicitguard.protocol.envelope import Envelope, Side
from elicitguard.protocol.items import Item
from elicitguard.protocol.session import SessionState

__all__ = [
    "CheckContext",
    "CheckFn",
    "CheckParams",
    "NoParams",
    "check",
    "get_check",
    "is_pure",
    "params_model",
    "registered_checks",
]


class CheckParams(BaseModel):
    """Base of a check's declared params: unknown keys are errors, values are validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(CheckParams):
    """The params of a check that takes none."""


@dataclass(slots=True)
class CheckContext:
    """The world as one check sees it."""

    envelope: Envelope
    environment: str
    side: Side
    lists: Mapping[str, tuple[str, ...]]
    session: SessionState
    era: str | None
    cache: dict[str, Any] = field(default_factory=dict)
    #: What the integration lends the checks beyond the message: the credential vault
    #: (``vault``, EG603), the policy's ``identity`` settings (EG602). Read-only for checks.
    services: Mapping[str, Any] = field(default_factory=dict)
    #: The action of the rule being run, for this side (set by the engine before each check):
    #: a check may say a session-level fact once while it only warns, never while it blocks.
    action: Action | None = None

    @property
    def server(self) -> str | None:
        """The operator's name for the server (never ``serverInfo``)."""
        return self.envelope.server


CheckFn = Callable[[Item, CheckContext, Mapping[str, Any]], Iterable[Hit]]

_CHECKS: dict[str, CheckFn] = {}
_PURE: set[str] = set()
_PARAMS: dict[str, type[CheckParams]] = {}


def check(
    name: str, *, pure: bool = False, params: type[CheckParams] | None = None
) -> Callable[[CheckFn], CheckFn]:
    """Register a check under the name rule files use in ``check:``.

    ``params`` is the model of the params the check takes (see the module docstring).

    ``pure=True`` promises that the check's hits depend only on what
    :func:`elicitguard.engine.verdicts.item_key` covers: the item's kind, pointer, era,
    method, mode, request mode, declared capability, requested schema, location facts and
    data (of a URL request's ``elicitationId`` only whether it is a non-empty string), and
    the context's environment, lists, server and side (plus the rule's params,
    fixed per policy). Never the session, the envelope's headers or principal, the clock or
    services. The engine then reuses its hits for an identical item instead of running it
    again; a check that breaks the promise would be judged on an earlier message.
    """

    def register(fn: CheckFn) -> CheckFn:
        if name in _CHECKS and _CHECKS[name] is not fn:
            msg = f"check {name!r} is registered twice"
            raise RuntimeError(msg)
        _CHECKS[name] = fn
        if pure:
            _PURE.add(name)
        if params is not None:
            _PARAMS[name] = params
        elif fn.__module__.startswith("elicitguard."):
            _PARAMS[name] = NoParams
        return fn

    return register


def is_pure(name: str) -> bool:
    """Whether the check registered under ``name`` promised to be pure (see :func:`check`)."""
    _load_builtin()
    return name in _PURE


def _load_builtin() -> None:
    # Importing the modules runs their @check decorators.
    from elicitguard.engine import builtin  # noqa: F401


def params_model(name: str) -> type[CheckParams] | None:
    """The params model the check ``name`` declared; ``None``: a user's check declared none."""
    _load_builtin()
    return _PARAMS.get(name)


def registered_checks() -> dict[str, CheckFn]:
    """Every registered check by name."""
    _load_builtin()
    return dict(_CHECKS)


def get_check(name: str) -> CheckFn | None:
    """The check registered under ``name``, if any."""
    _load_builtin()
    return _CHECKS.get(name)
