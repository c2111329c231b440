"""A span per decision over OTLP/HTTP, with the MCP and GenAI guardrail conventions.

The attribute names live in :mod:`elicitguard.audit.otel_names` (the GenAI guardrail ones
are still moving); :func:`span_attributes` is the pure mapping from a native record.
"""

from __future__ import annotations

from typing import Any

from elicitguard.audit import otel_names as names

__all__ = ["SpanExporter", "span_attributes"]


def span_attributes(record: dict[str, Any]) -> dict[str, Any]:
    """The span attributes of one native decision record (no ``None`` values)."""
    findings = record.get("findings") or []
    policy = record.get("policy") or {}
    jsonrpc_id = record.get("jsonrpc_id")
    attributes: dict[str, Any] = {
        names.MCP_METHOD: record.get("method"),
        names.MCP_PROTOCOL_VERSION: record.get("protocol_version"),
        names.JSONRPC_REQUEST_ID: str(jsonrpc_id) if jsonrpc_id is not None else None,
        names.MCP_SESSION_ID: record.get("session"),
        names.GUARDRAIL_NAME: "elicitguard",
        names.GUARDRAIL_POLICY: policy.get("name"),
        names.GUARDRAIL_ACTION: record.get("action"),
        names.GUARDRAIL_ENFORCED: bool(record.get("enforced")),
        names.GUARDRAIL_CODES: [str(f.get("code")) for f in findings],
        names.GUARDRAIL_DECISION_ID: record.get("decision_id"),
        names.DIRECTION: record.get("direction"),
    }
    return {k: v for k, v in attributes.items() if v is not None and v != []}


class SpanExporter:
    """Exports one span per decision to an OTLP/HTTP traces endpoint (batched, JSON).

    Spans are made with the OpenTelemetry SDK and sent by :class:`OtlpJsonExporter`, OTLP's
    JSON encoding over HTTP: ``opentelemetry-exporter-otlp-proto-http`` needs the
    ``opentelemetry-proto`` modules, which ``xds-protos`` (the Envoy stubs) overwrites with
    an older copy of its own, so which one works would depend on the install order.
    """

    def __init__(self, endpoint: str) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from elicitguard.audit.otlp_json import OtlpJsonExporter

        self.provider = TracerProvider(resource=Resource.create({"service.name": "elicitguard"}))
        self.provider.add_span_processor(
            BatchSpanProcessor(OtlpJsonExporter(endpoint), schedule_delay_millis=200)
        )
        self.tracer = self.provider.get_tracer("elicitguard")

    def export(self, record: dict[str, Any]) -> dict[str, Any]:
        method = record.get("method") or "message"
        span = self.tracer.start_span(f"elicitguard {method}", attributes=span_attributes(record))
        span.end()
        return record

    def close(self) -> None:
        self.provider.shutdown()
