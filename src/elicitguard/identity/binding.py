"""URL-mode binding: the user who completes a URL flow must be the one who started it (PH-01).

A URL-mode elicitation sends the user's browser to a page of the server's (connect an
account, enter an API key). Anyone who gets hold of that URL could open it; the spec asks
the server to check that the person completing the flow is the user it asked, in a way that
survives an attacker editing the URL. The pattern:

1. When the server elicits, :meth:`UrlBinder.issue` makes a handle for the verified
   principal and :meth:`UrlBinder.bind_url` puts it in the URL as ``eg_bind`` (EG306 knows
   the parameter and never reports it as a leaked credential).
2. The page authenticates the browser user on its own (its login, its session cookie), never
   from anything in the URL (EL-18: URL mode does not authorize users to the server), and calls
   :meth:`UrlBinder.complete` with the handle and that user.
3. ``complete`` returns the :class:`Binding` when the user is the one the handle was issued
   to, once; otherwise it raises :class:`~elicitguard.errors.BindingError` with reason
   ``other_user``, ``unknown`` (a made-up or edited handle), ``reused`` or ``expired``, and
   reports EG505 through the engine when one is attached.

A handle is ``<owner tag>.<secret>``: 144 random bits, and a 64-bit keyed tag of the owner
so the entry can be stored as ``<user>:<handle>`` (SB-02). The store holds only HMACs of
both and a sealed record; the comparisons are constant-time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson

from elicitguard.base.keys import KeyRing
from elicitguard.checks.url_keys import BIND_PARAM
from elicitguard.errors import BindingError
from elicitguard.identity.principal import Principal, principal_key
from elicitguard.identity.stores import SecureStore
from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.protocol.items import Item, ItemKind

if TYPE_CHECKING:
    from elicitguard.identity.host import HostEngine

__all__ = ["BIND_PARAM", "Binding", "UrlBinder", "binding_item"]

PURPOSE = "bind"
NAMESPACE = "bind"
USED_NAMESPACE = "bind-used"
SECRET_BYTES = 18  # 144 bits
TAG_BYTES = 8
_HANDLE = re.compile(r"^[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{24}$")
_MESSAGES = {
    "unauthenticated": "the URL flow can only be completed by a signed-in user",
    "unknown": "this link is not valid",
    "expired": "this link has expired; start again from your MCP client",
    "reused": "this link was already used",
    "other_user": "this link was issued to another user",
}


@dataclass(frozen=True, slots=True)
class Binding:
    """A completed binding: who completed it, and what the server attached when issuing."""

    principal: Principal
    elicitation_id: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    issued_at: float = 0.0


def binding_item(outcome: str) -> Item:
    """The ``url_binding`` item that reports one completion attempt to the engine (EG505)."""
    return Item(ItemKind.URL_BINDING, "", None, {"outcome": outcome}, facts={"outcome": outcome})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class UrlBinder:
    """Issues and completes URL binding handles.

    ``store`` keeps the handles: memory for one process, SQLite or Redis when the page that
    completes the flow may run in another process than the one that issued it. ``ttl_s`` is
    how long a user has to open the link; entries are kept ``grace_s`` longer so that an
    expired or reused handle is reported as such rather than as unknown.
    """

    def __init__(
        self,
        store: SecureStore,
        keys: KeyRing,
        *,
        ttl_s: float = 600.0,
        grace_s: float = 3600.0,
        engine: HostEngine | None = None,
        server: str | None = None,
        clock: Any = time.time,
    ) -> None:
        self.store = store
        self.keys = keys
        self.ttl_s = ttl_s
        self.grace_s = grace_s
        self.engine = engine
        self.server = server
        self.clock = clock
        keys.signing_key(PURPOSE)  # fail at start when no key may bind

    # --- issuing --------------------------------------------------------------------------

    def _tag(self, owner: str, key_secret: bytes) -> str:
        mac = hmac.new(
            key_secret, b"bind-owner\x00" + owner.encode("utf-8", "surrogatepass"), hashlib.sha256
        )
        return _b64(mac.digest()[:TAG_BYTES])

    def issue(
        self,
        principal: Principal,
        *,
        elicitation_id: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> str:
        """A new single-use handle for ``principal`` (a verified one; never a client claim)."""
        owner = principal_key(principal)
        if owner is None:
            raise BindingError("unauthenticated", "a binding needs a verified principal")
        tag = self._tag(owner, self.keys.signing_key(PURPOSE).derive("bind-tag"))
        secret = _b64(secrets.token_bytes(SECRET_BYTES))
        now = self.clock()
        record = {
            "o": hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest(),
            "e": elicitation_id,
            "d": dict(data or {}),
            "i": now,
            "x": now + self.ttl_s,
        }
        self.store.put(NAMESPACE, tag, secret, orjson.dumps(record), self.ttl_s + self.grace_s)
        return f"{tag}.{secret}"

    @staticmethod
    def bind_url(url: str, handle: str) -> str:
        """``url`` with ``eg_bind=<handle>`` in its query (replacing any earlier one)."""
        parts = urlsplit(url)
        query = [
            (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != BIND_PARAM
        ]
        query.append((BIND_PARAM, handle))
        return urlunsplit(parts._replace(query=urlencode(query)))

    def issue_url(
        self,
        principal: Principal,
        url: str,
        *,
        elicitation_id: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> tuple[str, str]:
        """Issue a handle and return ``(url with eg_bind, handle)``."""
        handle = self.issue(principal, elicitation_id=elicitation_id, data=data)
        return self.bind_url(url, handle), handle

    # --- completing -----------------------------------------------------------------------

    def complete(self, handle: str, principal: Principal | None) -> Binding:
        """The binding of ``handle`` if ``principal`` started it; raises otherwise (EG505)."""
        owner = principal_key(principal)
        if owner is None or principal is None:
            raise self._fail("unauthenticated", principal)
        if not isinstance(handle, str) or not _HANDLE.match(handle):
            raise self._fail("unknown", principal)
        tag, secret = handle.split(".", 1)
        mine = any(
            hmac.compare_digest(tag, self._tag(owner, key.derive("bind-tag")))
            for key in self.keys.verifying_keys(PURPOSE)
        )
        if not mine:
            exists = self.store.get(NAMESPACE, tag, secret) is not None
            raise self._fail("other_user" if exists else "unknown", principal)
        raw = self.store.take(NAMESPACE, tag, secret)
        if raw is None:
            used = self.store.get(USED_NAMESPACE, tag, secret) is not None
            raise self._fail("reused" if used else "unknown", principal)
        self.store.put(USED_NAMESPACE, tag, secret, b"1", self.grace_s + self.ttl_s)
        record = orjson.loads(raw)
        wanted = hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest()
        if not hmac.compare_digest(str(record.get("o", "")), wanted):
            raise self._fail("other_user", principal)  # a 64-bit tag collision, at most
        if float(record.get("x", 0)) <= self.clock():
            raise self._fail("expired", principal)
        eid = record.get("e")
        data = record.get("d")
        return Binding(
            principal=principal,
            elicitation_id=eid if isinstance(eid, str) else None,
            data=data if isinstance(data, dict) else {},
            issued_at=float(record.get("i", 0.0)),
        )

    def _fail(self, reason: str, principal: Principal | None) -> BindingError:
        if self.engine is not None:
            envelope = Envelope(
                message={},
                direction=Direction.CLIENT_TO_SERVER,
                side=Side.SERVER,
                principal=principal,
                server=self.server,
            )
            self.engine.evaluate(envelope, items=[binding_item(reason)])
        return BindingError(reason, _MESSAGES[reason], code="EG505")


def handle_secret_bits() -> int:
    """How many random bits a handle carries (documented minimum: 128)."""
    return SECRET_BYTES * 8
