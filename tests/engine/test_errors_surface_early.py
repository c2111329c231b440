"""Policy mistakes are load errors with file and line, found in one pass; none surfaces late.

The late-error bugs these pin: a params typo loaded fine and turned every form into EG901;
URL rules fell back to defaults on a bad value; an exception naming an unknown rule passed
validation; an engine fixed "today" at construction, so a long-running proxy never expired
an exception; ``action: off`` was YAML 1.1's false; a bad regex printed RE2's log first.
"""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

import pytest

from elicitguard.cli import main
from elicitguard.engine.policy import load_policy
from elicitguard.errors import PackLoadError, PolicyError, RuleSpecError, UnknownRuleError
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.testing import quiet_engine


def _policy(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def _load_error(path: Path) -> PolicyError:
    with pytest.raises(PolicyError) as info:
        load_policy(path, environ={})
    return info.value


def test_a_params_typo_is_a_load_error_with_file_and_line(tmp_path: Path) -> None:
    """`langauges` names the file, its line and the key meant; no engine is built."""
    path = _policy(
        tmp_path,
        """
        extends: [builtin:default]
        rules:
          EG201:
            params:
              langauges: [en]
        """,
    )
    error = _load_error(path)
    assert isinstance(error, RuleSpecError)
    assert str(error).startswith(f"{path}:5: EG201")
    assert "did you mean 'languages'?" in str(error)


@pytest.mark.parametrize(
    ("rule", "params", "words"),
    [
        ("EG301", "{allow_http_loopback_in: [development]}", "allow_http_loopback_in"),
        ("EG302", "{max_length: -1}", "max_length"),
        ("EG302", "{max_length: long}", "max_length"),
        ("EG303", "{oauth_code_action: maybe}", "oauth_code_action"),
        ("EG602", "{audience: [a, b]}", "audience"),
        ("EG123", "{window_s: 0}", "window_s"),
        ("EG305", "{anything: 1}", "unknown key 'anything'"),  # a check that takes none
    ],
)
def test_url_and_other_rules_refuse_bad_values(
    tmp_path: Path, rule: str, params: str, words: str
) -> None:
    """A bad value is an error at load, never a silent fallback to the default."""
    path = _policy(tmp_path, f"rules:\n  {rule}: {{params: {params}}}\n")
    error = _load_error(path)
    assert str(error).startswith(f"{path}:2: {rule}")
    assert words in str(error)


def test_good_params_still_load(tmp_path: Path) -> None:
    """The documented params load as before."""
    path = _policy(
        tmp_path,
        """
        rules:
          EG2*: {params: {languages: [en, de], min_confidence: high}}
          EG301: {params: {allow_http_loopback_in: [dev, test]}}
          EG302: {params: {max_length: 4096}}
          EG303: {params: {oauth_code_action: block}}
        """,
    )
    assert load_policy(path, environ={}).rule("EG302").params["max_length"] == 4096  # type: ignore[union-attr]


def test_an_exception_naming_an_unknown_rule_is_an_error(tmp_path: Path) -> None:
    """EG3O5 (a letter O) is refused with its line and the code meant."""
    path = _policy(
        tmp_path,
        """
        exceptions:
          - rules: [EG305, EG3O5]
            reason: signed links to our CDN
        """,
    )
    error = _load_error(path)
    assert isinstance(error, UnknownRuleError)
    assert str(error).startswith(f"{path}:2: ")
    assert "did you mean EG305?" in str(error)


def test_an_exception_stops_suppressing_after_its_date_in_a_running_engine(
    tmp_path: Path,
) -> None:
    """The engine asks its clock each time: the same engine suppresses, then does not."""
    path = _policy(
        tmp_path,
        """
        exceptions:
          - {rules: [EG301], reason: our dev CDN is plain http, expires: 2027-06-30}
        """,
    )
    today = [dt.date(2027, 6, 30)]
    engine = quiet_engine(load_policy(path, environ={}), clock=lambda: today[0])
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "m", "url": "http://x.example/", "elicitationId": "e"},
    }

    def codes() -> tuple[set[str], set[str]]:
        envelope = Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.CLIENT)
        decision = engine.evaluate(envelope)
        return {f.code for f in decision.findings}, {s.code for s in decision.suppressed}

    found, suppressed = codes()
    assert "EG301" not in found  # valid through its date
    assert "EG301" in suppressed
    today[0] = dt.date(2027, 7, 1)
    found, suppressed = codes()
    assert "EG301" in found
    assert "EG301" not in suppressed
    assert [e.spec.rules for e in engine.expired_exceptions()] == [["EG301"]]


