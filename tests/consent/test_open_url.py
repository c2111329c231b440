"""open_url: only https (or dev loopback http) reaches the system browser, never via a shell.

The "browser" is a real program started by the standard library's webbrowser controller: a
small Python script that writes the arguments it received to a file. That is exactly what
happens with a real browser (BROWSER=firefox and friends), minus the window.
"""

from __future__ import annotations

import json
import sys
import time
import webbrowser
from pathlib import Path

import pytest

from elicitguard.consent import UnsafeUrlError, describe_url, open_url


@pytest.fixture
def recorder(tmp_path: Path) -> tuple[webbrowser.BaseBrowser, Path]:
    script = tmp_path / "browser.py"
    out = tmp_path / "argv.json"
    script.write_text(
        f"import json, sys\nopen({str(out)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    return webbrowser.GenericBrowser([sys.executable, str(script), "%s"]), out


def _argv(out: Path) -> list[str]:
    for _ in range(200):
        if out.exists() and out.read_text():
            return list(json.loads(out.read_text()))
        time.sleep(0.02)
    raise AssertionError("the browser was not started")


def test_https_url_is_passed_as_one_argument_without_a_shell(
    recorder: tuple[webbrowser.BaseBrowser, Path], tmp_path: Path
) -> None:
    """Shell metacharacters in the URL arrive verbatim as a single argument; nothing runs."""
    browser, out = recorder
    url = "https://auth.example.com/cb?q=$(touch%20pwned)&x=`id`;echo"
    assert open_url(describe_url(url), browser=browser)
    assert [url] == _argv(out)
    assert not (tmp_path / "pwned").exists()
    assert not Path("pwned").exists()


def test_dev_loopback_http_opens_only_in_dev(recorder: tuple[webbrowser.BaseBrowser, Path]) -> None:
    """http to 127.0.0.1 opens in the dev environment and nowhere else."""
    browser, out = recorder
    url = "http://127.0.0.1:8765/callback"
    with pytest.raises(UnsafeUrlError):
        open_url(describe_url(url, env="prod"), browser=browser)
    assert open_url(describe_url(url, env="dev"), browser=browser)
    assert [url] == _argv(out)


@pytest.mark.parametrize(
    ("url", "env"),
    [
        ("javascript:alert(1)", "dev"),
        ("data:text/html,<script>alert(1)</script>", "dev"),
        ("file:///etc/passwd", "dev"),
        ("vbscript:msgbox", "dev"),
        ("http://auth.example.com/", "dev"),
        ("http://localhost.example.com/", "dev"),
        ("ftp://files.example.com/", "prod"),
        ("https://аррӏе.com/", "prod"),
        ("https://evil.example/\u202emoc.lapyap", "prod"),
        ("https://auth example.com/", "prod"),
        ("https://evil.example\\@paypal.com/", "prod"),
    ],
)
def test_everything_else_is_refused(
    url: str, env: str, recorder: tuple[webbrowser.BaseBrowser, Path]
) -> None:
    """Other schemes, blocked spoofs, hidden characters and malformed URLs never open."""
    browser, out = recorder
    with pytest.raises(UnsafeUrlError):
        open_url(describe_url(url, env=env), browser=browser)
    time.sleep(0.05)
    assert not out.exists()


def test_monitor_mode_still_refuses_non_https(
    recorder: tuple[webbrowser.BaseBrowser, Path],
) -> None:
    """Monitor mode never enforces the policy, but the scheme check is not a policy."""
    browser, _ = recorder
    view = describe_url("javascript:alert(1)", "builtin:monitor")
    with pytest.raises(UnsafeUrlError):
        open_url(view, browser=browser)
