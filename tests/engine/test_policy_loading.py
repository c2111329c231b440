"""Policy files: presets, extends, environments, exceptions, and errors that say where and what."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from elicitguard.base.decision import Action
from elicitguard.engine.policy import PRESETS, load_policy
from elicitguard.errors import PackLoadError, PolicyError, RuleSpecError, UnknownRuleError
from elicitguard.protocol.envelope import Side


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_loads(preset: str) -> None:
    """Each preset compiles and names itself."""
    policy = load_policy(f"builtin:{preset}", environ={})
    assert preset == policy.name
    assert policy.rules


def test_default_preset_blocks_undeclared_modes_and_logs_low() -> None:
    """The default preset keeps each rule's default action."""
    policy = load_policy(environ={})
    assert policy.rules["EG102"].action_for(Side.PROXY) == Action.BLOCK
    assert policy.environment == "prod"
    assert policy.mode == "enforce"


def test_monitor_and_passthrough_never_enforce() -> None:
    """monitor keeps decisions; passthrough logs everything."""
    assert load_policy("builtin:monitor", environ={}).mode == "monitor"
    passthrough = load_policy("builtin:passthrough", environ={})
    assert {Action.LOG} == {a for r in passthrough.rules.values() for a in r.actions.values() if a}


def test_unknown_key_names_line_and_suggestion(tmp_path: Path) -> None:
    """A typo is an error with the file, the line and what was meant."""
    path = write(
        tmp_path,
        "p.yaml",
        """\
        name: mine
        rules:
          EG102: {actoin: warn}
        """,
    )
    with pytest.raises(RuleSpecError) as info:
        load_policy(path, environ={})
    text = str(info.value)
    assert f"{path}:3:" in text
    assert "did you mean 'action'?" in text


def test_unknown_rule_code_suggests_the_closest(tmp_path: Path) -> None:
    """EG1O2 (letter O) is not a rule; EG102 is."""
    path = write(tmp_path, "p.yaml", "rules:\n  EG1O2: {action: warn}\n")
    with pytest.raises(UnknownRuleError) as info:
        load_policy(path, environ={})
    assert "did you mean EG102?" in str(info.value)
    assert ":2:" in str(info.value)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    """Broken YAML says where."""
    path = write(tmp_path, "p.yaml", "name: x\nrules: [\n  unclosed\n")
    with pytest.raises(PackLoadError) as info:
        load_policy(path, environ={})
    assert "an unclosed [ or {" in str(info.value)
    assert str(path) in str(info.value)


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    """Anchors and aliases are refused before anything expands."""
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(
            f"{cur}: &{cur} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]"
        )
    path = write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    started = time.monotonic()
    with pytest.raises(PackLoadError) as info:
        load_policy(path, environ={})
    assert time.monotonic() - started < 5
    assert "aliases" in str(info.value)


