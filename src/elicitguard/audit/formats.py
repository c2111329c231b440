"""``--audit-format native|ocsf|ecs`` and OpenTelemetry: hooking the renderers into a sink.

The renderers (:mod:`~elicitguard.audit.ocsf`, :mod:`~elicitguard.audit.ecs`,
:mod:`~elicitguard.audit.otel`) are pure functions of a native record. This module is the
one place that connects them to an engine's audit sink: each decision record is rendered
and then written through the sink's own redaction boundary (every format passes the same
one); a span per decision goes to OTLP when an endpoint is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from elicitguard._version import __version__
from elicitguard.audit.ecs import to_ecs
from elicitguard.audit.ocsf import to_ocsf
from elicitguard.audit.sink import AuditSink

__all__ = ["FORMATS", "close_exporters", "install_formats", "renderer"]

Renderer = Callable[[dict[str, Any]], dict[str, Any]]


def _ocsf(record: dict[str, Any]) -> dict[str, Any]:
    return to_ocsf(record, product_version=__version__)


FORMATS: dict[str, Renderer | None] = {"native": None, "ocsf": _ocsf, "ecs": to_ecs}


def renderer(name: str) -> Renderer | None:
    """The renderer of a format name (``None`` for native)."""
    if name not in FORMATS:
        msg = f"unknown audit format {name!r}; use native, ocsf or ecs"
        raise ValueError(msg)
    return FORMATS[name]


def wrap_sink(sink: AuditSink, render: Renderer | None, exporters: list[Renderer]) -> None:
    """Render each decision record before the sink's redaction boundary writes it.

    The sink converts and exports where it writes (its background writer, when it has
    one), so neither costs the request path.
    """
    sink.record_format = render
    sink.exporters.extend(exporters)


def install_formats(engine: Any, name: str, *, otlp: str | None = None) -> None:
    """Make ``engine``'s audit sink write ``name`` records and export spans to ``otlp``."""
    exporters: list[Renderer] = []
    if otlp is not None:
        from elicitguard.audit.otel import SpanExporter

        exporter = SpanExporter(otlp)
        _EXPORTERS.setdefault(id(engine), []).append(exporter)
        exporters.append(exporter.export)
    wrap_sink(engine.audit.sink, renderer(name), exporters)


_EXPORTERS: dict[int, list[Any]] = {}


def close_exporters(engine: Any) -> None:
    """Flush and stop the span exporters of ``engine`` (at shutdown).

    The sink's queued records are written first: its background writer hands records to
    the exporters as it writes them, and may still be gathering a batch.
    """
    sink = getattr(getattr(engine, "audit", None), "sink", None)
    if sink is not None:
        sink.flush()
    for exporter in _EXPORTERS.pop(id(engine), []):
        exporter.close()
