"""`elicitguard lint` on envelope captures: findings, formats, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elicitguard.cli import main

TRAFFIC = Path(__file__).resolve().parents[2] / "examples" / "traffic"

#: What each bundled capture plants: (line, code). Benign captures plant nothing.
PLANTED: dict[str, set[tuple[int, str]]] = {
    "2025-06-18-benign.jsonl": set(),
    "2025-11-25-benign.jsonl": set(),
    "2026-07-28-benign.jsonl": set(),
    "2025-06-18-violations.jsonl": {(5, "EG108"), (7, "EG106"), (8, "EG109"), (9, "EG104")},
    "2025-11-25-violations.jsonl": {
        (5, "EG102"),
        (8, "EG110"),
        (9, "EG105"),
        (14, "EG107"),
        (14, "EG302"),  # the relative URL is also an invalid URL-mode target
    },
    "2026-07-28-violations.jsonl": {
        (1, "EG124"),
        (4, "EG111"),
        (6, "EG112"),
        (8, "EG101"),
        (8, "EG107"),
    },
    # Form mode (EG2xx) in seven languages: examples/traffic/form-scenarios.yaml.
    "2025-11-25-form-benign.jsonl": set(),
    "2026-07-28-form-benign.jsonl": set(),
    "2025-11-25-form-secrets.jsonl": {
        (5, "EG201"),  # GitHub token field (en)
        (6, "EG204"),  # ... answered with a token
        (9, "EG201"),  # 银行卡号 and 安全码 (zh-Hans)
        (13, "EG201"),  # generic field ...
        (13, "EG206"),  # ... and "Bitte geben Sie Ihr Passwort ein" (de)
        (17, "EG201"),  # APIキー (ja) ...
        (17, "EG205"),  # ... with a key as its default
        (21, "EG203"),  # Numéro de sécurité sociale (fr)
        (26, "EG204"),  # database URL with a password pasted into notes
    },
    "2026-07-28-form-secrets.jsonl": {
        (2, "EG201"),  # 存取權杖 (zh-Hant) next to a harmless entry
        (3, "EG204"),  # ... answered with a token
        (6, "EG201"),  # Mot de passe (fr)
        (10, "EG201"),  # generic field ...
        (10, "EG206"),  # ... and "Please paste your recovery phrase" (en)
        (11, "EG204"),  # ... answered with twelve seed words
        (14, "EG205"),  # enum value with a database URL (es)
        (19, "EG204"),  # a bearer JWT typed into a name field (de form)
    },
    # URL mode (EG3xx, EG202) in every channel: examples/traffic/url-scenarios.yaml.
    "2025-11-25-url-benign.jsonl": set(),
    "2026-07-28-url-benign.jsonl": set(),
    "2025-11-25-url-violations.jsonl": {
        (5, "EG301"),  # plain http connect page
        (9, "EG305"),  # -32042 error data: presigned S3 URL ...
        (9, "EG306"),  # ... with no binding handle (log)
        (11, "EG303"),  # api_key in the query
        (15, "EG304"),  # task-augmented request: e-mail in the query
        (19, "EG202"),  # link in a form message
        (23, "EG306"),  # connect page with no handle (log)
        (27, "EG302"),  # backslash that browsers read as a slash
    },
    "2026-07-28-url-violations.jsonl": {
        (4, "EG305"),  # inputRequests: Devise reset_password_token link
        (8, "EG301"),  # javascript: URL
        (12, "EG303"),  # password in the query
        (16, "EG304"),  # card number in the query
        (20, "EG202"),  # URL inside a URL-mode request's message (URL-10)
        (24, "EG306"),  # no binding handle (log)
    },
}


def lint_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["lint", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_bundled_captures_report_exactly_what_was_planted(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each planted violation is reported at its line; benign traffic yields nothing."""
    code, report = lint_json(capsys, str(TRAFFIC / name))
    found = {(f["line"], f["code"]) for f in report["findings"]}
    assert PLANTED[name] == found
    assert report["errors"] == []
    assert (1 if PLANTED[name] else 0) == code


def test_json_report_has_the_stable_shape(capsys: pytest.CaptureFixture[str]) -> None:
    """Every finding carries the documented keys; the summary counts."""
    _, report = lint_json(capsys, str(TRAFFIC / "2025-11-25-violations.jsonl"))
    keys = {
        "code",
        "name",
        "severity",
        "action",
        "message",
        "file",
        "line",
        "pointer",
        "direction",
        "method",
        "jsonrpc_id",
        "session",
        "fingerprint",
    }
    assert all(keys == set(f) for f in report["findings"])
    assert {"messages", "findings", "by_severity", "unknown_era"} == set(report["summary"])
    assert report["summary"]["findings"] == len(report["findings"])
    assert "s3" in {f["session"] for f in report["findings"]}


def test_folder_input_and_text_format(capsys: pytest.CaptureFixture[str]) -> None:
    """A folder lints every *.jsonl in it; the text report groups by file."""
    code = main(["lint", str(TRAFFIC), "--color", "never"])
    out = capsys.readouterr().out
    assert code == 1
    assert "2026-07-28-violations.jsonl:6 EG112" in out
    assert "findings" in out


