"""An OpenTelemetry SDK span exporter speaking OTLP/HTTP with the JSON encoding.

OTLP defines a JSON mapping of its protobuf messages (``Content-Type: application/json``)
that every collector accepts on ``/v1/traces``. This exporter builds that document from the
SDK's finished spans and POSTs it with the standard library; no generated protobuf modules
are needed (see :class:`~elicitguard.audit.otel.SpanExporter` for why that matters).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["OtlpJsonExporter", "encode_spans"]


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in (attributes or {}).items()]


def encode_spans(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` in OTLP's JSON mapping."""
    resources: dict[int, tuple[Any, list[dict[str, Any]]]] = {}
    for span in spans:
        context = span.get_span_context()
        if context is None:
            continue
        entry = {
            "traceId": format(context.trace_id, "032x"),
            "spanId": format(context.span_id, "016x"),
            "name": span.name,
            "kind": 1,  # SPAN_KIND_INTERNAL
            "startTimeUnixNano": str(span.start_time or 0),
            "endTimeUnixNano": str(span.end_time or 0),
            "attributes": _attributes(span.attributes),
        }
        if span.parent is not None:
            entry["parentSpanId"] = format(span.parent.span_id, "016x")
        key = id(span.resource)
        resources.setdefault(key, (span.resource, []))[1].append(entry)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(resource.attributes)},
                "scopeSpans": [{"scope": {"name": "elicitguard"}, "spans": entries}],
            }
            for resource, entries in resources.values()
        ]
    }


class OtlpJsonExporter(SpanExporter):
    """POSTs batches of spans to ``endpoint`` (``http://collector:4318/v1/traces``)."""

    def __init__(self, endpoint: str, *, timeout: float = 5.0) -> None:
        self.endpoint = endpoint
        self.timeout = timeout

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        body = json.dumps(encode_spans(spans)).encode("utf-8")
        request = urllib.request.Request(  # noqa: S310 - the operator's collector URL
            self.endpoint,
            data=body,
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                ok = 200 <= response.status < 300
        except OSError:
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        return None
