"""``benchmarks/eval_formats.py`` samples a gitleaks-style config and reports recall per half.

A tiny config of three rules (a prefixed format we know, a vendor-named one, and a pattern
the sampler cannot draw) keeps the script from rotting; no figure is asserted beyond what the
three rules make certain.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """
[[rules]]
id = "github-pat"
regex = '''ghp_[0-9a-zA-Z]{36}'''
keywords = ["ghp_"]

[[rules]]
id = "acme-api-key"
regex = '''(?i)[\\w.-]{0,50}?(?:acme)(?:[ \\t\\w.-]{0,20})[\\s'"]{0,3}(?:=|:)[\\x60'"\\s=]{0,5}([a-z0-9]{40})(?:[\\x60'"\\s;]|$)'''
keywords = ["acme"]

[[rules]]
id = "no-regex-here"
path = '''\\.pem$'''
"""


def test_a_tiny_config_is_sampled_and_scored(tmp_path: Path) -> None:
    config = tmp_path / "gitleaks.toml"
    config.write_text(CONFIG, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "eval_formats.py"), "--config", str(config),
         "--per-rule", "2", "--misses"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "== tuning half" in out
    assert "== checking half" in out
    # both rules hash into the tuning half; the fixed seed draws the same four samples
    for context in ("prefixed, alone", "prefixed, in a sentence", "vendor named, NAME_KEY="):
        assert f"{context:28} R 1.000  (2/2)" in out, out
    assert "missed" not in out
    assert "no-regex-here" not in out
