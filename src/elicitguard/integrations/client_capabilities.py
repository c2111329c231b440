"""Which elicitation modes a client declares, and rewriting what it declares.

Why: a client guard configured for form mode only must not let the host announce URL mode
(a server would then send URLs the guard is not set to judge). The client's declaration
is rewritten where it travels: ``initialize``'s ``capabilities.elicitation`` and, from
2026-07-28 on, each request's ``_meta`` client capabilities. :class:`CapabilityFilter`
wraps an SDK transport so every outgoing message is rewritten the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

from mcp.client._transport import Transport, TransportStreams
from mcp.shared._stream_protocols import WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    JSONRPCRequest,
)

from elicitguard.integrations._sdk import DelegatingWriter
from elicitguard.protocol.items import ABSENT
from elicitguard.protocol.versions import (
    META_CLIENT_CAPABILITIES,
)

__all__ = [
    "MODES",
    "CapabilityFilter",
    "RestrictingWriter",
    "declared_elicitation",
    "restrict_capabilities",
    "restrict_elicitation",
]

#: The elicitation modes, in the order declarations list them.
MODES = ("form", "url")


def declared_elicitation(modes: Iterable[str]) -> Any:
    """The ``elicitation`` capability a client offering ``modes`` declares (``ABSENT``: none)."""
    offered = [m for m in MODES if m in set(modes)]
    return {m: {} for m in offered} if offered else ABSENT


def restrict_elicitation(value: Any, modes: Iterable[str]) -> Any:
    """``value`` (an ``elicitation`` capability) without the modes not in ``modes``.

    Returns ``ABSENT`` when nothing usable is left: the capability must then go, because an
    empty ``{}`` would mean form mode. A value of an unknown shape is left as it is (EG103
    reports it).
    """
    allowed = set(modes)
    if not isinstance(value, dict):
        return value
    present = [m for m in MODES if m in value]
    if not present:  # `{}`: form only (2025-11-25), or "supported" (2025-06-18, forms only)
        return value if "form" in allowed else ABSENT
    kept = {k: v for k, v in value.items() if k not in MODES or k in allowed}
    return kept if any(m in kept for m in MODES) else ABSENT


def restrict_capabilities(
    method: str, params: Mapping[str, Any] | None, modes: Iterable[str]
) -> dict[str, Any] | None:
    """``params`` with the forbidden modes removed, or ``None`` when nothing changes.

    Looks at ``initialize``'s ``capabilities`` and at the 2026-07-28
    ``_meta["io.modelcontextprotocol/clientCapabilities"]`` of any request. The input is
    never mutated (the SDK shares one capability dict between requests).
    """
    modes = tuple(modes)
    if params is None or set(MODES) <= set(modes):
        return None
    if method == "initialize":
        caps = params.get("capabilities")
        new_caps = _restricted(caps, modes)
        if new_caps is None:
            return None
        return {**params, "capabilities": new_caps}
    meta = params.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    new_caps = _restricted(meta.get(META_CLIENT_CAPABILITIES), modes)
    if new_caps is None:
        return None
    return {**params, "_meta": {**meta, META_CLIENT_CAPABILITIES: new_caps}}


def _restricted(caps: Any, modes: tuple[str, ...]) -> dict[str, Any] | None:
    if not isinstance(caps, Mapping) or "elicitation" not in caps:
        return None
    value = restrict_elicitation(caps["elicitation"], modes)
    if value is caps["elicitation"]:
        return None
    new = {k: v for k, v in caps.items() if k != "elicitation"}
    if value is not ABSENT:
        new["elicitation"] = value
    return new


class RestrictingWriter(DelegatingWriter):
    """The client's write stream, with undeclared modes removed from outgoing requests."""

    def __init__(self, inner: WriteStream[SessionMessage], modes: tuple[str, ...]) -> None:
        self._inner = inner
        self._modes = modes

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if isinstance(message, JSONRPCRequest):
            params = restrict_capabilities(message.method, message.params, self._modes)
            if params is not None:
                item = SessionMessage(message.model_copy(update={"params": params}), item.metadata)
        await self._inner.send(item)


class CapabilityFilter(AbstractAsyncContextManager[TransportStreams]):
    """A client ``Transport`` that declares only ``modes`` of elicitation, whatever the SDK says."""

    def __init__(self, inner: Transport, modes: Iterable[str]) -> None:
        self._inner = inner
        self._modes = tuple(m for m in MODES if m in set(modes))

    async def __aenter__(self) -> TransportStreams:
        read, write = await self._inner.__aenter__()
        return read, RestrictingWriter(write, self._modes)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)
