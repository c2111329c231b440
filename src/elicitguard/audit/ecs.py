"""Elastic Common Schema records from native decision records.

A pure function, :func:`to_ecs`, shapes one native record the way Elastic's ecs-logging
libraries do (``@timestamp``, ``ecs.version``, ``event.*``, ``rule.*``), so the records land
in an ECS index as they are. ``url.domain`` is the registrable domain the native record
already keeps: never the path or the query. The redaction boundary is the sink's, as for
native records.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ECS_VERSION", "to_ecs"]

ECS_VERSION = "8.11.0"
_OUTCOME = {"allow": "success", "warn": "success", "redact": "success", "block": "failure"}
_TYPE = {"allow": "allowed", "warn": "info", "redact": "change", "block": "denied"}


def to_ecs(record: dict[str, Any]) -> dict[str, Any]:
    """The ECS document of one native decision record."""
    findings = record.get("findings") or []
    action = str(record.get("action") or "allow")
    policy = record.get("policy") or {}
    codes = [str(f.get("code")) for f in findings]
    domains = [
        e["url_domain"]
        for e in record.get("elicitation") or []
        if isinstance(e, dict) and isinstance(e.get("url_domain"), str)
    ]
    out: dict[str, Any] = {
        "@timestamp": record.get("ts"),
        "ecs": {"version": ECS_VERSION},
        "message": f"elicitguard {action}" + (f": {', '.join(codes)}" if codes else ""),
        "event": {
            "kind": "alert" if findings else "event",
            "category": ["intrusion_detection"] if findings else ["network"],
            "type": [_TYPE.get(action, "info")],
            "action": action,
            "outcome": _OUTCOME.get(action, "unknown"),
            "id": record.get("decision_id"),
            "sequence": record.get("seq"),
            "dataset": "elicitguard.decision",
            "provider": "elicitguard",
            "duration": int(record.get("duration_us") or 0) * 1000,
        },
        "rule": {
            "id": codes[0] if codes else None,
            "name": findings[0].get("name") if findings else None,
            "ruleset": policy.get("name"),
            "version": policy.get("revision"),
        },
        "labels": {"codes": ",".join(codes)} if codes else {},
        "elicitguard": {
            "codes": codes,
            "enforced": bool(record.get("enforced")),
            "mode": policy.get("mode"),
            "mcp": {
                "method": record.get("method"),
                "protocol_version": record.get("protocol_version"),
                "jsonrpc_id": record.get("jsonrpc_id"),
                "direction": record.get("direction"),
                "server": record.get("server"),
                "session": record.get("session"),
            },
        },
    }
    if domains:
        out["url"] = {"domain": domains[0]}
    principal = record.get("principal")
    if isinstance(principal, dict):
        out["user"] = {"id": principal.get("sub"), "domain": principal.get("iss")}
    return out
