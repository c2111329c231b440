"""What the policy wants from ordinary traffic, compiled once per engine.

The extractor finds elicitation; most messages have none and end at the classification
step of :func:`elicitguard.protocol.reading.read`. A few identity and token rules must look
at ordinary messages too. What each needs is declared in its rule file
(``applies_to.ordinary``, see :class:`~elicitguard.engine.models.AppliesTo`), and
:func:`ordinary_needs` is the union of what the enabled rules declare, as the plain
:class:`~elicitguard.protocol.reading.OrdinaryNeeds` the protocol pass reads messages
against. Today's built-in rules:

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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from elicitguard.checks.identity import IDENTITY_HEADERS, META_STANDARD_KEYS, META_STANDARD_PREFIX
from elicitguard.engine.models import OrdinaryNeed
from elicitguard.engine.policy import CompiledRule, Policy
from elicitguard.protocol.envelope import Side
from elicitguard.protocol.items import ItemKind
from elicitguard.protocol.reading import OrdinaryNeeds

__all__ = ["ordinary_needs"]


def ordinary_needs(policy: Policy) -> OrdinaryNeeds:
    """Which ordinary items ``policy`` wants, per side."""
    client_sides = frozenset(
        side for side in Side if policy.rules_for(ItemKind.CLIENT_REQUEST, side)
    )
    needs: set[str] = set()
    names: set[str] = set()
    for side in client_sides:
        for rule in policy.rules_for(ItemKind.CLIENT_REQUEST, side):
            for need, switch in _declared(rule).items():
                if need == "named_arguments":
                    listed = rule.params.get(switch) if isinstance(switch, str) else None
                    names.update(str(n) for n in listed or ())
                else:
                    needs.add(need)
    #: side -> True when a rule scans every server message, False when only a non-empty
    #: vault turns the scan on.
    server_sides: dict[Side, bool] = {}
    for side in Side:
        rules = policy.rules_for(ItemKind.SERVER_MESSAGE, side)
        declared = [_declared(r) for r in rules]
        if any("vault_credentials" in d or "every_message" in d for d in declared):
            server_sides[side] = any(
                _switched_on(rule, d.get("every_message"))
                for rule, d in zip(rules, declared, strict=True)
            )
    return OrdinaryNeeds(
        client_sides=client_sides,
        argument_names=frozenset(names),
        meta="identity_meta" in needs,
        headers="identity_headers" in needs,
        query="query_string" in needs,
        authorization="authorization" in needs
        and bool(policy.identity.get("audience") or policy.identity.get("issuers")),
        server_sides=server_sides,
        identity_headers=IDENTITY_HEADERS,
        identity_prefixes=("x-user-",),
        meta_standard_keys=META_STANDARD_KEYS,
        meta_standard_prefix=META_STANDARD_PREFIX,
    )


def _declared(rule: CompiledRule) -> Mapping[OrdinaryNeed, Literal[True] | str]:
    """What ``rule`` declared it needs from ordinary traffic (its ``applies_to.ordinary``)."""
    return rule.loaded.spec.applies_to.ordinary


def _switched_on(rule: CompiledRule, switch: object) -> bool:
    """A declared need is on when it is ``true`` or names a param the rule sets truthy."""
    return switch is True or (isinstance(switch, str) and bool(rule.params.get(switch)))
