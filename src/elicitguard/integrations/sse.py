"""The SSE event parser, where the HTTP integrations first imported it from.

It lives in :mod:`elicitguard.protocol.sse` (the HAR reader in ``lint`` uses it too); this
module re-exports it so that every HTTP door shares the one reading of an event stream.
"""

from __future__ import annotations

from elicitguard.protocol.sse import BOM, SseEvent, SseParser, format_event, parse_events

__all__ = ["BOM", "SseEvent", "SseParser", "format_event", "parse_events"]
