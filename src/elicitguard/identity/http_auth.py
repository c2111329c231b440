"""HTTP bearer authentication for MCP servers: 401 challenges and protected resource metadata.

The MCP authorization spec makes a remote server an OAuth protected resource. It answers a
request without a usable token with HTTP 401 and a ``WWW-Authenticate: Bearer
resource_metadata="..."`` challenge (RFC 9728 section 5.1), and serves the metadata document
at ``/.well-known/oauth-protected-resource`` (with the resource's path appended, RFC 9728
section 3.1, and at the bare path for clients that try it first), naming its authorization
servers. This module builds both, and :class:`RequireAuth` is a pure-ASGI middleware that
puts them in front of any ASGI app (the SDK's ``streamable_http_app()``, the HTTP proxy):

* the metadata document is answered by the middleware, or passed through to the app when
  ``serve_metadata`` is off (an upstream that serves its own);
* a token in the query string (``access_token=``) is refused with 400 ``invalid_request``
  (AU-07; EG604) before anything else;
* a missing token gets 401 when ``require_auth`` is on; an invalid, expired or
  wrong-audience token always gets 401 ``invalid_token`` (AU-02), a missing scope 403;
* otherwise the verified :class:`~elicitguard.identity.principal.Principal` is put into
  ``scope["state"]["elicitguard.principal"]`` and made the current principal for the
  request (:data:`~elicitguard.identity.principal.current_principal`), where the engine
  integrations, the URL binder and the egress guard find it. It is the only principal that
  is ever used for binding.

Refusals are audited (``elicitguard.auth`` events with the reason, never the token).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from elicitguard.audit.records import AuditLog
from elicitguard.base.keys import KeyRing
from elicitguard.errors import KeyConfigError, TokenError
from elicitguard.identity.principal import (
    PRINCIPAL_SCOPE_KEY,
    Principal,
    principal_from_scope,
    use_principal,
)
from elicitguard.identity.tokens import Introspector, TokenConfig, TokenVerifier, bearer_token

__all__ = [
    "PRINCIPAL_SCOPE_KEY",
    "QUERY_TOKEN_PARAMS",
    "WELL_KNOWN_PATH",
    "AuthResult",
    "BearerAuth",
    "RequireAuth",
    "ResourceMetadata",
    "asgi_headers",
    "principal_from_scope",
    "www_authenticate",
]

WELL_KNOWN_PATH = "/.well-known/oauth-protected-resource"
#: Query parameters that carry an access token (RFC 6750 section 2.3 names ``access_token``).
QUERY_TOKEN_PARAMS = frozenset({"access_token", "bearer", "bearer_token", "id_token"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ResourceMetadata:
    """The OAuth protected resource metadata of this server (RFC 9728).

    ``resource`` is the canonical URI clients put in RFC 8707 ``resource`` and tokens carry
    in ``aud``; ``authorization_servers`` are the issuers clients should get tokens from.
    """

    resource: str
    authorization_servers: tuple[str, ...] = ()
    scopes_supported: tuple[str, ...] = ()
    resource_name: str | None = None

    def document(self) -> dict[str, Any]:
        """The JSON document served at the well-known path."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name:
            doc["resource_name"] = self.resource_name
        return doc

    @property
    def metadata_url(self) -> str:
        """Where the document is: the well-known path with the resource's path appended."""
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN_PATH}{parts.path.rstrip('/')}"

    @property
    def metadata_paths(self) -> tuple[str, ...]:
        """The request paths that serve the document."""
        path = urlsplit(self.resource).path.rstrip("/")
        return tuple(dict.fromkeys((WELL_KNOWN_PATH + path, WELL_KNOWN_PATH)))


def _quoted(value: str) -> str:
    clean = "".join(c for c in value if 0x20 <= ord(c) < 0x7F and c not in '"\\')
    return f'"{clean}"'


def www_authenticate(
    metadata_url: str,
    *,
    error: str | None = None,
    description: str | None = None,
    scope: str | None = None,
) -> str:
    """The ``WWW-Authenticate`` value of a Bearer challenge (RFC 6750, RFC 9728)."""
    parts = [f"resource_metadata={_quoted(metadata_url)}"]
    if error:
        parts.append(f"error={_quoted(error)}")
    if description:
        parts.append(f"error_description={_quoted(description)}")
    if scope:
        parts.append(f"scope={_quoted(scope)}")
    return "Bearer " + ", ".join(parts)


@dataclass(frozen=True, slots=True)
class AuthResult:
    """The outcome of authenticating one request.

    ``status`` 0 means go on (with ``principal``, or anonymously when it is ``None``);
    otherwise answer with ``status``, ``headers`` and ``body`` and do not forward.
    """

    principal: Principal | None = None
    status: int = 0
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    reason: str | None = None
    code: str | None = None


