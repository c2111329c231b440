"""Reading raw JSON-RPC JSONL: one message per line, no envelope, direction inferred.

Logs written by stdio tees, SDK debug hooks and proxies are usually just the messages. The
direction of each one is inferred by the algorithm below, which never guesses: a line whose
direction it cannot establish is reported in ``errors[]`` and skipped.

Direction inference (stated in the README too)
-----------------------------------------------
The two directions have separate id spaces (a server's ``elicitation/create`` may reuse
``"id": 1`` while the client's own ids also start at 1), so the reader keeps the open
requests of each direction apart.

1. **Requests** (``method`` and ``id``), by method:

   * ``elicitation/create``, ``sampling/createMessage`` and ``roots/list`` go server to client;
   * ``tasks/result``, ``tasks/get``, ``tasks/cancel``, ``tasks/update`` and
     ``tasks/input_response`` go to whichever side holds the task named by
     ``params.taskId`` when the capture showed who created it (a ``CreateTaskResult``
     returned by the client means the client holds it); for a task the capture never
     created, ``tasks/result`` goes server to client (that is how a task-augmented
     elicitation is answered) and the others client to server;
   * ``ping`` goes both ways and its direction is unknowable: it is skipped (and so is its
     response) without an error, since no rule reads either;
   * every other method goes client to server.

   The request is then open in its direction's id space until answered.
2. **Responses** (``id`` with ``result`` or ``error``, no ``method``) travel opposite to the
   open request with that id. An id open in exactly one direction decides. An id open in
   both (common: SDKs on both sides count from 1) is decided by the result's required
   fields when they fit only one of the two requests: an ``ElicitResult`` needs ``action``
   (or, for a task-augmented request, the ``task`` of a ``CreateTaskResult``), a
   ``CreateMessageResult`` ``model``, a ``ListRootsResult`` ``roots``, a ``CallToolResult``
   ``content`` (or ``task`` when augmented, or ``resultType``), an ``InitializeResult``
   ``protocolVersion``; other client methods fit any result, except that no result of a
   client-to-server method holds ``action``, the field only ``ElicitResult`` has (an
   accepted ``ElicitResult`` also has ``content``). When both fit (an error
   response always does) or the id is open in neither direction, the line is ambiguous:
   reported and skipped, and the open requests stay open. A response to a skipped ``ping``
   is skipped silently unless its id is also open in a known direction, which makes it
   ambiguous.
3. **Notifications** (``method``, no ``id``): ``notifications/elicitation/complete`` goes
   server to client; so do ``notifications/message``, the ``list_changed`` and
   ``resources/updated`` notifications; ``notifications/initialized`` and
   ``notifications/roots/list_changed`` go client to server;
   ``notifications/progress`` goes opposite to the open request whose
   ``params._meta.progressToken`` it names and ``notifications/cancelled`` the same way as
   the open request it cancels. A notification whose direction stays unknown is skipped
   without an error when no rule reads it (any but the completion notification, whose
   direction is fixed), because skipping it cannot hide a finding.
4. An ``initialize`` request starts a new session (labelled ``session-1``, ``session-2``,
   ...): the open requests and the protocol state of the previous one are dropped, as when
   a stdio log holds several runs. Lines before the first ``initialize`` (a 2026-07-28 log
   has none) belong to no labelled session.

Memory stays flat: lines are read one at a time and the open-request maps are bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from elicitguard.errors import FrameError
from elicitguard.lint.capture import CaptureEntry, Location, Skipped
from elicitguard.lint.envelopes import LineError, read_lines
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.parsing import parse_frame
from elicitguard.protocol.session import BoundedMap

__all__ = ["DirectionInference", "read_jsonrpc"]

C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT

SERVER_REQUESTS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
TASK_REQUESTS = frozenset(
    {"tasks/result", "tasks/get", "tasks/cancel", "tasks/update", "tasks/input_response"}
)
SERVER_NOTIFICATIONS = frozenset(
    {
        "notifications/elicitation/complete",
        "notifications/message",
        "notifications/resources/updated",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
    }
)
CLIENT_NOTIFICATIONS = frozenset({"notifications/initialized", "notifications/roots/list_changed"})
#: The only notification a rule reads; its direction is fixed above.
READ_NOTIFICATIONS = frozenset({"notifications/elicitation/complete"})
_LIMIT = 4096


def _id_key(value: Any) -> Any:
    """Ids are str or number; ``1`` and ``"1"`` are different ids."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return (type(value).__name__, value)
    return None


_REQUIRED_RESULT_KEYS = {
    "elicitation/create": ("action",),
    "sampling/createMessage": ("model",),
    "roots/list": ("roots",),
    "tools/call": ("content", "resultType"),
    "initialize": ("protocolVersion",),
}


def _fits(message: dict[str, Any], method: str, augmented: bool) -> bool:
    """Whether ``message`` can be the response to a ``method`` request (required fields)."""
    result = message.get("result")
    if not isinstance(result, dict):
        return True  # an error response can answer anything
    if augmented and isinstance(result.get("task"), dict):
        return True
    required = _REQUIRED_RESULT_KEYS.get(method)
    if method == "tasks/result":
        required = ("action", "model", "roots", "content")
    elif method not in SERVER_REQUESTS and "action" in result:
        return False
    return required is None or any(k in result for k in required)


def _opposite(direction: Direction) -> Direction:
    return S2C if direction is C2S else C2S