def test_python_tags_are_refused(tmp_path: Path) -> None:
    """Safe loading only: no arbitrary object construction."""
    path = write(tmp_path, "p.yaml", "name: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(PackLoadError):
        load_policy(path, environ={})


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    """Which copy wins differs between parsers, so neither does."""
    path = write(tmp_path, "p.yaml", "name: a\nname: b\n")
    with pytest.raises(PackLoadError) as info:
        load_policy(path, environ={})
    assert ":2:" in str(info.value)


def test_extends_relative_and_builtin(tmp_path: Path) -> None:
    """A child extends a sibling file and a preset; the child's values win."""
    write(
        tmp_path,
        "base.yaml",
        "extends: ['builtin:strict']\nname: base\nlists: {protected_domains: [bank.example]}\n",
    )
    child = write(
        tmp_path,
        "child.yaml",
        "extends: [base.yaml]\nname: child\nlists: {protected_domains: [corp.example]}\n",
    )
    policy = load_policy(child, environ={})
    assert policy.name == "child"
    assert policy.lists["protected_domains"] == ("bank.example", "corp.example")
    assert policy.rules["EG104"].action_for(Side.SERVER) == Action.BLOCK


def test_extends_cycle_is_refused(tmp_path: Path) -> None:
    """a -> b -> a is an error naming the chain."""
    write(tmp_path, "a.yaml", "extends: [b.yaml]\n")
    path = write(tmp_path, "b.yaml", "extends: [a.yaml]\n")
    with pytest.raises(PolicyError) as info:
        load_policy(path, environ={})
    assert "cycle" in str(info.value)


def test_extends_outside_the_folder_is_refused(tmp_path: Path) -> None:
    """Parents stay under the policy's folder."""
    write(tmp_path, "outside.yaml", "name: o\n")
    path = write(tmp_path / "inner", "p.yaml", "extends: [../outside.yaml]\n")
    with pytest.raises(PolicyError) as info:
        load_policy(path, environ={})
    assert "leaves the policy's folder" in str(info.value)


def test_extends_depth_limit(tmp_path: Path) -> None:
    """At most four levels of extends."""
    for i in range(6):
        write(tmp_path, f"p{i}.yaml", f"extends: [p{i + 1}.yaml]\n" if i < 5 else "name: last\n")
    with pytest.raises(PolicyError) as info:
        load_policy(tmp_path / "p0.yaml", environ={})
    assert "deeper" in str(info.value)


def test_final_rule_cannot_be_loosened(tmp_path: Path) -> None:
    """A child may tighten a final rule, never loosen it, not even through a glob."""
    write(tmp_path, "base.yaml", "rules:\n  EG104: {action: block, final: true}\n")
    loose = write(tmp_path, "loose.yaml", "extends: [base.yaml]\nrules:\n  'EG1*': {action: log}\n")
    with pytest.raises(RuleSpecError) as info:
        load_policy(loose, environ={})
    assert "final" in str(info.value)
    assert ":3:" in str(info.value)
    tight = write(
        tmp_path, "tight.yaml", "extends: [base.yaml]\nrules:\n  EG104: {severity: critical}\n"
    )
    assert load_policy(tight, environ={}).rules["EG104"].severity.value == "critical"


def test_environment_overlay_and_override(tmp_path: Path) -> None:
    """environments.dev applies only in dev; --env beats ELICITGUARD_ENV beats the file."""
    path = write(
        tmp_path,
        "p.yaml",
        "environment: test\nenvironments:\n  dev: {rules: {EG104: {action: 'off'}}}\n",
    )
    assert load_policy(path, environ={}).environment == "test"
    assert load_policy(path, environ={"ELICITGUARD_ENV": "dev"}).environment == "dev"
    dev = load_policy(path, env="dev", environ={"ELICITGUARD_ENV": "prod"})
    assert dev.rules["EG104"].action_for(Side.CLIENT) is None
    assert (
        load_policy(path, env="prod", environ={}).rules["EG104"].action_for(Side.CLIENT) is not None
    )


def test_reserved_error_codes_are_refused(tmp_path: Path) -> None:
    """A block must never answer with a code the spec reserves."""
    path = write(tmp_path, "p.yaml", "on_block: {push_error_code: -32042}\n")
    with pytest.raises(RuleSpecError) as info:
        load_policy(path, environ={})
    assert "-31001" in str(info.value)


def test_exception_needs_a_reason(tmp_path: Path) -> None:
    """An exception without a reason is an error."""
    path = write(tmp_path, "p.yaml", "exceptions:\n  - {rules: [EG104]}\n")
    with pytest.raises(RuleSpecError) as info:
        load_policy(path, environ={})
    assert "reason" in str(info.value)


def test_select_and_ignore() -> None:
    """--select keeps only matching rules on; --ignore turns matching rules off."""
    selected = load_policy(select=["EG10*"], environ={})
    assert selected.rules["EG101"].action_for(Side.CAPTURE) is not None
    assert selected.rules["EG112"].action_for(Side.CAPTURE) is None
    ignored = load_policy(ignore=["EG101"], environ={})
    assert ignored.rules["EG101"].action_for(Side.CAPTURE) is None


def test_user_pack_with_match_rule(tmp_path: Path) -> None:
    """A user pack with its own prefix and a declarative match loads and dispatches."""
    write(
        tmp_path,
        "pack/ACME001-no-http-ftp.yaml",
        """\
        code: ACME001
        name: no-http-ftp
        summary: URL requests must not point at ftp hosts
        severity: high
        action: block
        applies_to: {items: [url_request]}
        match: {field: url.host, glob: "ftp.*"}
        message: "ftp host in a URL request"
        docs:
          why: FTP hosts are not ours.
          fix: Use https.
          example:
            expect: ruleid
            note: ftp host
            protocol_version: "2025-11-25"
            message: {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://ftp.example.com/x", "elicitationId": "e"}}
        """,
    )
    path = write(tmp_path, "p.yaml", "packs: [pack]\nrules:\n  ACME001: {action: warn}\n")
    policy = load_policy(path, environ={})
    assert policy.rules["ACME001"].action_for(Side.CLIENT) == Action.WARN


def test_user_pack_may_not_use_the_eg_prefix(tmp_path: Path) -> None:
    """EG is reserved for built-in rules."""
    write(
        tmp_path,
        "pack/EG999-mine.yaml",
        "code: EG999\nname: mine\nsummary: s\nseverity: low\naction: log\napplies_to: {items: [url_request]}\nmatch: {field: url.host, equals: x}\nmessage: m\ndocs: {why: w, fix: f, example: {expect: ruleid, note: n, message: {}}}\n",
    )
    path = write(tmp_path, "p.yaml", "packs: [pack]\n")
    with pytest.raises(RuleSpecError) as info:
        load_policy(path, environ={})
    assert "reserved" in str(info.value)


def test_bad_regex_in_match_is_refused(tmp_path: Path) -> None:
    """Lookaround is not RE2 (it would need backtracking): refused at load time."""
    write(
        tmp_path,
        "pack/ACME002-bad-regex.yaml",
        "code: ACME002\nname: bad-regex\nsummary: s\nseverity: low\naction: log\napplies_to: {items: [url_request]}\nmatch: {field: url.host, regex: '(?=lookahead)'}\nmessage: m\ndocs: {why: w, fix: f, example: {expect: ruleid, note: n, message: {}}}\n",
    )
    path = write(tmp_path, "p.yaml", "packs: [pack]\n")
    with pytest.raises(RuleSpecError) as info:
        load_policy(path, environ={})
    assert "RE2" in str(info.value)


@pytest.mark.parametrize("entry", ["300.1.1.1/8", "host name with spaces", "http://x.example", "-bad-.example"])
def test_host_lists_are_validated(tmp_path: Path, entry: str) -> None:
    """A host list entry that is neither a host, a *.suffix, an IP nor a CIDR is an error with its line."""
    path = write(tmp_path, "p.yaml", f"lists:\n  dev_hosts:\n    - localhost\n    - '{entry}'\n")
    with pytest.raises(RuleSpecError) as info:
        load_policy(path, environ={})
    assert ":4:" in str(info.value)


def test_host_lists_accept_names_patterns_ips_and_cidrs(tmp_path: Path) -> None:
    """The documented forms all load."""
    path = write(tmp_path, "p.yaml", "lists:\n  dev_hosts: [localhost, '*.corp.example', 10.0.0.0/8, '::1', bücher.example]\n")
    assert "10.0.0.0/8" in load_policy(path, environ={}).lists["dev_hosts"]


def test_rule_glob_that_matches_nothing_is_an_error(tmp_path: Path) -> None:
    """A glob must select at least one rule (a typo otherwise silently does nothing)."""
    path = write(tmp_path, "p.yaml", "rules:\n  'EG8*': {action: warn}\n")
    with pytest.raises(RuleSpecError) as info:
        load_policy(path, environ={})
    assert "matches no rule" in str(info.value)
    assert ":2:" in str(info.value)