@dataclass(slots=True)
class BearerAuth:
    """Authenticates requests: the verifier, the metadata, and what is required."""

    verifier: TokenVerifier | None
    metadata: ResourceMetadata
    require_auth: bool = True
    serve_metadata: bool = True
    audit: AuditLog | None = None
    server: str | None = None
    counters: dict[str, int] = field(default_factory=lambda: {"ok": 0, "refused": 0})

    def __post_init__(self) -> None:
        if self.require_auth and self.verifier is None:
            msg = "identity.require_auth needs a token verifier (identity.jwks, jwks_url or introspection)"
            raise KeyConfigError(msg)

    @classmethod
    def from_policy(
        cls,
        identity: Mapping[str, Any],
        keys: KeyRing,
        *,
        audit: AuditLog | None = None,
        server: str | None = None,
        introspect: Introspector | None = None,
    ) -> BearerAuth | None:
        """Build from a policy's ``identity`` section; ``None`` when no audience is set."""
        audience = identity.get("audience")
        if not audience:
            if identity.get("require_auth"):
                raise KeyConfigError(
                    "identity.require_auth needs identity.audience: this server's canonical URI"
                )
            return None
        verifier = None
        if identity.get("jwks") or identity.get("jwks_url") or introspect is not None:
            verifier = TokenVerifier(TokenConfig.from_policy(identity, introspect=introspect), keys)
            if verifier.jwks is not None and identity.get("jwks"):
                verifier.jwks.keys()  # a JWKS file that cannot be read fails at start
        metadata = ResourceMetadata(
            resource=audience,
            authorization_servers=tuple(
                identity.get("authorization_servers") or identity.get("issuers") or ()
            ),
            scopes_supported=tuple(identity.get("scopes_supported") or ()),
        )
        return cls(
            verifier,
            metadata,
            require_auth=bool(identity.get("require_auth")),
            serve_metadata=identity.get("serve_metadata", True) is not False,
            audit=audit,
            server=server,
        )

    def authenticate(self, headers: Mapping[str, str], query: str = "") -> AuthResult:
        """Decide about one request from its (lower-cased) headers and raw query string."""
        if query and _query_token(query):
            return self._refuse(
                400,
                "invalid_request",
                "access tokens must be sent in the Authorization header, never in the URL",
                "query_token",
                "EG604",
            )
        if headers.get(":duplicate-authorization") == "1":
            return self._refuse(
                400, "invalid_request", "more than one Authorization header", "duplicate", None
            )
        token = bearer_token(headers)
        if token is None:
            if self.require_auth:
                return self._refuse(401, None, None, "missing", None)
            return AuthResult()
        if self.verifier is None:
            return AuthResult()  # nothing to verify with: anonymous, and EG501 says so
        try:
            principal = self.verifier.verify(token)
        except TokenError as exc:
            status = 403 if exc.error == "insufficient_scope" else 401
            return self._refuse(status, exc.error, str(exc), exc.reason, exc.code)
        except KeyConfigError:
            # The JWKS cannot be read: nobody can be verified, so nobody gets in (fail closed).
            return self._refuse(
                503, "temporarily_unavailable", "tokens cannot be verified now", "jwks", None
            )
        self.counters["ok"] += 1
        return AuthResult(principal=principal)

    def _refuse(
        self,
        status: int,
        error: str | None,
        description: str | None,
        reason: str,
        code: str | None,
    ) -> AuthResult:
        self.counters["refused"] += 1
        if self.audit is not None:
            self.audit.event(
                "elicitguard.auth",
                outcome="refused",
                status=status,
                reason=reason,
                code=code,
                server=self.server,
            )
        challenge = www_authenticate(
            self.metadata.metadata_url, error=error, description=description
        )
        body: dict[str, Any] = {"error": error or "unauthorized"}
        if description:
            body["error_description"] = description
        return AuthResult(
            status=status,
            headers=(
                ("www-authenticate", challenge),
                ("content-type", "application/json"),
                ("cache-control", "no-store"),
            ),
            body=orjson.dumps(body),
            reason=reason,
            code=code,
        )

    def metadata_response(self) -> AuthResult:
        """The metadata document as a 200 response."""
        return AuthResult(
            status=200,
            headers=(
                ("content-type", "application/json"),
                ("access-control-allow-origin", "*"),
                ("cache-control", "max-age=3600"),
            ),
            body=orjson.dumps(self.metadata.document()),
        )


def _query_token(query: str) -> bool:
    try:
        pairs = parse_qsl(query, keep_blank_values=False)
    except ValueError:
        return False
    return any(name.lower() in QUERY_TOKEN_PARAMS and value for name, value in pairs)


def asgi_headers(scope: Mapping[str, Any]) -> dict[str, str]:
    """An ASGI scope's headers as a lower-cased dict.

    A repeated ``Authorization`` header is flagged with the pseudo-header
    ``:duplicate-authorization`` (two tokens in one request are refused, never guessed).
    """
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers") or ():
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name in headers:
            if name == "authorization":
                headers[":duplicate-authorization"] = "1"
            headers[name] = headers[name] + ", " + value
        else:
            headers[name] = value
    return headers


async def _respond(send: Send, result: AuthResult, *, head: bool = False) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in result.headers]
    headers.append((b"content-length", str(len(result.body)).encode()))
    await send({"type": "http.response.start", "status": result.status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else result.body})


class RequireAuth:
    """Pure-ASGI middleware: metadata, 401 challenges, and the verified principal.

    Wrap any ASGI app: ``app = RequireAuth(mcp.streamable_http_app(), auth)``. Lifespan and
    other non-HTTP scopes pass through untouched.
    """

    def __init__(self, app: ASGIApp, auth: BearerAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "websocket" and self.auth.require_auth:
            await send({"type": "websocket.close", "code": 1008})  # MCP has no websocket transport
            return
        if kind != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "GET")
        path = scope.get("path", "")
        if path in self.auth.metadata.metadata_paths and method in ("GET", "HEAD"):
            if self.auth.serve_metadata:
                await _respond(send, self.auth.metadata_response(), head=method == "HEAD")
                return
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        result = self.auth.authenticate(asgi_headers(scope), query)
        if result.status:
            await _respond(send, result)
            return
        inner = dict(scope)
        state = dict(scope.get("state") or {})
        state[PRINCIPAL_SCOPE_KEY] = result.principal
        inner["state"] = state
        with use_principal(result.principal):
            await self.app(inner, receive, send)
