"""The ASGI types the guard speaks, and one exchange (an HTTP request and its response).

Why: the middleware (:mod:`elicitguard.integrations.asgi`) and the response filter
(:mod:`elicitguard.integrations.asgi_responses`) both follow an exchange; its shape lives
here, below both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NO_ID",
    "UPSTREAM_END",
    "ASGIApp",
    "Exchange",
    "Message",
    "Receive",
    "Scope",
    "Send",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Scope key the forwarding app sets when it cut the upstream's answer short on purpose (a
#: timeout, a shutdown): ``{"reason": ..., **details}``, carried by the error the client gets.
UPSTREAM_END = "elicitguard.upstream_end"
#: An exchange whose request had no id (a notification) or has not been read yet.
NO_ID: Any = object()


@dataclass(slots=True)
class Exchange:
    """One HTTP request and its response, as the guard follows it."""

    scope: Scope
    headers: dict[str, str]
    session: str
    ephemeral: bool
    request_id: Any = NO_ID
    answered: bool = False
    new_session: str | None = None
    #: The verified principal ``RequireAuth`` put in the scope (never a client's claim).
    principal: Any = None

    @property
    def protocol_version(self) -> str | None:
        return self.headers.get("mcp-protocol-version")

    @property
    def judged_headers(self) -> dict[str, str]:
        """The headers rules see: the request's, plus its target as ``:path`` (EG604).

        Only for evaluation; recordings keep the plain headers, so a token in a query string
        is never written to a capture.
        """
        path = self.scope.get("raw_path") or str(self.scope.get("path", "")).encode()
        target = path.decode("latin-1") if isinstance(path, bytes) else str(path)
        query = self.scope.get("query_string") or b""
        if query:
            target += "?" + query.decode("latin-1")
        return {**self.headers, ":path": target}
