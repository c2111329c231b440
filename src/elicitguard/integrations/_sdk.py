"""Glue between the ``mcp`` SDK's message objects and the engine's plain JSON dicts.

The SDK hands integrations pydantic models (``SessionMessage`` on streams, typed params in
callbacks); the engine and :mod:`elicitguard.integrations.actions` work on the JSON-RPC
object as it travels. These helpers convert both ways in one place, so every wrapper dumps
with the same options the SDK uses when it writes a frame.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any, Self

from mcp.shared.message import MessageMetadata, SessionMessage
from mcp_types import ErrorData as _ErrorData
from mcp_types import jsonrpc_message_adapter

from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy, load_policy

__all__ = ["error_data", "make_engine", "message_dict", "session_message"]


def make_engine(engine: Engine | None, policy: str | os.PathLike[str] | Policy | None) -> Engine:
    """The engine a wrapper uses: the one given, else one built from ``policy``."""
    if engine is not None:
        if policy is not None:
            msg = "pass either an engine or a policy, not both (the engine has its policy)"
            raise ValueError(msg)
        return engine
    if isinstance(policy, Policy):
        return Engine(policy)
    return Engine(load_policy(policy))


def message_dict(item: SessionMessage) -> dict[str, Any]:
    """The JSON-RPC object of ``item``, dumped the way the SDK serialises it for the wire."""
    dumped: dict[str, Any] = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
    return dumped


def session_message(message: dict[str, Any], metadata: MessageMetadata = None) -> SessionMessage:
    """A ``SessionMessage`` for a JSON-RPC object elicitguard built or changed."""
    return SessionMessage(jsonrpc_message_adapter.validate_python(message), metadata)


def error_data(message: dict[str, Any]) -> _ErrorData:
    """The ``ErrorData`` of a JSON-RPC error response built by the actions module."""
    return _ErrorData.model_validate(message["error"])


class DelegatingWriter:
    """Base of the SDK stream wrappers: close, async context and any other attribute go to
    the wrapped stream (``self._inner``); subclasses override ``send``."""

    _inner: Any

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
