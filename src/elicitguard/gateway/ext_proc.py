"""``envoy.service.ext_proc.v3.ExternalProcessor``: the guard as Envoy's external processor.

Envoy opens one ``Process`` stream per HTTP exchange and sends the phases its filter is
configured for; each gets one answer. The filter should send request headers and a
buffered request body, and response headers; the answer to the response headers overrides
the response body mode (``allow_mode_override: true``): buffered for JSON, streamed for
SSE (judged event by event), not sent at all for anything else. What the guard decides maps
to the protocol:

* unchanged: ``CONTINUE``;
* a changed message (an ``inputRequests`` entry removed, an answer redacted or declined, a
  sealed ``requestState``): a body mutation, with ``Content-Length`` and the ``Mcp-*``
  headers made consistent with it;
* a message answered by the guard (a blocked request, a parse error, a 401 challenge): an
  immediate response carrying the same status and JSON-RPC error the HTTP proxy sends.

``Accept-Encoding`` is removed from requests so bodies arrive uncompressed and can be
judged. When the guard fails unexpectedly the exchange fails closed (an immediate
``-32603`` error, audited as ``elicitguard.gateway_error``) unless the policy's
``on_error`` says warn. In Envoy's ``observability_mode`` the answers are ignored by Envoy:
the service still judges and audits every message (monitor only).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import unquote

import grpc
from envoy.config.core.v3 import base_pb2
from envoy.extensions.filters.http.ext_proc.v3 import processing_mode_pb2
from envoy.service.ext_proc.v3 import external_processor_pb2 as pb
from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc
from envoy.type.v3 import http_status_pb2

from elicitguard.engine.engine import Engine
from elicitguard.gateway.asgi_bridge import Exchange, PhaseResult, SideRequest
from elicitguard.gateway.principal import principal_from_metadata
from elicitguard.gateway.shared_state import SharedState, Touched, reset_touched, touched_scope
from elicitguard.identity.principal import PRINCIPAL_SCOPE_KEY
from elicitguard.integrations.actions import dumps, error_response, recover_id
from elicitguard.integrations.asgi import ASGIApp, Scope

__all__ = ["ExtProcService", "scope_from_headers"]

_log = logging.getLogger(__name__)
_Mode = processing_mode_pb2.ProcessingMode
_BODY_MODES = {"json": _Mode.BUFFERED, "sse": _Mode.STREAMED, "pass": _Mode.NONE}
_OVERWRITE = base_pb2.HeaderValueOption.OVERWRITE_IF_EXISTS_OR_ADD


def _header_pairs(header_map: Any) -> list[tuple[bytes, bytes]]:
    pairs: list[tuple[bytes, bytes]] = []
    for header in header_map.headers:
        value = header.raw_value if header.raw_value else header.value.encode("latin-1")
        pairs.append((header.key.lower().encode("latin-1"), bytes(value)))
    return pairs


def scope_from_headers(pairs: list[tuple[bytes, bytes]]) -> Scope:
    """An ASGI HTTP scope from Envoy's request headers (pseudo-headers included)."""
    pseudo = {k: v for k, v in pairs if k.startswith(b":")}
    headers = [(k, v) for k, v in pairs if not k.startswith(b":")]
    authority = pseudo.get(b":authority")
    if authority is not None and not any(k == b"host" for k, _ in headers):
        headers.insert(0, (b"host", authority))
    target = pseudo.get(b":path", b"/")
    raw_path, _, query = target.partition(b"?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": pseudo.get(b":method", b"GET").decode("latin-1").upper(),
        "scheme": pseudo.get(b":scheme", b"http").decode("latin-1"),
        "path": unquote(raw_path.decode("latin-1")),
        "raw_path": raw_path,
        "query_string": query,
        "root_path": "",
        "headers": headers,
        "client": None,
        "server": None,
        "state": {},
    }


def _mutation(result: PhaseResult) -> pb.HeaderMutation:
    return pb.HeaderMutation(
        set_headers=[
            base_pb2.HeaderValueOption(
                header=base_pb2.HeaderValue(key=k.decode("latin-1"), raw_value=v),
                append_action=_OVERWRITE,
            )
            for k, v in result.set_headers
        ],
        remove_headers=[k.decode("latin-1") for k in result.remove_headers],
    )


def _common(result: PhaseResult) -> pb.CommonResponse:
    common = pb.CommonResponse(status=pb.CommonResponse.CONTINUE)
    if result.set_headers or result.remove_headers:
        common.header_mutation.CopyFrom(_mutation(result))
    if result.kind == "replace" and result.body is not None:
        if result.body:
            common.body_mutation.body = result.body
        else:
            common.body_mutation.clear_body = True
    return common


def _immediate(result: PhaseResult) -> pb.ProcessingResponse:
    headers = [(k, v) for k, v in result.set_headers if k.lower() != b"content-length"]
    return pb.ProcessingResponse(
        immediate_response=pb.ImmediateResponse(
            status=http_status_pb2.HttpStatus(code=result.status),
            headers=_mutation(PhaseResult("respond", set_headers=headers)),
            body=result.body or b"",
            details="elicitguard",
        )
    )


