"""OCSF Detection Finding (class 2004) records from native decision records.

A pure function, :func:`to_ocsf`, maps one native record (:func:`~elicitguard.audit.records.
decision_record`) to the OCSF shape a SIEM ingests without a translation layer. Only
metadata that is already in the native record goes in: the redaction boundary is the same
(the result is written through the same sink). Pinned to OCSF schema 1.5.0 (the tests validate against ``py-ocsf-models``, which pins
the same version).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

__all__ = ["CLASS_UID", "OCSF_VERSION", "SECURITY_CONTROL", "to_ocsf"]

OCSF_VERSION = "1.5.0"
CLASS_UID = 2004  # Detection Finding
CATEGORY_UID = 2  # Findings
_ACTIVITY_CREATE = 1
_SEVERITY = {"info": 1, "low": 2, "medium": 3, "high": 4, "critical": 5}
_SEVERITY_NAMES = {1: "Informational", 2: "Low", 3: "Medium", 4: "High", 5: "Critical"}
#: OCSF action_id: 1 Allowed, 2 Denied, 3 Observed, 4 Modified.
_ACTIONS = {
    "allow": (1, "Allowed"),
    "warn": (3, "Observed"),
    "redact": (4, "Modified"),
    "block": (2, "Denied"),
}
#: OCSF disposition_id: 1 Allowed, 2 Blocked, 11 Corrected, 15 Detected, 17 Logged.
_DISPOSITIONS = {
    "allow": (1, "Allowed"),
    "warn": (17, "Logged"),
    "redact": (11, "Corrected"),
    "block": (2, "Blocked"),
}
#: The attributes the ``security_control`` profile adds to the class (declared in metadata).
SECURITY_CONTROL = frozenset({"action", "action_id", "disposition", "disposition_id", "policy"})


def _time_ms(ts: Any) -> int:
    if isinstance(ts, str):
        try:
            return int(dt.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            pass
    return int(dt.datetime.now(dt.UTC).timestamp() * 1000)


def to_ocsf(record: dict[str, Any], *, product_version: str = "") -> dict[str, Any]:
    """The OCSF Detection Finding of one native decision record."""
    findings = record.get("findings") or []
    severity_id = max((_SEVERITY.get(f.get("severity"), 1) for f in findings), default=1)
    action = str(record.get("action") or "allow")
    action_id, action_name = _ACTIONS.get(action, (0, "Unknown"))
    enforced = bool(record.get("enforced"))
    disposition_id, disposition = _DISPOSITIONS.get(action, (0, "Unknown"))
    if not enforced and action_id in (2, 4):
        action_id, action_name = 3, "Observed"
        disposition_id, disposition = 15, "Detected"
    policy = record.get("policy") or {}
    codes = [str(f.get("code")) for f in findings]
    domains = sorted(
        {
            e["url_domain"]
            for e in record.get("elicitation") or []
            if isinstance(e, dict) and isinstance(e.get("url_domain"), str)
        }
    )
    out: dict[str, Any] = {
        "class_uid": CLASS_UID,
        "class_name": "Detection Finding",
        "category_uid": CATEGORY_UID,
        "category_name": "Findings",
        "activity_id": _ACTIVITY_CREATE,
        "activity_name": "Create",
        "type_uid": CLASS_UID * 100 + _ACTIVITY_CREATE,
        "type_name": "Detection Finding: Create",
        "time": _time_ms(record.get("ts")),
        "severity_id": severity_id,
        "severity": _SEVERITY_NAMES[severity_id],
        "status_id": 1,
        "status": "New",
        "action_id": action_id,
        "action": action_name,
        "disposition_id": disposition_id,
        "disposition": disposition,
        "message": f"elicitguard {action}" + (f": {', '.join(codes)}" if codes else ""),
        "metadata": {
            "version": OCSF_VERSION,
            "uid": record.get("decision_id"),
            "sequence": record.get("seq"),
            "product": {
                "name": "elicitguard",
                "vendor_name": "elicitguard",
                "version": product_version,
            },
            "log_name": str(record.get("event") or "elicitguard.decision"),
            "profiles": ["security_control"],
        },
        "finding_info": {
            "uid": record.get("decision_id"),
            "title": "MCP elicitation policy decision",
            "types": codes,
            "analytic": {
                "uid": str(policy.get("name") or "policy"),
                "name": str(policy.get("name") or "policy"),
                "type_id": 1,
                "type": "Rule",
            },
        },
        "policy": {
            "name": policy.get("name"),
            "version": policy.get("revision"),
        },
        "evidences": [
            {
                "data": {
                    "code": f.get("code"),
                    "pointer": f.get("pointer"),
                    "fingerprint": f.get("fingerprint"),
                }
            }
            for f in findings
        ],
        "unmapped": {
            "mcp": {
                "method": record.get("method"),
                "protocol_version": record.get("protocol_version"),
                "jsonrpc_id": record.get("jsonrpc_id"),
                "direction": record.get("direction"),
                "transport": record.get("transport"),
                "server": record.get("server"),
                "session": record.get("session"),
                "enforced": enforced,
                "action": action,
            },
        },
    }
    if domains:
        out["resources"] = [{"type": "url_domain", "name": d} for d in domains]
    principal = record.get("principal")
    if isinstance(principal, dict):
        out["unmapped"]["principal"] = {"uid": principal.get("sub"), "issuer": principal.get("iss")}
    return out
