"""What a rule needs from ordinary traffic is declared in its YAML (applies_to.ordinary).

Before, the triggers lived in engine/ordinary.py by rule, and a new rule on
``client_request`` or ``server_message`` items that nobody added there never fired.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elicitguard.engine.ordinary import ordinary_needs
from elicitguard.engine.policy import load_policy
from elicitguard.engine.rules import builtin_rules, load_pack
from elicitguard.errors import RuleSpecError
from elicitguard.protocol.items import ItemKind

RULE = """\
code: ACME001
name: user-header
summary: A client request carries a user header
severity: medium
confidence: medium
action: warn
applies_to:
  items: [client_request]
{ordinary}match: {{field: method, equals: tools/call}}
message: "m"
docs: {{why: "w", example: {{expect: ok, note: n, message: {{}}}}, fix: "f"}}
"""


def test_every_builtin_rule_on_ordinary_items_declares_its_needs() -> None:
    """The four built-in rules on ordinary items each say what they need."""
    declared = {
        r.spec.code: dict(r.spec.applies_to.ordinary)
        for r in builtin_rules()
        if {ItemKind.CLIENT_REQUEST, ItemKind.SERVER_MESSAGE} & set(r.spec.applies_to.items)
    }
    assert declared == {
        "EG502": {"identity_meta": True, "identity_headers": True, "named_arguments": "arguments"},
        "EG602": {"authorization": True},
        "EG603": {"vault_credentials": True, "every_message": "catalogue"},
        "EG604": {"query_string": True},
    }


def test_a_rule_on_ordinary_items_without_a_declaration_is_refused(tmp_path: Path) -> None:
    """Forgetting the declaration is a load error, not a rule that silently never fires."""
    (tmp_path / "ACME001-user-header.yaml").write_text(RULE.format(ordinary=""))
    with pytest.raises(RuleSpecError, match=r"applies_to\.ordinary"):
        load_pack(tmp_path)
    (tmp_path / "ACME001-user-header.yaml").write_text(
        RULE.format(ordinary="  ordinary: {identity_headers: true}\n")
    )
    assert [r.spec.code for r in load_pack(tmp_path)] == ["ACME001"]


def test_the_plan_is_the_union_of_what_enabled_rules_declare() -> None:
    """Only EG604 on: query strings make items, _meta keys and headers do not."""
    everything = ordinary_needs(load_policy(environ={}))
    assert (everything.meta, everything.headers, everything.query) == (True, True, True)
    only_query = ordinary_needs(load_policy(environ={}, select=["EG604"]))
    assert (only_query.meta, only_query.headers, only_query.query) == (False, False, True)
    assert not only_query.server_sides
    catalogue = ordinary_needs(
        load_policy(
            environ={}, extra_layers=[{"rules": {"EG603": {"params": {"catalogue": True}}}}]
        )
    )
    assert set(catalogue.server_sides.values()) == {True}
    assert set(everything.server_sides.values()) == {False}
