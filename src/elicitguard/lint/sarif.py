"""SARIF 2.1.0 for code scanning (``elicitguard lint --format sarif``).

What GitHub code scanning (and any SARIF viewer) gets:

* one run; ``tool.driver.rules`` holds every rule of the policy with ``shortDescription``
  (the summary), ``fullDescription`` (why), ``help`` (the fix, text and Markdown),
  ``defaultConfiguration.level`` and ``properties``: ``security-severity`` (GitHub's 0-10
  scale: critical 9.5, high 8.0, medium 5.5, low 3.0, info 1.0), ``precision`` (from the
  confidence) and ``tags`` (``security``, ``mcp``, the family, the CWE ids both as
  ``CWE-285`` and as CodeQL's ``external/cwe/cwe-285``, and the requirement ids), at most
  :data:`MAX_TAGS` (GitHub keeps 10 of at most 20);
* a result per finding at the capture file and line (HAR findings, which have no line,
  point at line 1 and carry the entry and event in ``properties`` and in the logical
  location), plus a logical location ``server/method#pointer``;
* ``partialFingerprints["elicitguardFindingHash/v1"]``: the finding's fingerprint, a hash of
  rule, server, method and pointer, never of a value, so an alert survives reformatting and
  reordering of the capture;
* findings a policy exception turned off, as results with ``suppressions`` (kind
  ``external``, status ``accepted``, the exception's reason as justification);
* lines the readers could not use, as ``invocations[0].toolExecutionNotifications``;
* ``automationDetails.id`` ``<category>/<policy revision>``: GitHub treats the part before
  the last slash as the analysis category, so separate capture sets stay separate analyses.

Limits (GitHub rejects a run over 25,000 results and shows the top 5,000 by severity): at
most :data:`MAX_RESULTS_PER_RULE` results per rule and :data:`MAX_RESULTS` per run, the most
severe kept; what was dropped is counted in a notification and in ``run.properties``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import PurePath
from typing import Any

import orjson

from elicitguard._version import __version__
from elicitguard.base.decision import Severity, finding_fingerprint
from elicitguard.engine.policy import CompiledRule, Policy
from elicitguard.lint.runner import LintFinding, LintResult, LintSuppressed

__all__ = [
    "MAX_RESULTS",
    "MAX_RESULTS_PER_RULE",
    "MAX_TAGS",
    "SARIF_SCHEMA",
    "SECURITY_SEVERITY",
    "render_sarif",
    "sarif_document",
]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
MAX_RESULTS = 5000
MAX_RESULTS_PER_RULE = 1000
MAX_TAGS = 10
MAX_NOTIFICATIONS = 1000
FINGERPRINT_KEY = "elicitguardFindingHash/v1"

SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "1.0",
}
_LEVEL = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
_PRECISION = {"high": "high", "medium": "medium", "low": "low"}
_FAMILIES = {
    "1": "conformance",
    "2": "form",
    "3": "url",
    "4": "domain",
    "5": "identity",
    "6": "credentials",
    "9": "engine",
}


def _uri(file: str) -> dict[str, Any]:
    """A relative path stays relative to the checkout (``%SRCROOT%``); others become URIs."""
    path = PurePath(file)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": path.as_posix(), "uriBaseId": "%SRCROOT%"}


def _tags(rule: CompiledRule) -> list[str]:
    digits = rule.code[-3:]
    tags = ["security", "mcp", "elicitation"]
    family = _FAMILIES.get(digits[:1])
    if family is not None and rule.code.startswith("EG"):
        tags.append(family)
    for cwe in rule.cwe:
        tags.extend([cwe, f"external/cwe/cwe-{cwe.removeprefix('CWE-')}"])
    tags.extend(rule.requirements)
    unique = list(dict.fromkeys(tags))
    return unique[:MAX_TAGS]


def _rule_descriptor(rule: CompiledRule) -> dict[str, Any]:
    docs = rule.loaded.spec.docs
    page = f"docs/rules/{rule.code}.md" if rule.loaded.builtin else None
    markdown = f"**Fix.** {docs.fix.strip()}\n\n**Why.** {docs.why.strip()}"
    if page is not None:
        markdown += f"\n\nFull page: `{page}` (`elicitguard rules explain {rule.code}`)."
    enabled = any(action is not None for action in rule.actions.values())
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.loaded.spec.summary},
        "fullDescription": {"text": docs.why.strip()},
        "help": {"text": docs.fix.strip(), "markdown": markdown},
        "defaultConfiguration": {"level": _LEVEL[rule.severity], "enabled": enabled},
        "properties": {
            "security-severity": SECURITY_SEVERITY[rule.severity],
            "precision": _PRECISION.get(rule.confidence.value, "medium"),
            "problem.severity": _LEVEL[rule.severity],
            "tags": _tags(rule),
            "requirements": list(rule.requirements),
        },
    }


def _logical(server: str | None, method: str | None, pointer: str) -> dict[str, Any]:
    name = pointer or method or "message"
    qualified = f"{server or '(unnamed server)'}/{method or '(no method)'}#{pointer}"
    return {"name": name, "fullyQualifiedName": qualified, "kind": "member"}


def _location(
    file: str,
    line: int | None,
    server: str | None,
    method: str | None,
    pointer: str,
) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": _uri(file),
            "region": {"startLine": line if line is not None and line > 0 else 1},
        },
        "logicalLocations": [_logical(server, method, pointer)],
    }


def _result(item: LintFinding, index: dict[str, int]) -> dict[str, Any]:
    f = item.finding
    properties: dict[str, Any] = {
        "severity": f.severity.value,
        "action": f.action.value,
        "direction": item.direction,
        "session": item.session,
        "requirements": list(f.requirements),
    }
    if item.entry is not None:
        properties["harEntry"] = item.entry
    if item.event is not None:
        properties["harEvent"] = item.event
    result: dict[str, Any] = {
        "ruleId": f.code,
        "level": _LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [_location(item.file, item.line, item.server, item.method, f.pointer)],
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
        "properties": properties,
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    return result


def _suppressed_result(
    item: LintSuppressed, index: dict[str, int], policy: Policy
) -> dict[str, Any]:
    rule = policy.rules.get(item.code)
    summary = rule.loaded.spec.summary if rule is not None else item.code
    severity = rule.severity if rule is not None else Severity.MEDIUM
    fingerprint = finding_fingerprint(item.code, item.server, item.method, item.pointer)
    result: dict[str, Any] = {
        "ruleId": item.code,
        "level": _LEVEL[severity],
        "message": {"text": f"{summary} (turned off by policy exception {item.exception_index})"},
        "locations": [_location(item.file, item.line, item.server, item.method, item.pointer)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        "suppressions": [
            {"kind": "external", "status": "accepted", "justification": item.reason[:1000]}
        ],
    }
    if item.code in index:
        result["ruleIndex"] = index[item.code]
    return result


def _capped(findings: list[LintFinding]) -> tuple[list[LintFinding], Counter[str]]:
    """At most MAX_RESULTS_PER_RULE per rule and MAX_RESULTS in all, the most severe kept."""
    ranked = sorted(range(len(findings)), key=lambda i: (-findings[i].finding.severity.rank, i))
    per_rule: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    keep: list[int] = []
    for i in ranked:
        code = findings[i].finding.code
        if per_rule[code] >= MAX_RESULTS_PER_RULE or len(keep) >= MAX_RESULTS:
            dropped[code] += 1
            continue
        per_rule[code] += 1
        keep.append(i)
    return [findings[i] for i in sorted(keep)], dropped


def _notifications(result: LintResult, dropped: Counter[str]) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = []
    for error in result.errors[:MAX_NOTIFICATIONS]:
        where = _location(error.file, error.line, None, None, "")
        del where["logicalLocations"]
        properties: dict[str, Any] = {}
        if error.entry is not None:
            properties["harEntry"] = error.entry
        if error.event is not None:
            properties["harEvent"] = error.event
        note: dict[str, Any] = {
            "level": "warning",
            "message": {"text": error.message},
            "locations": [where],
            "descriptor": {"id": "unreadable-input"},
        }
        if properties:
            note["properties"] = properties
        notes.append(note)
    if len(result.errors) > MAX_NOTIFICATIONS:
        more = len(result.errors) - MAX_NOTIFICATIONS
        notes.append(
            {
                "level": "warning",
                "message": {"text": f"{more} more unreadable lines or entries not listed"},
                "descriptor": {"id": "unreadable-input"},
            }
        )
    for code, count in sorted(dropped.items()):
        notes.append(
            {
                "level": "note",
                "message": {
                    "text": f"{count} results of {code} left out to stay within code scanning's "
                    f"limits ({MAX_RESULTS_PER_RULE} per rule, {MAX_RESULTS} per run)"
                },
                "descriptor": {"id": "results-capped"},
            }
        )
    return notes


def sarif_document(
    result: LintResult, policy: Policy, *, category: str = "elicitguard"
) -> dict[str, Any]:
    """The SARIF log of one lint run."""
    rules = [policy.rules[code] for code in sorted(policy.rules)]
    index = {rule.code: n for n, rule in enumerate(rules)}
    findings, dropped = _capped(result.findings)
    results = [_result(item, index) for item in findings]
    room = max(0, MAX_RESULTS - len(results))
    results.extend(_suppressed_result(item, index, policy) for item in result.suppressed[:room])
    category = category.strip("/") or "elicitguard"
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "elicitguard",
                        "semanticVersion": __version__,
                        "rules": [_rule_descriptor(rule) for rule in rules],
                    }
                },
                "automationDetails": {"id": f"{category}/{policy.revision}"},
                "originalUriBaseIds": {
                    "%SRCROOT%": {"description": {"text": "the directory lint ran in"}}
                },
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": _notifications(result, dropped),
                    }
                ],
                "results": results,
                "columnKind": "unicodeCodePoints",
                "properties": {
                    "policy": {
                        "name": policy.name,
                        "revision": policy.revision,
                        "environment": policy.environment,
                    },
                    "messages": result.messages,
                    "unknownEra": result.unknown_era,
                    "resultsLeftOut": sum(dropped.values()),
                },
            }
        ],
    }


def render_sarif(result: LintResult, policy: Policy, *, category: str = "elicitguard") -> bytes:
    """The ``--format sarif`` document."""
    document = sarif_document(result, policy, category=category)
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"
