"""Classify and extract, in one pass: what the engine learns from one message.

:func:`read` is the only way the engine looks into a message. It decodes no more than the
decision needs, in this order:

1. **Classify** (:func:`classify`, which the engine also calls first, on its own). For a
   message seen without headers or an explicit protocol version (a
   stdio frame, a capture line) and that no ordinary-traffic rule wants to see
   (:meth:`OrdinaryNeeds.quiet`), :func:`~elicitguard.protocol.extract.ordinary_bookkeeping`
   reads the top-level keys (``method``, ``id``, ``result``/``error``) and only then the
   few ``params``/``result`` keys that could make it more than ordinary. When it is
   ordinary, its session bookkeeping is done right there (a request remembered by id, an
   answered request forgotten) and the pass ends: no envelope, no item, no allocation
   beyond the session map's entry, no clock call. The frame's bytes are looked at once,
   and only when they exist: a repeated key that a parser keeping another copy could
   read as elicitation (:func:`~elicitguard.protocol.parsing.may_hide_elicitation`) is
   reported on the reading.
2. **Extract.** Anything else gets its envelope (built here from the caller's fields when
   the caller had none), has lone surrogates replaced as a client would show them, and
   goes through :func:`~elicitguard.protocol.extract.extract`, which finds the items of
   every era and updates the session state. The items ordinary-traffic rules asked for
   (``client_request``, ``server_message``: :class:`OrdinaryNeeds`, compiled by the engine
   from what the enabled rules declare) are added in the same pass. A message that carries
   elicitation and repeats a key is reported too.

The :class:`Reading` says which way the message went; the engine dispatches its items and
never calls back into ``protocol`` for the same message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from elicitguard.errors import FrameError
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.extract import extract, ordinary_bookkeeping
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.parsing import (
    has_colliding_keys,
    may_hide_elicitation,
    object_has_colliding_keys,
)
from elicitguard.protocol.session import SessionState
from elicitguard.protocol.surrogates import may_hold_lone_surrogate, without_lone_surrogates
from elicitguard.protocol.versions import META_PROTOCOL_VERSION, normalise_version

__all__ = ["NO_NEEDS", "ORDINARY", "OrdinaryNeeds", "Reading", "classify", "read"]


class Reading:
    """What one pass over a message found.

    ``ordinary``: no rule needs to run; the session bookkeeping is done. ``items``: what the
    rules judge (empty when ordinary). ``envelope``: the message as judged (``None`` when
    the pass needed none); ``received``: the same before lone surrogates were replaced
    (what an integration rewrites and forwards). ``repeated_key``: the EG904 frame problem when the bytes repeat a
    key where it could matter. ``failure``: the extractor raised (EG901, fails closed).
    ``elicitation``: some item carries elicitation itself (not only bookkeeping).
    """

    __slots__ = (
        "elicitation",
        "envelope",
        "failure",
        "items",
        "ordinary",
        "received",
        "repeated_key",
    )

    def __init__(
        self,
        items: list[Item],
        envelope: Envelope | None = None,
        *,
        ordinary: bool = False,
        repeated_key: FrameError | None = None,
        failure: BaseException | None = None,
        received: Envelope | None = None,
        elicitation: bool = False,
    ) -> None:
        self.items = items
        self.elicitation = elicitation
        self.envelope = envelope
        self.received = received if received is not None else envelope
        self.ordinary = ordinary
        self.repeated_key = repeated_key
        self.failure = failure


#: The reading of most traffic: ordinary, bookkeeping done, nothing built. Shared: never
#: mutate it.
ORDINARY = Reading([], ordinary=True)

_HIDDEN = (
    "an object repeats a key (exactly or once letter case is folded), and a parser "
    "keeping another copy could read elicitation where this one is ordinary"
)
_COLLIDING = "an object repeats a key (exactly or once letter case is folded)"
_C2S = Direction.CLIENT_TO_SERVER


class OrdinaryNeeds:
    """What the enabled ordinary-traffic rules want to see, per side (plain data).

    The engine compiles it from the rules' ``applies_to.ordinary`` declarations
    (:mod:`elicitguard.engine.ordinary`); this pass only reads messages against it.

    * ``client_request`` items (asserted identity, foreign tokens, tokens in the query
      string) are made for a client request only on ``client_sides`` **and** when a cheap
      look finds something to judge: a non-standard ``_meta`` key (``meta``), an identity
      header (``headers``: names in ``identity_headers`` or starting with one of
      ``identity_prefixes``), a query string on ``:path`` (``query``), an
      ``Authorization`` header (``authorization``), or a tool argument in
      ``argument_names``.
    * ``server_message`` items (credentials sent to the client) are made for a
      server-to-client message without elicitation on the sides in ``server_sides``: on
      every message where the value is true, else only while ``services["vault"]`` holds
      something.
    """

    __slots__ = (
        "active",
        "always_quiet",
        "argument_names",
        "authorization",
        "client_sides",
        "headers",
        "identity_headers",
        "identity_prefixes",
        "meta",
        "meta_standard_keys",
        "meta_standard_prefix",
        "query",
        "server_sides",
    )

    def __init__(
        self,
        *,
        client_sides: frozenset[Side] = frozenset(),
        argument_names: frozenset[str] = frozenset(),
        meta: bool = False,
        headers: bool = False,
        query: bool = False,
        authorization: bool = False,
        server_sides: Mapping[Side, bool] | None = None,
        identity_headers: frozenset[str] = frozenset(),
        identity_prefixes: tuple[str, ...] = (),
        meta_standard_keys: frozenset[str] = frozenset(),
        meta_standard_prefix: str = "io.modelcontextprotocol/",
    ) -> None:
        self.client_sides = client_sides
        self.argument_names = argument_names
        self.meta = meta
        self.headers = headers
        self.query = query
        self.authorization = authorization
        self.server_sides: dict[Side, bool] = dict(server_sides or {})
        self.identity_headers = identity_headers
        self.identity_prefixes = identity_prefixes
        self.meta_standard_keys = meta_standard_keys
        self.meta_standard_prefix = meta_standard_prefix
        self.active = bool(self.client_sides or self.server_sides)
        #: (direction, side) pairs on which :meth:`quiet` holds for every message.
        self.always_quiet = frozenset(
            (direction, side)
            for direction in Direction
            for side in Side
            if (
                side not in self.client_sides or not self.argument_names
                if direction is Direction.CLIENT_TO_SERVER
                else side not in self.server_sides
            )
        )

    def quiet(
        self, message: dict[str, Any], direction: Direction, side: Side, services: Mapping[str, Any]
    ) -> bool:
        """True when :meth:`extend` cannot add an item to ``message`` (seen without headers).

        Without headers a client request interests the client-request rules only through
        ``_meta`` (which the classification refuses anyway) or a tool argument a policy names.
        """
        if (direction, side) in self.always_quiet:
            return True
        if direction is _C2S:
            if message.get("method") != "tools/call":
                return True
            params = message.get("params")
            arguments = params.get("arguments") if isinstance(params, dict) else None
            return not (
                isinstance(arguments, dict) and not self.argument_names.isdisjoint(arguments)
            )
        if self.server_sides[side]:
            return False
        vault = services.get("vault")
        return vault is None or not len(vault)

    def extend(
        self,
        envelope: Envelope,
        items: list[Item],
        state: SessionState,
        default_era: str | None,
        services: Mapping[str, Any],
    ) -> list[Item]:
        """``items`` plus the ordinary item this message needs, if any."""
        message = envelope.message
        side = envelope.side
        if envelope.direction is Direction.CLIENT_TO_SERVER:
            if side not in self.client_sides or "id" not in message:
                return items
            method = message.get("method")
            if not isinstance(method, str) or not self._client_interesting(envelope, method):
                return items
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            meta_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
            era = _era(envelope, state, default_era, meta_version)
            return [*items, Item(ItemKind.CLIENT_REQUEST, "", era, message, method=method)]
        scan_all = self.server_sides.get(side)
        if scan_all is None:
            return items
        if not scan_all:
            vault = services.get("vault")
            if vault is None or not len(vault):
                return items
        if any(i.is_elicitation for i in items):
            return items
        era = items[0].era if items else _era(envelope, state, default_era, None)
        method = message.get("method")
        return [
            *items,
            Item(
                ItemKind.SERVER_MESSAGE,
                "",
                era,
                message,
                method=method if isinstance(method, str) else None,
            ),
        ]

    def _client_interesting(self, envelope: Envelope, method: str) -> bool:
        headers = envelope.headers
        if headers:
            path = headers.get(":path")
            if self.query and path is not None and "?" in path:
                return True
            if self.authorization and "authorization" in headers:
                return True
            if self.headers:
                for name in headers:
                    if name in self.identity_headers or name.startswith(self.identity_prefixes):
                        return True
        params = envelope.message.get("params")
        if not isinstance(params, dict):
            return False
        meta = params.get("_meta")
        if self.meta and isinstance(meta, dict):
            for key in meta:
                if not (
                    isinstance(key, str)
                    and (
                        key.startswith(self.meta_standard_prefix) or key in self.meta_standard_keys
                    )
                ):
                    return True
        if self.argument_names and method == "tools/call":
            arguments = params.get("arguments")
            if isinstance(arguments, dict) and not self.argument_names.isdisjoint(arguments):
                return True
        return False


#: A policy without ordinary-traffic rules.
NO_NEEDS = OrdinaryNeeds()


def read(
    message: dict[str, Any],
    direction: Direction,
    state: SessionState,
    default_era: str | None = None,
    *,
    side: Side = Side.CAPTURE,
    session: str | None = None,
    envelope: Envelope | None = None,
    context: Mapping[str, Any] | None = None,
    needs: OrdinaryNeeds = NO_NEEDS,
    services: Mapping[str, Any] | None = None,
    classified: bool | None = None,
) -> Reading:
    """Classify ``message`` and, unless it is ordinary, extract its items (see the module).

    ``envelope`` is the caller's envelope when it has one; otherwise one is built here from
    ``side``, ``session`` and ``context`` (the other :class:`Envelope` fields), and only
    when the message is not ordinary. ``state`` is the session's state, updated.
    ``classified`` is the answer of :func:`classify` when the caller already ran it on
    this message and state (the engine's fast route): the classification is not repeated.
    """
    services = services if services is not None else {}
    if envelope is not None:
        raw = envelope.raw
        plain = not envelope.headers and envelope.protocol_version is None
    else:
        raw = context.get("raw") if context else None
        plain = not context or (
            not context.get("headers") and context.get("protocol_version") is None
        )
    # 1. classify
    if classified is None:
        classified = plain and classify(
            message, direction, side, state, default_era, needs, services
        )
    if classified:
        if raw is None or not may_hide_elicitation(raw):
            return ORDINARY
        if envelope is None:
            envelope = Envelope(message, direction, side=side, session=session, **(context or {}))
        return Reading(
            [], envelope, ordinary=True, repeated_key=FrameError("duplicate_keys", _HIDDEN)
        )
    # 2. extract
    if envelope is None:
        envelope = Envelope(message, direction, side=side, session=session, **(context or {}))
    received = envelope
    if raw is None or may_hold_lone_surrogate(raw):
        # Checks judge what a client shows: U+FFFD where JSON held a lone surrogate.
        clean = without_lone_surrogates(envelope.message)
        if clean is not envelope.message:
            envelope = dataclasses.replace(envelope, message=clean)
    try:
        items = extract(envelope, state, default_era)
    except Exception as exc:
        return Reading([], envelope, failure=exc, received=received)
    if needs.active:
        items = needs.extend(envelope, items, state, default_era, services)
    if not items:
        if raw is not None and may_hide_elicitation(raw):
            error = FrameError("duplicate_keys", _HIDDEN)
            return Reading([], envelope, ordinary=True, repeated_key=error, received=received)
        return Reading([], envelope, ordinary=True, received=received)
    repeated: FrameError | None = None
    elicitation = any(i.is_elicitation for i in items)
    if elicitation and (
        has_colliding_keys(raw) if raw is not None else object_has_colliding_keys(envelope.message)
    ):
        # Without the bytes, exact repeats are gone; keys that collide once folded remain.
        repeated = FrameError("duplicate_keys", _COLLIDING)
    return Reading(
        items, envelope, repeated_key=repeated, received=received, elicitation=elicitation
    )


def classify(
    message: dict[str, Any],
    direction: Direction,
    side: Side,
    state: SessionState,
    default_era: str | None,
    needs: OrdinaryNeeds,
    services: Mapping[str, Any],
) -> bool:
    """The fast route: ``True`` when ``message`` (seen without headers or an explicit
    protocol version) is ordinary, its session bookkeeping done; ``False`` leaves ``state``
    for extraction (see :func:`~elicitguard.protocol.extract.ordinary_bookkeeping`).

    It never raises: a message the bookkeeping cannot read is extraction's to judge (and to
    record as a failure). The repeated-key look at the frame's bytes is the caller's.
    """
    # OrdinaryNeeds.quiet, inlined: this runs on every message.
    if direction is _C2S:
        if (
            needs.argument_names
            and side in needs.client_sides
            and not needs.quiet(message, direction, side, services)
        ):
            return False
    else:
        scan_all = needs.server_sides.get(side)
        if scan_all is not None:
            if scan_all:
                return False
            vault = services.get("vault")
            if vault is not None and len(vault):
                return False
    try:
        return ordinary_bookkeeping(message, direction, state, default_era)
    except Exception:  # extraction meets it again and records the failure
        return False


def _era(envelope: Envelope, state: SessionState, default: str | None, meta: Any) -> str | None:
    return (
        normalise_version(meta)
        or normalise_version(envelope.protocol_version)
        or state.era
        or default
    )
