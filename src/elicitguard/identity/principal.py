"""The verified principal: who sent a request, as established by a checked bearer token.

Only :class:`Principal` objects made by :class:`~elicitguard.identity.tokens.TokenVerifier`
(or by an operator's own verifier) are ever used for binding. A client's claims about
itself (``_meta`` keys, ``X-User-*`` headers, ``clientInfo``) never become one (ID-01, CP-04).

The binding identity is the pair (issuer, subject): two issuers may hand out the same
``sub``. Audience and scopes describe the token, not the user, and are not part of it.
The token itself is never kept, only a keyed fingerprint, which is enough to recognise the
same token again (EG601, token passthrough) and useless to anyone who reads it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PRINCIPAL_SCOPE_KEY",
    "Principal",
    "current_principal",
    "principal_from_scope",
    "principal_key",
    "use_principal",
]

#: Where the HTTP middleware puts the verified principal: ``scope["state"][...]``.
PRINCIPAL_SCOPE_KEY = "elicitguard.principal"


@dataclass(frozen=True, slots=True)
class Principal:
    """A verified identity.

    ``token_fingerprint`` is a keyed hash of the bearer token (never the token), with which
    the egress guard recognises the client's token on an outbound call; ``expires_at`` is
    the token's ``exp``; ``client_id`` its ``client_id`` or ``azp`` claim, when present.
    """

    issuer: str
    subject: str
    audience: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    token_fingerprint: str = field(default="", repr=False)
    expires_at: float | None = None
    client_id: str | None = None

    @property
    def key(self) -> str:
        """The binding identity: issuer and subject, unambiguously joined."""
        return _join(self.issuer, self.subject)


def principal_key(principal: Any) -> str | None:
    """The binding identity of ``principal``, or ``None`` when it is not a verified principal.

    Accepts any object with ``issuer`` and ``subject`` strings (an operator's own class);
    anything else, a dict a client could have sent included, gives ``None``.
    """
    if principal is None:
        return None
    issuer = getattr(principal, "issuer", None)
    subject = getattr(principal, "subject", None)
    if not isinstance(issuer, str) or not isinstance(subject, str) or not subject:
        return None
    return _join(issuer, subject)


def _join(issuer: str, subject: str) -> str:
    return f"{len(issuer)}:{issuer}|{subject}"


#: The principal of the request being handled, for code that has no envelope at hand (the
#: egress guard inside a tool, the URL binder). The HTTP middleware and the server
#: integrations set it for the duration of each request.
current_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "elicitguard_current_principal", default=None
)


@contextlib.contextmanager
def use_principal(principal: Principal | None) -> Iterator[None]:
    """Make ``principal`` the current one inside the ``with`` block."""
    token = current_principal.set(principal)
    try:
        yield
    finally:
        current_principal.reset(token)


def principal_from_scope(scope: Mapping[str, Any]) -> Principal | None:
    """The verified principal ``RequireAuth`` put into an ASGI scope, if any."""
    state = scope.get("state")
    if isinstance(state, Mapping):
        principal = state.get(PRINCIPAL_SCOPE_KEY)
        if isinstance(principal, Principal):
            return principal
    return None
