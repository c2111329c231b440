"""``examples/protect_client/client.py``: an ``mcp`` client with the guard and a consent screen.

Run as a user would, answering on stdin: the harmless form and the https URL (after the
terminal consent screen and a yes) reach the server; the look-alike host and the password
form are declined by elicitguard without the user being asked; in both eras.
"""

from __future__ import annotations

import subprocess

from tests.examples.support import EXAMPLES, PY, clean_env
from tests.integration_support import require_module

require_module("mcp")

CLIENT = EXAMPLES / "protect_client" / "client.py"


def test_client_example_in_both_eras() -> None:
    """Answers: 4 guests, yes to the consent screen, per era."""
    done = subprocess.run(
        [PY, str(CLIENT)],
        input="4\ny\n4\ny\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
        check=True,
    )
    out = done.stdout
    for era in ("legacy", "2026-07-28"):
        assert f'{era} book_table: book:accept:{{"guests": 4}}' in out
        assert f"{era} connect: connect:accept:null" in out
        assert f"{era} connect: connect:decline:null" in out  # the look-alike host
        assert f"{era} unlock: unlock:decline:null" in out
    assert out.count("The server demo-server asks you to open a web page") == 2
    assert out.count("Address:         https://accounts.example.com/connect") == 2
    assert "аррӏе" not in out  # the look-alike never reached the consent screen
    assert out.count("request: elicitguard policy: EG201") == 2
    assert out.count("EG403 whole-script-confusable-label") == 2


def test_no_to_the_consent_screen_declines() -> None:
    """Answering no on the consent screen: the server gets ``decline``."""
    done = subprocess.run(
        [PY, str(CLIENT), "--era", "2026-07-28"],
        input="4\nn\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
        check=True,
    )
    lines = [line for line in done.stdout.splitlines() if " connect: " in line]
    assert lines[0].endswith("connect: connect:decline:null")
