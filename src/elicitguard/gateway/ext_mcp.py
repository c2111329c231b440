"""agentgateway's ExtMcp guardrail hook: ``CheckRequest`` and ``CheckResponse``.

agentgateway calls the hook with a JSON-RPC method and its ``params`` before forwarding a
request, and with the method and the server's ``result`` before returning it. The hook
answers ``pass``, ``mutated`` (new params or result) or ``error`` (an authorization error,
with the MCP error the client gets). Each call is judged by the same
:class:`~elicitguard.integrations.actions.Relay` the HTTP proxy uses, as the JSON-RPC
message it stands for.

Params, results and errors travel as raw JSON bytes; the gateway's ``metadata_context`` is
a Struct of the values its configuration computes. The hook carries no JSON-RPC id and does not correlate a result with its request, nor a
retry with the round it answers, so this service does:

* requests and results meet in a session per principal and backend (in the shared store
  when one is configured): a result is paired with the oldest open request of the same
  method;
* a 2026-07-28 round is bound to its retry by the digest of the ``requestState`` the
  server issued and the principal it was issued to, single use: a retry echoing a state
  never issued to this principal (tampered, another user's, or already used) is refused
  with ``INVALID`` and audited as ``elicitguard.round_refused``.

The principal comes from the gateway's ``metadata_context``: the claims of the token the
gateway verified (``iss`` and ``sub``, at the top level or under ``jwt``/``claims``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from elicitguard.engine.engine import Engine
from elicitguard.gateway import ext_mcp_proto as wire
from elicitguard.gateway.principal import principal_from_claims
from elicitguard.identity.principal import Principal
from elicitguard.identity.stores import MemoryStore, SecureStore
from elicitguard.integrations.actions import Drop, Forward, Outcome, Relay, Replace, Reply, dumps
from elicitguard.protocol.envelope import Direction, Side, Transport

__all__ = ["ExtMcpService", "add_service"]

ROUND_NS = "ext-mcp-round"
PENDING_NS = "ext-mcp-pending"
_C2S = Direction.CLIENT_TO_SERVER
_S2C = Direction.SERVER_TO_CLIENT


def _json(data: bytes) -> dict[str, Any]:
    """A JSON object from the wire (bounded by the gRPC message limit); ``{}`` for none."""
    if not data:
        return {}
    value = json.loads(data)
    if not isinstance(value, dict):
        msg = "expected a JSON object"
        raise ValueError(msg)
    return value


def _plain(message: Any) -> dict[str, Any]:
    if not message.ByteSize() and not message.fields:
        return {}
    data = json_format.MessageToDict(message)
    return data if isinstance(data, dict) else {}


def _integral(value: Any) -> Any:
    """Struct numbers are doubles: give whole numbers back as ints (ids, counts)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def principal_from_context(context: dict[str, Any]) -> Principal | None:
    """The verified principal the gateway put in ``metadata_context``, if any."""
    for candidate in (context, context.get("jwt"), context.get("claims")):
        if isinstance(candidate, dict):
            principal = principal_from_claims(candidate)
            if principal is not None:
                return principal
    return None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ExtMcpService:
    """The ExtMcp service (register with :func:`add_service`)."""

    def __init__(
        self,
        engine: Engine,
        *,
        shared: SecureStore | None = None,
        server: str | None = None,
        ttl_s: float | None = None,
    ) -> None:
        self.engine = engine
        self.relay = Relay(engine, side=Side.PROXY, transport=Transport.HTTP, server=server)
        self.store: SecureStore = shared if shared is not None else MemoryStore(engine.keys)
        self.ttl_s = ttl_s if ttl_s is not None else engine.policy.limits.state_ttl_s
        self.state = None
        if shared is not None:
            from elicitguard.gateway.shared_state import SharedStateStore

            self.state = SharedStateStore(shared, ttl_s=self.ttl_s)
            engine.store = self.state
        self._ids = itertools.count(1)
        self.refused = 0

    # --- the two calls --------------------------------------------------------------------

    async def check_request(self, data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        request = await _parse(wire.McpRequest, data, context)
        return self._guarded(self._check_request, request, wire.McpRequestResult)

    async def check_response(self, data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        request = await _parse(wire.McpResponse, data, context)
        return self._guarded(self._check_response, request, wire.McpResponseResult)

    def _guarded(self, handler: Any, request: Any, result_type: Any) -> Any:
        from elicitguard.gateway.shared_state import (
            Touched,
            flush_sessions,
            reset_touched,
            touched_scope,
        )

        touched = Touched()
        token = touched_scope(touched)
        try:
            result = handler(request)
            if self.state is not None:
                flush_sessions(touched, self.state)
            return result
        except Exception as exc:  # fail closed, and say so in the audit log
            self.engine.audit.event(
                "elicitguard.gateway_error", error=type(exc).__name__, service="ext_mcp"
            )
            if self.engine.policy.on_error != "block":
                return _pass(result_type)
            return _error(
                result_type,
                wire.AuthorizationError.UNKNOWN,
                "elicitguard failed to check this message",
            )
        finally:
            reset_touched(token)

    def _session(self, request: Any) -> tuple[str, Principal | None, str]:
        context = _integral(_plain(request.metadata_context))
        principal = principal_from_context(context)
        owner = principal.key if principal is not None else "anonymous"
        service = ",".join(sorted(request.service_names))
        session = "ext-mcp:" + _digest(f"{owner}\x00{service}")[:32]
        return session, principal, owner

    def _check_request(self, request: Any) -> Any:
        session, principal, owner = self._session(request)
        params = _json(request.mcp_request) if request.HasField("mcp_request") else {}
        state = params.get("requestState")
        retry = isinstance(state, str) and "inputResponses" in params
        if retry and self.store.take(ROUND_NS, owner, _digest(str(state))) is None:
            return self._refuse(
                request.method,
                "requestState was not issued to this principal, or was already used",
            )
        jsonrpc_id = f"eg-{next(self._ids)}-{_digest(session)[:8]}"
        message = {"jsonrpc": "2.0", "id": jsonrpc_id, "method": request.method, "params": params}
        outcome = self.relay.inspect(
            message, _C2S, raw=dumps(message), session=session, principal=principal
        )
        result = self._request_result(outcome)
        if result.WhichOneof("result") != "error":
            self._pending_push(owner, _service(request), request.method, jsonrpc_id)
        return result

    def _check_response(self, request: Any) -> Any:
        session, principal, owner = self._session(request)
        result = _json(request.mcp_response)
        jsonrpc_id = self._pending_pop(owner, _service(request), request.method)
        message = {"jsonrpc": "2.0", "id": jsonrpc_id, "result": result}
        outcome = self.relay.inspect(
            message, _S2C, raw=dumps(message), session=session, principal=principal
        )
        answer = self._response_result(outcome)
        final = result
        if answer.WhichOneof("result") == "mutated":
            final = _json(answer.mutated)
        if answer.WhichOneof("result") != "error":
            issued = final.get("requestState")
            if isinstance(issued, str) and final.get("inputRequests"):
                self.store.put(ROUND_NS, owner, _digest(issued), b"1", self.ttl_s)
        return answer

    # --- pairing requests with results ----------------------------------------------------

    def _pending_key(self, service: str, method: str) -> str:
        return f"{service}\x00{method}"

    def _pending_push(self, owner: str, service: str, method: str, jsonrpc_id: str) -> None:
        key = self._pending_key(service, method)
        blob = self.store.get(PENDING_NS, owner, key)
        queue = json.loads(blob) if blob else []
        queue = [*queue[-63:], jsonrpc_id]
        self.store.put(PENDING_NS, owner, key, json.dumps(queue).encode(), self.ttl_s)

    def _pending_pop(self, owner: str, service: str, method: str) -> str | None:
        key = self._pending_key(service, method)
        blob = self.store.get(PENDING_NS, owner, key)
        queue = json.loads(blob) if blob else []
        if not queue:
            return None
        first, rest = queue[0], queue[1:]
        if rest:
            self.store.put(PENDING_NS, owner, key, json.dumps(rest).encode(), self.ttl_s)
        else:
            self.store.delete(PENDING_NS, owner, key)
        return str(first)

    # --- outcomes -------------------------------------------------------------------------

    def _refuse(self, method: str, reason: str) -> Any:
        self.refused += 1
        self.engine.audit.event(
            "elicitguard.round_refused", method=method, service="ext_mcp", reason="request_state"
        )
        error = {
            "code": -32602,
            "message": f"elicitguard: {reason}",
            "data": {"elicitguard": {"reason": "request_state_not_bound"}},
        }
        return _error(wire.McpRequestResult, wire.AuthorizationError.INVALID, reason, error)

    def _request_result(self, outcome: Outcome) -> Any:
        if isinstance(outcome, Forward):
            return _pass(wire.McpRequestResult)
        if isinstance(outcome, Replace) and isinstance(outcome.message.get("params"), dict):
            return wire.McpRequestResult(mutated=dumps(outcome.message["params"]))
        return self._denied(wire.McpRequestResult, outcome)

    def _response_result(self, outcome: Outcome) -> Any:
        if isinstance(outcome, Forward):
            return _pass(wire.McpResponseResult)
        if isinstance(outcome, Replace) and isinstance(outcome.message.get("result"), dict):
            return wire.McpResponseResult(mutated=dumps(outcome.message["result"]))
        return self._denied(wire.McpResponseResult, outcome)

    def _denied(self, result_type: Any, outcome: Outcome) -> Any:
        message = outcome.message if isinstance(outcome, Replace | Reply) else None
        error = message.get("error") if isinstance(message, dict) else None
        reason = "Blocked by elicitguard policy"
        if isinstance(error, dict):
            reason = str(error.get("message") or reason)
            return _error(result_type, wire.AuthorizationError.PERMISSION_DENIED, reason, error)
        if isinstance(outcome, Drop):
            reason = f"elicitguard dropped the message ({outcome.reason})"
        return _error(result_type, wire.AuthorizationError.PERMISSION_DENIED, reason)


async def _parse(
    message_type: Any, data: bytes, context: grpc.aio.ServicerContext[Any, Any]
) -> Any:
    """Parse a request; a malformed one ends the call with INVALID_ARGUMENT (and an audit)."""
    try:
        return message_type.FromString(data)
    except DecodeError:
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT, f"not a well-formed {message_type.DESCRIPTOR.name}"
        )
        raise  # abort raises; this line is for the type checker


def _service(request: Any) -> str:
    return ",".join(sorted(request.service_names))


def _pass(result_type: Any) -> Any:
    result = result_type()
    getattr(result, "pass").SetInParent()
    return result


def _error(
    result_type: Any, code: int, reason: str, mcp_error: dict[str, Any] | None = None
) -> Any:
    error = wire.AuthorizationError(code=code, reason=reason)
    if mcp_error is not None:
        error.mcp_error = dumps(mcp_error)
    return result_type(error=error)


def add_service(service: ExtMcpService, server: grpc.aio.Server) -> None:
    """Register the two methods under ``agentgateway.dev.ext_mcp.ExtMcp``."""
    handlers = {
        "CheckRequest": grpc.unary_unary_rpc_method_handler(
            service.check_request,
            response_serializer=wire.McpRequestResult.SerializeToString,
        ),
        "CheckResponse": grpc.unary_unary_rpc_method_handler(
            service.check_response,
            response_serializer=wire.McpResponseResult.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(wire.SERVICE, handlers),))
