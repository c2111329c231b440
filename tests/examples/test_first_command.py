"""The README's first command: what its output tells a newcomer, and the error it reports.

It exits 1 (the violations captures plant findings on purpose); its last lines must say so
and name the next steps (``rules explain``, ``--format sarif``). The one error it reports is
a raw JSON-RPC line no reader can attribute; the README names that line and says why.
"""

from __future__ import annotations

import re
import subprocess

from tests.examples.support import ELICITGUARD, ROOT, clean_env


def test_the_first_command_says_exit_1_is_expected_and_what_next() -> None:
    done = subprocess.run(
        [ELICITGUARD, "lint", "examples/traffic/"],
        cwd=ROOT,
        env=clean_env(NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1
    tail = "\n".join(done.stdout.splitlines()[-4:])
    assert "exit 1" in tail
    assert "expected" in tail
    assert re.search(r"elicitguard rules explain EG\d{3}", tail)
    assert "--format sarif" in tail
    errors = [line for line in done.stdout.splitlines() if re.search(r" error ", line)]
    assert len(errors) == 1, errors
    where = errors[0].split()[0]
    assert where == "examples/traffic/raw/2025-11-25-violations.jsonl:6"
    readme = (ROOT / "README.md").read_text()
    assert f"`{where}`" in readme
    assert "open in both directions" in errors[0]