@dataclass(slots=True)
class DirectionInference:
    """The state of the algorithm in the module docstring, for one session."""

    open: dict[Direction, BoundedMap[Any, tuple[str, bool]]] = field(
        default_factory=lambda: {C2S: BoundedMap(_LIMIT), S2C: BoundedMap(_LIMIT)}
    )
    pings: BoundedMap[Any, bool] = field(default_factory=lambda: BoundedMap(_LIMIT))
    task_holder: BoundedMap[Any, Direction] = field(default_factory=lambda: BoundedMap(_LIMIT))
    progress: BoundedMap[Any, Direction] = field(default_factory=lambda: BoundedMap(_LIMIT))

    def infer(self, message: dict[str, Any]) -> Direction | str | None:
        """The direction, an ambiguity (a reason string), or ``None`` to skip silently."""
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                return self._request(message, method)
            return self._notification(message, method)
        if "id" in message and ("result" in message or "error" in message):
            return self._response(message)
        return "the line is neither a JSON-RPC request, response nor notification"

    def _request(self, message: dict[str, Any], method: str) -> Direction | str | None:
        key = _id_key(message.get("id"))
        if key is None:
            return "the request id is not a string or number"
        if method == "ping":
            self.pings.put(key, True)
            return None
        direction = self._request_direction(message, method)
        params = message.get("params")
        augmented = isinstance(params, dict) and isinstance(params.get("task"), dict)
        self.open[direction].put(key, (method, augmented))
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = _id_key(meta.get("progressToken")) if isinstance(meta, dict) else None
        if token is not None:
            self.progress.put(token, direction)
        return direction

    def _request_direction(self, message: dict[str, Any], method: str) -> Direction:
        if method in SERVER_REQUESTS:
            return S2C
        if method in TASK_REQUESTS:
            params = message.get("params")
            task = _id_key(params.get("taskId")) if isinstance(params, dict) else None
            holder = self.task_holder.get(task) if task is not None else None
            if holder is not None:
                return _opposite(holder)  # the request goes to the side holding the task
            return S2C if method == "tasks/result" else C2S
        return C2S

    def _response(self, message: dict[str, Any]) -> Direction | str | None:
        key = _id_key(message.get("id"))
        if key is None:
            return "the response id is null or not a string or number; it answers no known request"
        in_c2s = key in self.open[C2S]
        in_s2c = key in self.open[S2C]
        if in_c2s and in_s2c:
            fits = {d: _fits(message, *(self.open[d].get(key) or ("", False))) for d in (C2S, S2C)}
            if fits[C2S] == fits[S2C]:
                return "the response id is open in both directions and fits both requests"
            in_c2s, in_s2c = fits[C2S], fits[S2C]
        if not in_c2s and not in_s2c:
            if self.pings.pop(key):
                return None
            return "the response id answers no request seen in this capture"
        if self.pings.get(key):
            return "the response id is open in one direction and also names a ping"
        request_direction = C2S if in_c2s else S2C
        self.open[request_direction].pop(key)
        direction = _opposite(request_direction)
        result = message.get("result")
        task = result.get("task") if isinstance(result, dict) else None
        task_id = _id_key(task.get("taskId")) if isinstance(task, dict) else None
        if task_id is not None:
            self.task_holder.put(task_id, direction)  # the answering side holds the task
        return direction

    def _notification(self, message: dict[str, Any], method: str) -> Direction | str | None:
        if method in SERVER_NOTIFICATIONS:
            return S2C
        if method in CLIENT_NOTIFICATIONS:
            return C2S
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        found: Direction | None = None
        if method == "notifications/progress":
            holder = self.progress.get(_id_key(params.get("progressToken")))
            found = _opposite(holder) if holder is not None else None
        elif method == "notifications/cancelled":
            key = _id_key(params.get("requestId"))
            in_c2s = key in self.open[C2S]
            if in_c2s != (key in self.open[S2C]):
                found = C2S if in_c2s else S2C
        if found is not None:
            return found
        if method in READ_NOTIFICATIONS:  # pragma: no cover - fixed above
            return "the notification's direction is unknown"
        return None


def read_jsonrpc(
    stream: IO[bytes],
    *,
    max_bytes: int,
    max_depth: int,
    server: str | None = None,
) -> Iterator[CaptureEntry]:
    """Yield one entry per non-blank line of a raw JSON-RPC JSONL capture."""
    inference = DirectionInference()
    sessions = 0
    label: str | None = None
    for captured in read_lines(stream, max_bytes):
        where = Location(line=captured.line)
        if captured.data is None:
            error = FrameError(
                "too_large",
                f"line of {captured.size} bytes is over the limit of {max_bytes} bytes",
            )
            yield where, LineError(captured.line, error)
            continue
        try:
            message = parse_frame(captured.data, max_bytes=max_bytes, max_depth=max_depth)
        except FrameError as exc:
            yield where, LineError(captured.line, exc)
            continue
        if message.get("method") == "initialize" and "id" in message:
            inference = DirectionInference()
            sessions += 1
            label = f"session-{sessions}"
        direction = inference.infer(message)
        if direction is None:
            yield where, Skipped("no rule reads this message", report=False)
            continue
        if not isinstance(direction, Direction):
            yield where, Skipped(f"direction cannot be inferred: {direction}; line skipped")
            continue
        yield (
            where,
            Envelope(
                message=message,
                direction=direction,
                side=Side.CAPTURE,
                session=label,
                server=server,
                raw=captured.data,
            ),
        )