class ExtProcService(pb_grpc.ExternalProcessorServicer):  # type: ignore[misc]
    """The ``Process`` stream: one exchange per stream, driven through the guard."""

    def __init__(
        self,
        guard: ASGIApp,
        engine: Engine,
        *,
        side_request: SideRequest | None = None,
        trust_jwt_metadata: str | None = None,
        state: SharedState | None = None,
    ) -> None:
        self.guard = guard
        self.engine = engine
        #: The shared store's session and round maps (several replicas), or ``None``.
        self.state = state
        self.side_request = side_request
        #: ``PROVIDER/KEY`` of Envoy's ``jwt_authn`` payload to take the principal from.
        self.trust_jwt_metadata = trust_jwt_metadata
        self.streams = 0
        self.failures = 0

    async def Process(
        self,
        request_iterator: AsyncIterator[pb.ProcessingRequest],
        context: grpc.aio.ServicerContext[pb.ProcessingRequest, pb.ProcessingResponse],
    ) -> AsyncIterator[pb.ProcessingResponse]:
        self.streams += 1
        exchange: Exchange | None = None
        body = b""
        failed = False
        touched = Touched()
        try:
            async for request in request_iterator:
                if failed:  # on_error: warn lets the rest of the exchange through
                    yield _continue_for(request)
                    continue
                token = touched_scope(touched)
                try:
                    answer, exchange = await self._phase(request, exchange, body)
                    if self.state is not None:
                        self.state.flush(touched)
                except Exception as exc:  # the guard must never take the traffic down
                    failed = True
                    answer = self._failure(request, exc, body)
                finally:
                    reset_touched(token)
                if request.WhichOneof("request") == "request_body":
                    body = request.request_body.body
                yield answer
                if answer.WhichOneof("response") == "immediate_response":
                    return  # Envoy sends the answer and ends the exchange
        finally:
            if exchange is not None:
                await exchange.close()

    async def _phase(
        self, request: pb.ProcessingRequest, exchange: Exchange | None, body: bytes
    ) -> tuple[pb.ProcessingResponse, Exchange | None]:
        phase = request.WhichOneof("request")
        if phase == "request_headers":
            scope = scope_from_headers(_header_pairs(request.request_headers.headers))
            self._principal(request, scope)
            exchange = Exchange(
                self.guard,
                scope,
                end_of_stream=request.request_headers.end_of_stream,
                side_request=self.side_request,
            )
            result = await exchange.start()
            return _answer("request_headers", result), exchange
        if exchange is None:
            return _continue_for(request), exchange
        if phase == "request_body":
            result = await exchange.request_body_phase(request.request_body.body)
            return _answer("request_body", result), exchange
        if phase == "response_headers":
            pairs = _header_pairs(request.response_headers.headers)
            status = next((v for k, v in pairs if k == b":status"), b"200")
            headers = [(k, v) for k, v in pairs if not k.startswith(b":")]
            result = await exchange.response_headers_phase(
                int(status or b"200"), headers, end_of_stream=request.response_headers.end_of_stream
            )
            return _answer("response_headers", result), exchange
        if phase == "response_body":
            chunk = request.response_body
            result = await exchange.response_body_phase(
                chunk.body, end_of_stream=chunk.end_of_stream
            )
            return _answer("response_body", result), exchange
        if phase == "response_trailers":
            result = await exchange.response_body_phase(b"", end_of_stream=True)
            if result.kind == "respond":
                return _immediate(result), exchange
            return _continue_for(request), exchange
        return _continue_for(request), exchange

    def _principal(self, request: pb.ProcessingRequest, scope: Scope) -> None:
        """The principal Envoy's ``jwt_authn`` verified, when the service is told to trust it."""
        if self.trust_jwt_metadata is None:
            return
        principal = principal_from_metadata(
            request.metadata_context, self.trust_jwt_metadata, self.engine.keys
        )
        if principal is not None:
            scope["state"][PRINCIPAL_SCOPE_KEY] = principal

    def _failure(
        self, request: pb.ProcessingRequest, exc: Exception, body: bytes
    ) -> pb.ProcessingResponse:
        """Fail closed (unless ``on_error`` says warn): an immediate -32603, audited."""
        self.failures += 1
        _log.warning("elicitguard ext_proc failure: %s", type(exc).__name__)
        self.engine.audit.event(
            "elicitguard.gateway_error",
            error=type(exc).__name__,
            phase=request.WhichOneof("request"),
            service="ext_proc",
        )
        if self.engine.policy.on_error != "block":
            return _continue_for(request)
        jsonrpc_id, _ = recover_id(body)
        payload = dumps(
            error_response(
                jsonrpc_id,
                -32603,
                "elicitguard failed to check this message",
                {"elicitguard": {"reason": "gateway_error"}},
            )
        )
        return _immediate(
            PhaseResult(
                "respond",
                body=payload,
                status=500,
                set_headers=[(b"content-type", b"application/json")],
            )
        )


def _answer(phase: str, result: PhaseResult) -> pb.ProcessingResponse:
    if result.kind == "respond":
        return _immediate(result)
    common = _common(result)
    if phase in ("request_headers", "response_headers"):
        response = pb.ProcessingResponse(**{phase: pb.HeadersResponse(response=common)})
        if phase == "response_headers" and result.response_mode is not None:
            response.mode_override.CopyFrom(
                _Mode(response_body_mode=_BODY_MODES[result.response_mode])
            )
        return response
    return pb.ProcessingResponse(**{phase: pb.BodyResponse(response=common)})


_CONTINUE_FIELDS: Mapping[str, tuple[str, Any]] = {
    "request_headers": ("request_headers", pb.HeadersResponse),
    "response_headers": ("response_headers", pb.HeadersResponse),
    "request_body": ("request_body", pb.BodyResponse),
    "response_body": ("response_body", pb.BodyResponse),
    "request_trailers": ("request_trailers", pb.TrailersResponse),
    "response_trailers": ("response_trailers", pb.TrailersResponse),
}


def _continue_for(request: pb.ProcessingRequest) -> pb.ProcessingResponse:
    phase = request.WhichOneof("request") or "request_headers"
    name, kind = _CONTINUE_FIELDS[phase]
    if kind is pb.TrailersResponse:
        return pb.ProcessingResponse(**{name: kind()})
    return pb.ProcessingResponse(**{name: kind(response=pb.CommonResponse())})
