"""`elicitguard check-url URL`: the consent view for people and scripts, with exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from elicitguard.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check-url", *args])
    return code, capsys.readouterr().out


def test_ascii_url(capsys: pytest.CaptureFixture[str]) -> None:
    """An ordinary https URL: site highlighted, no warning, exit 0."""
    code, out = run(
        capsys, "https://accounts.example.com/oauth/authorize?client_id=abc", "--server", "crm"
    )
    assert code == 0
    assert "The server crm asks you to open a web page" in out
    assert "Site:" in out
    assert "example.com" in out
    assert "No warnings." in out


def test_idn_url(capsys: pytest.CaptureFixture[str]) -> None:
    """A legitimate IDN shows both forms and only a notice: exit 0."""
    code, out = run(capsys, "https://bücher.de/konto")
    assert code == 0
    assert "bücher.de" in out
    assert "xn--bcher-kva.de" in out
    assert "EG401" in out


def test_spoofed_url(capsys: pytest.CaptureFixture[str]) -> None:
    """A look-alike is shown in punycode with the imitated domain, blocked: exit 1."""
    code, out = run(capsys, "https://аррӏе.com/signin")
    assert code == 1
    assert "xn--80ak6aa92e.com" in out
    assert "EG404" in out
    assert "apple.com" in out
    assert "blocked" in out


def test_json_format(capsys: pytest.CaptureFixture[str]) -> None:
    """--format json prints the UrlView for scripts."""
    code, out = run(capsys, "https://раураӏ.com/", "--format", "json")
    data = json.loads(out)
    assert code == 1
    assert data["blocked"] is True
    assert data["ascii_host"] == "xn--80aa0cbo65f.com"
    assert {"EG403", "EG404", "EG401"} <= {w["code"] for w in data["warnings"]}


def test_env_and_policy_options(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    """--env dev lets loopback http open; --policy adds protected domains."""
    _, out = run(capsys, "http://127.0.0.1:8765/cb", "--env", "dev", "--format", "json")
    assert json.loads(out)["can_open"] is True
    _, out = run(capsys, "http://127.0.0.1:8765/cb", "--env", "prod", "--format", "json")
    assert json.loads(out)["can_open"] is False
    from pathlib import Path

    policy = Path(str(tmp_path)) / "p.yaml"
    policy.write_text("extends: [builtin:default]\nlists: {protected_domains: [acme-bank.com]}\n")
    code, out = run(capsys, "https://acme-bаnk.com/", "--policy", str(policy))
    assert code == 1
    assert "acme-bank.com" in out


def test_html_format(capsys: pytest.CaptureFixture[str]) -> None:
    """--format html prints the consent page."""
    _, out = run(capsys, "https://accounts.example.com/", "--format", "html", "--server", "crm")
    assert out.startswith("<!doctype html>")
    assert 'data-eg="registrable">example.com<' in out


def test_policy_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """A missing policy file is a usage error."""
    assert main(["check-url", "https://x.example/", "--policy", "/nonexistent/p.yaml"]) == 2


def test_installed_command(tmp_path: object) -> None:
    """The console script runs in a real subprocess, and colour stays off when piped."""
    result = subprocess.run(
        [sys.executable, "-m", "elicitguard", "check-url", "https://gооgle.com/"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "\x1b[" not in result.stdout
    assert "google.com" in result.stdout


def test_a_block_by_the_users_own_pack_rule_names_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/custom_pack: ACME001 blocks a site outside acme.example, and says so."""
    from pathlib import Path

    pack = Path(__file__).resolve().parents[2] / "examples" / "custom_pack"
    monkeypatch.chdir(pack)
    code, out = run(capsys, "https://login.example.net/sso", "--policy", "policy.yaml")
    assert code == 1
    assert "No warnings." not in out
    assert "ACME001" in out
    assert "blocked" in out
    code, out = run(
        capsys, "https://login.example.net/sso", "--policy", "policy.yaml", "--format", "json"
    )
    data = json.loads(out)
    assert data["blocked"] is True
    assert "ACME001" in {w["code"] for w in data["warnings"]}
