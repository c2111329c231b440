"""Client-side 2025-11-25 tasks for the ``mcp`` client, as a transport wrapper.

``mcp`` 2.3.0 runs elicitation callbacks but does not implement client-side tasks, which
server-everything's ``trigger-elicitation-request-async`` needs: the client must declare
``tasks.requests.elicitation.create``, answer a task-augmented ``elicitation/create`` with a
``CreateTaskResult``, and answer the server's ``tasks/get`` and ``tasks/result`` polls. This
wrapper does that around any real transport (stdio or Streamable HTTP) and asks the same
elicitation callback the client uses; everything else passes through to the SDK unchanged.
"""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCRequest, JSONRPCResponse

TASKS_CAPABILITY = {"requests": {"elicitation": {"create": {}}}}


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")


class TaskClientTransport:
    """Wraps a transport; ``answer(params) -> dict`` gives the ElicitResult for a task."""

    def __init__(self, inner: Any, answer: Any) -> None:
        self._inner = inner
        self._answer = answer
        self._results: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self.task_requests: list[dict[str, Any]] = []

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        self._write = write
        return _Read(read, self), _Write(write)

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    async def handle(self, request: JSONRPCRequest) -> bool:
        """Answer a task request here; False when the SDK should see it."""
        params = request.params or {}
        if request.method == "elicitation/create" and "task" in params:
            self.task_requests.append(params)
            task_id = f"task-{next(self._ids)}"
            self._results[task_id] = await self._answer(params)
            now = _now()
            task = {
                "taskId": task_id,
                "status": "working",
                "createdAt": now,
                "lastUpdatedAt": now,
                "ttl": 60000,
                "pollInterval": 100,
            }
            await self._respond(request, {"task": task})
            return True
        if request.method == "tasks/get":
            now = _now()
            status = {
                "taskId": params.get("taskId"),
                "status": "completed",
                "createdAt": now,
                "lastUpdatedAt": now,
                "ttl": 60000,
            }
            await self._respond(request, status)
            return True
        if request.method == "tasks/result":
            await self._respond(
                request, self._results.get(str(params.get("taskId")), {"action": "cancel"})
            )
            return True
        return False

    async def _respond(self, request: JSONRPCRequest, result: dict[str, Any]) -> None:
        response = JSONRPCResponse(jsonrpc="2.0", id=request.id, result=result)
        await self._write.send(SessionMessage(response))


class _Read:
    def __init__(self, inner: Any, owner: TaskClientTransport) -> None:
        self._inner = inner
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            message = getattr(item, "message", None)
            if isinstance(message, JSONRPCRequest) and await self._owner.handle(message):
                continue
            return item

    def __aiter__(self) -> _Read:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except Exception as exc:  # the inner stream's end
            if type(exc).__name__ in ("EndOfStream", "ClosedResourceError"):
                raise StopAsyncIteration from exc
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Read:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class _Write:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCRequest) and message.method == "initialize":
            params = dict(message.params or {})
            capabilities = dict(params.get("capabilities") or {})
            capabilities["tasks"] = TASKS_CAPABILITY
            params["capabilities"] = capabilities
            message = JSONRPCRequest(
                jsonrpc="2.0", id=message.id, method=message.method, params=params
            )
            item = SessionMessage(message, metadata=item.metadata)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Write:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
