"""Baselines: adopt the linter on captures that already have findings, as gitleaks does.

Why: a team turning elicitguard on for an existing set of captures wants the gate to fail
on new problems only. ``lint --write-baseline FILE`` records the fingerprints of today's
findings (a ``--format json`` report); ``lint --baseline FILE`` reads such a report, or a
SARIF log from ``--format sarif``, and leaves out every finding whose fingerprint it holds.
A fingerprint is the finding's rule, server, method and pointer (never a value, never a
line), so editing or reordering a capture keeps known findings known; a finding the
baseline does not hold is new and fails the run as usual.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from elicitguard.errors import ElicitguardError
from elicitguard.lint.runner import LintResult
from elicitguard.lint.sarif import FINGERPRINT_KEY

__all__ = ["Baseline", "apply_baseline", "read_baseline"]

Baseline = frozenset[str]


def _sarif_fingerprints(document: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for run in document.get("runs") or []:
        for result in run.get("results") or []:
            if result.get("suppressions"):
                continue
            value = (result.get("partialFingerprints") or {}).get(FINGERPRINT_KEY)
            if isinstance(value, str):
                found.add(value)
    return found


def read_baseline(path: Path) -> Baseline:
    """The fingerprints of a previous ``--format json`` report or SARIF log."""
    try:
        document = orjson.loads(path.read_bytes())
    except OSError as exc:
        msg = f"cannot read baseline {path}: {exc.strerror}"
        raise ElicitguardError(msg) from exc
    except orjson.JSONDecodeError as exc:
        msg = f"baseline {path} is not JSON: {exc}"
        raise ElicitguardError(msg) from exc
    if isinstance(document, dict) and isinstance(document.get("runs"), list):
        return frozenset(_sarif_fingerprints(document))
    if isinstance(document, dict) and isinstance(document.get("findings"), list):
        return frozenset(
            f["fingerprint"]
            for f in document["findings"]
            if isinstance(f, dict) and isinstance(f.get("fingerprint"), str)
        )
    msg = f"baseline {path} is neither an elicitguard JSON report nor a SARIF log"
    raise ElicitguardError(msg)


def apply_baseline(result: LintResult, baseline: Baseline) -> tuple[LintResult, int]:
    """``result`` without the findings the baseline knows, and how many were left out."""
    kept = [f for f in result.findings if f.finding.fingerprint not in baseline]
    return replace(result, findings=kept), len(result.findings) - len(kept)
