"""elicitguard as a FastMCP middleware (``elicitguard[fastmcp]``).

FastMCP's ``Middleware`` only sees what comes in from the client (PROTOCOL.md c.7): never a
pushed ``elicitation/create``, but in 2026-07-28 ``on_call_tool`` (and ``on_get_prompt``,
``on_read_resource``) get the ``InputRequiredResult`` a tool returned, and the retry that
answers it. :class:`FastMCPGuard` evaluates both: blocked ``inputRequests`` entries
are removed (the client gets the policy's error when none is left), answers are checked
before the tool reads them, and the retry gets ``{"action": "decline"}`` for every entry the
guard removed, so the tool is not left waiting for an answer that cannot come::

    mcp = FastMCP("my-server", middleware=[FastMCPGuard(policy="policy.yaml")])

FastMCP tools read ``ctx.input_responses`` from the SDK's request context, not from the
middleware's ``context.message``; the middleware therefore changes the answers through
FastMCP's documented escape hatch to that context (``request_context._srctx``). For
push-era elicitation put :meth:`ServerGuard.streams` or the ASGI middleware in front.
"""

from __future__ import annotations

import os
import uuid
from typing import Any
from weakref import WeakKeyDictionary

import mcp_types as mt
from fastmcp.prompts.base import InputRequiredPromptResult, PromptResult
from fastmcp.resources.base import InputRequiredResourceResult, ResourceResult
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import InputRequiredToolResult, ToolResult
from mcp.shared.exceptions import MCPError

from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import Policy
from elicitguard.integrations.mcp_server import Exchange, ServerGuard
from elicitguard.protocol.versions import is_modern, normalise_version

__all__ = ["FastMCPGuard"]

_INPUT_REQUIRED = (InputRequiredToolResult, InputRequiredPromptResult, InputRequiredResourceResult)


class FastMCPGuard(Middleware):
    """Evaluates 2026-07-28 elicitation of tools, prompts and resources (see the module)."""

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        policy: str | os.PathLike[str] | Policy | None = None,
        server: str | None = None,
    ) -> None:
        self.guard = ServerGuard(engine, policy=policy, server=server)
        self.relay = self.guard.relay(middleware=True)  # FastMCP unseals requestState first
        self._sessions: WeakKeyDictionary[Any, str] = WeakKeyDictionary()

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        result: ToolResult = await self._guarded("tools/call", context, call_next)
        return result

    async def on_get_prompt(
        self,
        context: MiddlewareContext[mt.GetPromptRequestParams],
        call_next: CallNext[mt.GetPromptRequestParams, PromptResult],
    ) -> PromptResult:
        result: PromptResult = await self._guarded("prompts/get", context, call_next)
        return result

    async def on_read_resource(
        self,
        context: MiddlewareContext[mt.ReadResourceRequestParams],
        call_next: CallNext[mt.ReadResourceRequestParams, ResourceResult],
    ) -> ResourceResult:
        await self.check_resource_access(context)
        result: ResourceResult = await self._guarded("resources/read", context, call_next)
        return result

    async def _guarded(
        self, method: str, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        fastmcp_context = context.fastmcp_context
        request_context = fastmcp_context.request_context if fastmcp_context else None
        sdk_context = getattr(request_context, "_srctx", None)
        version = normalise_version(getattr(request_context, "protocol_version", None))
        exchange = Exchange(
            self.guard, self.relay, self._session(request_context, version), version
        )
        wire = getattr(sdk_context, "params", None)
        if wire is None and context.message is not None:
            wire = context.message.model_dump(by_alias=True, mode="json", exclude_none=True)
        params = exchange.request(method, wire)
        if params is not wire and sdk_context is not None:
            sdk_context.params = params  # where the tool reads `ctx.input_responses` from
        try:
            result = await call_next(context)
        except MCPError as exc:
            raise exchange.error(exc) from None
        except BaseException:
            exchange.settle()
            raise
        if not isinstance(result, _INPUT_REQUIRED):
            exchange.result(None)
            return result
        dumped = result.input_required.model_dump(by_alias=True, mode="json", exclude_none=True)
        replacement = exchange.result(dumped)
        if replacement is None:
            return result
        return type(result)(mt.InputRequiredResult.model_validate(replacement))

    def _session(self, request_context: Any, version: str | None) -> str:
        session = getattr(request_context, "session", None)
        if is_modern(version) or session is None:
            return "fastmcp:modern"
        key = self._sessions.get(session)
        if key is None:
            key = f"fastmcp:{uuid.uuid4().hex}"
            self._sessions[session] = key
        return key