def test_fail_on_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    """--fail-on critical passes a capture whose worst finding is high."""
    assert (
        main(["lint", "--fail-on", "critical", str(TRAFFIC / "2025-11-25-violations.jsonl")]) == 0
    )
    assert main(["lint", "--fail-on", "never", str(TRAFFIC)]) == 0
    capsys.readouterr()


def test_select_and_ignore(capsys: pytest.CaptureFixture[str]) -> None:
    """--select and --ignore filter by code globs."""
    _, report = lint_json(capsys, "--select", "EG11*", str(TRAFFIC / "2026-07-28-violations.jsonl"))
    assert {"EG111", "EG112"} == {f["code"] for f in report["findings"]}
    _, report = lint_json(capsys, "--ignore", "EG1*", str(TRAFFIC / "2026-07-28-violations.jsonl"))
    assert report["findings"] == []


def test_bad_lines_are_errors_and_linting_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not JSON, not an object, a batch, a bad envelope, too deep: each an error entry."""
    good = (TRAFFIC / "2025-11-25-violations.jsonl").read_text().splitlines()
    lines = [
        "this is not json",
        "[1, 2, 3]",
        '{"direction": "client_to_server", "message": [{"jsonrpc": "2.0"}]}',
        '{"direction": "sideways", "message": {}}',
        '{"direction": "client_to_server", "message": {}, "extra": 1}',
        '{"direction": "client_to_server", "message": ' + "[" * 200 + "]" * 200 + "}",
        *good,
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        ("\n".join(lines) + "\n").encode()
        + b'{"direction": "client_to_server", "message": {"a": "\x00\xff"}}\n'
    )
    code, report = lint_json(capsys, str(path))
    assert code == 1
    assert [e["line"] for e in report["errors"]] == [1, 2, 3, 4, 5, 6, len(lines) + 1]
    codes = {(f["line"], f["code"]) for f in report["findings"]}
    assert (1, "EG904") in codes
    assert (6, "EG905") in codes
    assert (6 + 5, "EG102") in codes


def test_oversized_line_is_an_error_without_loading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line over the size limit is reported (EG903) and skipped."""
    policy = tmp_path / "p.yaml"
    policy.write_text("extends: ['builtin:default']\nlimits: {max_message_bytes: 1024}\n")
    path = tmp_path / "big.jsonl"
    big = (
        '{"direction": "server_to_client", "message": {"jsonrpc": "2.0", "method": "x", "params": {"blob": "'
        + "A" * 5000
        + '"}}}'
    )
    path.write_text(
        big
        + "\n"
        + '{"direction": "client_to_server", "message": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}\n'
    )
    code, report = lint_json(capsys, "--policy", str(policy), str(path))
    assert [e["line"] for e in report["errors"]] == [1]
    assert "over the limit" in report["errors"][0]["message"]
    assert {(1, "EG903")} == {(f["line"], f["code"]) for f in report["findings"]}
    assert report["summary"]["messages"] == 2
    assert code == 1


def test_missing_file_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """An input that cannot be opened is a usage error."""
    assert main(["lint", "/nonexistent/capture.jsonl"]) == 2
    assert "cannot open" in capsys.readouterr().err


def test_broken_policy_is_exit_2_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A policy error stops the run and says where."""
    policy = tmp_path / "p.yaml"
    policy.write_text("rules:\n  EG1O2: {action: warn}\n")
    assert main(["lint", "--policy", str(policy), str(TRAFFIC)]) == 2
    err = capsys.readouterr().err
    assert f"{policy}:2:" in err
    assert "did you mean EG102?" in err


def test_unknown_era_is_counted_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Messages without any version skip era-specific rules and are counted."""
    path = tmp_path / "noera.jsonl"
    path.write_text(
        '{"direction": "server_to_client", "message": {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}}\n'
    )
    _code, report = lint_json(capsys, str(path))
    assert report["summary"]["unknown_era"] == 1
    assert report["findings"] == []
    _code, report = lint_json(capsys, "--protocol-version", "2026-07-28", str(path))
    assert {"EG112"} == {f["code"] for f in report["findings"]}


def test_output_file_and_audit_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--output writes the report; --audit-log writes one record per decision, mode 0600."""
    out = tmp_path / "report.json"
    audit = tmp_path / "audit.jsonl"
    main(
        [
            "lint",
            "--format",
            "json",
            "--output",
            str(out),
            "--audit-log",
            str(audit),
            str(TRAFFIC / "2025-11-25-benign.jsonl"),
        ]
    )
    assert "findings" in json.loads(out.read_text())
    lines = audit.read_text().splitlines()
    assert lines
    assert all(json.loads(line)["event"] == "elicitguard.decision" for line in lines)
    assert audit.stat().st_mode & 0o777 == 0o600


def test_unused_and_expired_exceptions_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """EG902 points at the policy line of an exception that expired or never matched."""
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "extends: ['builtin:default']\n"
        "exceptions:\n"
        "  - {rules: [EG305], where: {server: no-such-server}, reason: never matches anything, expires: 2099-01-01}\n"
        "  - {rules: [EG102], reason: long gone, expires: 2001-01-01}\n"
    )
    _, report = lint_json(capsys, "--policy", str(policy), str(TRAFFIC / "2025-11-25-benign.jsonl"))
    eg902 = [f for f in report["findings"] if f["code"] == "EG902"]
    assert {3, 4} == {f["line"] for f in eg902}
    assert all(f["file"] == str(policy) for f in eg902)