def test_policy_files_read_as_yaml_1_2(tmp_path: Path) -> None:
    """`action: off` is the string off (YAML 1.1 made it false and the policy was refused)."""
    path = _policy(
        tmp_path,
        """
        rules:
          EG306: {action: off}
          EG401: {action: 'off'}
        lists:
          protected_domains: [yes.example, on.example]
          dev_hosts: [no]
        """,
    )
    policy = load_policy(path, environ={})
    assert policy.rule("EG306").action_for(Side.CLIENT) is None  # type: ignore[union-attr]
    assert policy.rule("EG401").action_for(Side.CLIENT) is None  # type: ignore[union-attr]
    assert "no" in policy.lists["dev_hosts"]


def test_a_bad_regex_prints_no_re2_log_and_names_the_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """RE2's own log lines never reach stderr; our error names the file and the line."""
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "ACME001-bad-regex.yaml").write_text(
        textwrap.dedent(
            """
            code: ACME001
            name: bad-regex
            summary: A rule with a lookahead
            severity: high
            confidence: high
            action: block
            applies_to: {items: [url_request]}
            match:
              any:
                - {field: url.host, equals: a.example}
                - field: url.host
                  regex: "a(?=b)"
            message: "bad"
            docs: {why: "x", example: {expect: ruleid, note: n, message: {}}, fix: "y"}
            """
        ).lstrip(),
        encoding="utf-8",
    )
    path = _policy(tmp_path, "packs: [./pack]\n")
    capfd.readouterr()
    error = _load_error(path)
    assert str(error).startswith(f"{pack / 'ACME001-bad-regex.yaml'}:12: regex 'a(?=b)'")
    captured = capfd.readouterr()
    assert "re2" not in captured.err.lower()
    assert captured.err == ""


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("rules:\n  EG306:\n    action: warn\n   severity: low\n", ":4:4: ", "indentation"),
        ("rules:\n\tEG306: {}\n", ":2:1: ", "spaces only"),
        ("name: a: b\n", ":1:8: ", "quote a value"),
        ("lists: [a, b\n", ":2:1: ", "unclosed ["),
    ],
)
def test_a_yaml_syntax_error_is_told_in_our_words(
    tmp_path: Path, text: str, where: str, words: str
) -> None:
    """File, line and column, and what to write; never PyYAML's own wording."""
    path = _policy(tmp_path, text)
    with pytest.raises(PackLoadError) as info:
        load_policy(path, environ={})
    message = str(info.value)
    assert message.startswith(f"{path}{where}")
    assert words in message
    for raw in ("<block end>", "block mapping", "cannot start any token", "scanning"):
        assert raw not in message


def test_policy_validate_reports_every_error_of_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run lists each problem with its line, in file order."""
    path = _policy(
        tmp_path,
        """
        rules:
          EG3O1: {action: warn}
          EG2*: {params: {langauges: [en]}}
        exceptions:
          - {rules: [EG999], reason: an old one}
        """,
    )
    assert main(["policy", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if str(path) in line]
    assert [line.split(str(path))[1].split(":")[1] for line in lines] == ["2", "3", "5"]
    assert "EG3O1" in lines[0]
    assert "langauges" in lines[1]
    assert "EG999" in lines[2]


def test_pydantic_errors_of_one_file_are_reported_together(tmp_path: Path) -> None:
    """Two bad values of one file are both named."""
    path = _policy(tmp_path, "mode: enforcee\non_error: blok\n")
    error = _load_error(path)
    assert [e.line for e in error.all] == [1, 2]
