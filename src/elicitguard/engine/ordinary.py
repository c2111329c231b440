"""Items from ordinary traffic, made only when the compiled policy needs them.

The extractor finds elicitation; most messages have none and take the fast path. A few
identity and token rules must look at ordinary messages too. What each needs is declared
in its rule file (``applies_to.ordinary``, see :class:`~elicitguard.engine.models.AppliesTo`),
and this plan is the union of what the enabled rules declare; today's built-in rules:

* ``client_request`` items (EG502 asserted identity, EG602 foreign tokens, EG604 tokens in
  the query string) are made for a client request only when a rule for them is enabled on
  this side **and** a cheap look finds something to judge: an identity-named ``_meta`` key,
  an identity header, a query string on the request target (the ``:path`` pseudo-header),
  an ``Authorization`` header when the policy names this server's audience, or a tool
  argument a policy names. Everything else stays on the fast path.
* ``server_message`` items (EG603, third-party credentials sent to the client) are made for
  a server-to-client message without elicitation only when a rule for them is enabled on
  this side **and** either the credential vault holds something or the rule asks to scan
  every message (``params: {catalogue: true}``). With an empty vault and the default
  parameters, results and errors never leave the fast path.

:class:`OrdinaryPlan` is compiled once per engine from the policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from elicitguard.checks.identity import IDENTITY_HEADERS, META_STANDARD_KEYS, META_STANDARD_PREFIX
from elicitguard.engine.models import OrdinaryNeed
from elicitguard.engine.policy import CompiledRule, Policy
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.items import Item, ItemKind
from elicitguard.protocol.session import SessionState
from elicitguard.protocol.versions import META_PROTOCOL_VERSION, normalise_version

__all__ = ["OrdinaryPlan"]


class OrdinaryPlan:
    """Which ordinary items this policy wants, per side; consulted on every message."""

    __slots__ = (
        "active",
        "argument_names",
        "authorization",
        "client_sides",
        "headers",
        "meta",
        "query",
        "server_sides",
    )

    def __init__(self, policy: Policy) -> None:
        self.client_sides = frozenset(
            side for side in Side if policy.rules_for(ItemKind.CLIENT_REQUEST, side)
        )
        needs: set[str] = set()
        names: set[str] = set()
        for side in self.client_sides:
            for rule in policy.rules_for(ItemKind.CLIENT_REQUEST, side):
                for need, switch in _declared(rule).items():
                    if need == "named_arguments":
                        listed = rule.params.get(switch) if isinstance(switch, str) else None
                        names.update(str(n) for n in listed or ())
                    else:
                        needs.add(need)
        self.argument_names = frozenset(names)
        self.meta = "identity_meta" in needs
        self.headers = "identity_headers" in needs
        self.query = "query_string" in needs
        self.authorization = "authorization" in needs and bool(
            policy.identity.get("audience") or policy.identity.get("issuers")
        )
        #: side -> True when a rule scans every server message, False when only a
        #: non-empty vault turns the scan on.
        self.server_sides: dict[Side, bool] = {}
        for side in Side:
            rules = policy.rules_for(ItemKind.SERVER_MESSAGE, side)
            declared = [_declared(r) for r in rules]
            if any("vault_credentials" in d or "every_message" in d for d in declared):
                self.server_sides[side] = any(
                    _switched_on(rule, d.get("every_message"))
                    for rule, d in zip(rules, declared, strict=True)
                )
        self.active = bool(self.client_sides or self.server_sides)

    def always_quiet(self, direction: Direction, side: Side) -> bool:
        """True when :meth:`quiet` is true for every message of this direction and side."""
        if direction is Direction.CLIENT_TO_SERVER:
            return side not in self.client_sides or not self.argument_names
        return side not in self.server_sides

    def quiet(
        self,
        message: dict[str, Any],
        direction: Direction,
        side: Side,
        services: Mapping[str, Any],
    ) -> bool:
        """True when :meth:`extend` cannot add an item to ``message`` (an envelope without headers).

        Then an ordinary message may skip extraction altogether (the engine's fast route,
        which itself refuses any request carrying ``_meta``). Without headers a client
        request interests the client-request rules only through ``_meta`` or a tool argument
        the policy names.
        """
        if direction is Direction.CLIENT_TO_SERVER:
            if side not in self.client_sides or not self.argument_names:
                return True
            if message.get("method") != "tools/call":
                return True
            params = message.get("params")
            arguments = params.get("arguments") if isinstance(params, dict) else None
            return not (
                isinstance(arguments, dict) and not self.argument_names.isdisjoint(arguments)
            )
        scan_all = self.server_sides.get(side)
        if scan_all is None:
            return True
        if scan_all:
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
                    if name in IDENTITY_HEADERS or name.startswith("x-user-"):
                        return True
        params = envelope.message.get("params")
        if not isinstance(params, dict):
            return False
        meta = params.get("_meta")
        if self.meta and isinstance(meta, dict):
            for key in meta:
                if not (
                    isinstance(key, str)
                    and (key.startswith(META_STANDARD_PREFIX) or key in META_STANDARD_KEYS)
                ):
                    return True
        if self.argument_names and method == "tools/call":
            arguments = params.get("arguments")
            if isinstance(arguments, dict) and not self.argument_names.isdisjoint(arguments):
                return True
        return False


def _declared(rule: CompiledRule) -> Mapping[OrdinaryNeed, Literal[True] | str]:
    """What ``rule`` declared it needs from ordinary traffic (its ``applies_to.ordinary``)."""
    return rule.loaded.spec.applies_to.ordinary


def _switched_on(rule: CompiledRule, switch: object) -> bool:
    """A declared need is on when it is ``true`` or names a param the rule sets truthy."""
    return switch is True or (isinstance(switch, str) and bool(rule.params.get(switch)))


def _era(envelope: Envelope, state: SessionState, default: str | None, meta: Any) -> str | None:
    return (
        normalise_version(meta)
        or normalise_version(envelope.protocol_version)
        or state.era
        or default
    )
