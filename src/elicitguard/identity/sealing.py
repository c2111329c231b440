"""requestState sealing: an AEAD envelope around whatever the upstream put in ``requestState``.

In 2026-07-28 a server that needs state across the rounds of a request hands it to the
client in ``requestState`` and gets it back on the retry. The spec calls that value
attacker-controlled (MR-06) and asks for the principal, a short expiry and the originating
request inside the protected state, checked on the way back, and for single use where it
matters (MR-07). ``MCPServer`` in the Python SDK does this itself; the low-level ``Server``,
servers in other languages and anything behind a proxy do not. This module does it for them:

* on the way out, the upstream's ``requestState`` (any string) is sealed with AES-256-GCM
  together with the principal (or the connection when there is none), an expiry, a digest of
  the originating request (method, tool name or URI, arguments), a random single-use id and,
  in the blob header, the key id;
* on the retry, the token is opened and checked (key, integrity, expiry, principal, request,
  then single use through the shared store) and replaced by the exact string the upstream
  issued, before the upstream sees the message. Any failure answers -32602 ``Invalid or
  expired requestState`` (the SDK's own words) and writes an audit event with code EG504.

Tokens look like ``egs1.<base64url>``. Keys rotate like every other key: the newest
``seal`` key seals, all of them open, so a rotation in the middle of a flow keeps working.
With several replicas, give them the same key file and a Redis store: a state sealed by one
is accepted by any other, once.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from elicitguard.audit.records import AuditLog
from elicitguard.base.keys import KeyRing
from elicitguard.errors import StateError
from elicitguard.identity.aead import SealedBlobError, blob_key_id, open_blob, seal_blob
from elicitguard.identity.principal import principal_key
from elicitguard.identity.stores import MemoryStore, SecureStore
from elicitguard.protocol.versions import INPUT_REQUIRED_METHODS

__all__ = [
    "INVALID_STATE_MESSAGE",
    "TOKEN_PREFIX",
    "GuardOutcome",
    "RequestStateGuard",
    "RequestStateSealer",
    "owner_of",
    "request_digest",
]

TOKEN_PREFIX = "egs1."  # noqa: S105 (a format marker, not a secret)
PURPOSE = "seal"
USED_NAMESPACE = "rs-used"
INVALID_STATE_MESSAGE = "Invalid or expired requestState"
INVALID_PARAMS = -32602
_AAD = b"elicitguard requestState v1"
_HEADER = struct.Struct(">BQQ16s16s16s")  # version, expires ms, issued ms, jti, owner, request
_VERSION = 1
_TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/input_response"})
#: Methods whose result may carry requestState (MR-02) plus the tasks extension.
STATE_METHODS = INPUT_REQUIRED_METHODS | _TASK_METHODS
_UNKNOWN_REQUEST = b"\xff" * 16  # never equal to a digest: a state sealed blind never opens
_MESSAGES = {
    "malformed": "the requestState is not one elicitguard sealed",
    "unknown_key": "the requestState was sealed with a key this process does not have",
    "tampered": "the requestState failed its integrity check",
    "expired": "the requestState has expired",
    "wrong_principal": "the requestState was issued to another principal",
    "wrong_request": "the requestState was issued for another request",
    "replayed": "the requestState was already used",
}


def _digest16(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()[:16]


def request_digest(method: str | None, params: Any) -> bytes:
    """A digest of what identifies a request across its rounds (MR-07).

    ``tools/call``, ``prompts/get`` and ``resources/read``: the method, the tool name or
    URI, and the arguments (the retry repeats them). The tasks extension's ``tasks/get`` and
    ``tasks/update``: the task id, since the answer goes to another method than the question.
    ``_meta``, ``inputResponses`` and ``requestState`` are never part of it.
    """
    if method in _TASK_METHODS:
        task_id = params.get("taskId") if isinstance(params, Mapping) else None
        parts: list[Any] = ["tasks", task_id]
    else:
        name: Any = None
        arguments: Any = None
        if isinstance(params, Mapping):
            name = params.get("name", params.get("uri"))
            arguments = params.get("arguments")
        parts = [method, name, arguments]
    try:
        blob = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        blob = repr(parts).encode("utf-8", "surrogatepass")
    return _digest16(b"request\x00" + blob)


def owner_of(principal: Any, connection: str | None = None) -> str:
    """Whom sealed state and stored entries belong to.

    A verified principal when there is one (issuer and subject); otherwise the connection
    (a stdio proxy serves one client) or, for unauthenticated HTTP, nobody in particular:
    the state is then still single use and bound to its request, but not to a user, and
    EG501 reports the missing identity.
    """
    key = principal_key(principal)
    if key is not None:
        return "p:" + key
    if connection:
        return "c:" + connection
    return "anonymous"


class RequestStateSealer:
    """Seals and opens ``requestState`` values.

    ``store`` holds the single-use markers; share it (Redis) between replicas that serve
    the same clients. ``ttl_s`` bounds how long a client may take to answer.
    """

    def __init__(
        self,
        keys: KeyRing,
        store: SecureStore | None = None,
        *,
        ttl_s: float = 600.0,
        single_use: bool = True,
        clock: Any = time.time,
    ) -> None:
        self.keys = keys
        self.store = store if store is not None else MemoryStore(keys)
        self.ttl_s = ttl_s
        self.single_use = single_use
        self.clock = clock
        keys.signing_key(PURPOSE)  # fail at start, not on the first request

    def seal(self, inner: str, *, owner: str, request: bytes) -> str:
        """The token that replaces ``inner`` on the wire."""
        now = int(self.clock() * 1000)
        header = _HEADER.pack(
            _VERSION,
            now + int(self.ttl_s * 1000),
            now,
            os.urandom(16),
            _digest16(b"owner\x00" + owner.encode("utf-8", "surrogatepass")),
            request,
        )
        plaintext = header + inner.encode("utf-8", "surrogatepass")
        blob = seal_blob(self.keys, PURPOSE, plaintext, _AAD)
        return TOKEN_PREFIX + base64.urlsafe_b64encode(blob).rstrip(b"=").decode("ascii")

    def key_id(self, token: str) -> str | None:
        """The key id a token was sealed with (for audit), or ``None``."""
        blob = _decode(token)
        return blob_key_id(blob) if blob is not None else None

    def unseal(self, token: str, *, owner: str, request: bytes) -> str:
        """The exact string the upstream issued; raises :class:`StateError` otherwise."""
        blob = _decode(token)
        if blob is None:
            raise _error("malformed")
        try:
            plaintext = open_blob(self.keys, PURPOSE, blob, _AAD)
        except SealedBlobError as exc:
            raise _error(exc.reason) from None
        if len(plaintext) < _HEADER.size:
            raise _error("malformed")
        version, expires, _issued, jti, owner_tag, request_tag = _HEADER.unpack_from(plaintext)
        if version != _VERSION:
            raise _error("malformed")
        if not _same(owner_tag, _digest16(b"owner\x00" + owner.encode("utf-8", "surrogatepass"))):
            raise _error("wrong_principal")
        if not _same(request_tag, request):
            raise _error("wrong_request")
        now = int(self.clock() * 1000)
        if expires <= now:
            raise _error("expired")
        if self.single_use:
            ttl = (expires - now) / 1000 + 60.0
            if not self.store.add(USED_NAMESPACE, owner, jti.hex(), b"1", ttl):
                raise _error("replayed")
        try:
            return plaintext[_HEADER.size :].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise _error("malformed") from None


def _same(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


def _decode(token: str) -> bytes | None:
    if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX):
        return None
    body = token[len(TOKEN_PREFIX) :]
    if not body or len(body) > 8 * 1024 * 1024 or not body.isascii():
        return None
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return None


def _error(reason: str) -> StateError:
    return StateError(reason, _MESSAGES.get(reason, "the requestState was refused"), code="EG504")


@dataclass(frozen=True, slots=True)
class GuardOutcome:
    """What an integration does with one message.

    ``message`` is the message to forward instead of the original (``None``: forward the
    original unchanged, byte for byte); ``reply`` is a JSON-RPC error to send back to the
    client instead of forwarding anything; ``reason`` says why (for tests and counters).
    """

    message: dict[str, Any] | None = None
    reply: dict[str, Any] | None = None
    reason: str | None = None


_PASS = GuardOutcome()


class RequestStateGuard:
    """Seals ``requestState`` in results and opens it in retries, message by message.

    Integrations call :meth:`client_message` on every client-to-server message and
    :meth:`server_message` on every server-to-client message of one connection or HTTP
    exchange (``connection``). Requests are remembered by id until their response, so the
    seal can name the originating request; nothing else is kept.
    """

    def __init__(
        self,
        sealer: RequestStateSealer,
        *,
        audit: AuditLog | None = None,
        server: str | None = None,
        max_pending: int = 4096,
    ) -> None:
        self.sealer = sealer
        self.audit = audit
        self.server = server
        self.max_pending = max_pending
        self.counters = {"sealed": 0, "opened": 0, "refused": 0}
        self._pending: OrderedDict[tuple[Any, Any], tuple[bytes, str]] = OrderedDict()
        self._lock = threading.Lock()

    # --- client to server -----------------------------------------------------------------

    def client_message(
        self, message: dict[str, Any], *, principal: Any = None, connection: str | None = None
    ) -> GuardOutcome:
        """Open a retry's ``requestState``; refuse it with -32602 when it does not open."""
        method = message.get("method")
        if not isinstance(method, str) or "id" not in message:
            return _PASS
        params = message.get("params")
        owner = owner_of(principal, connection)
        digest = request_digest(method, params)
        if method in STATE_METHODS:
            self._remember(connection, message.get("id"), digest, owner)
        if not isinstance(params, dict) or "requestState" not in params:
            return _PASS
        token = params["requestState"]
        try:
            if not isinstance(token, str):
                raise _error("malformed")
            inner = self.sealer.unseal(token, owner=owner, request=digest)
        except StateError as exc:
            self.counters["refused"] += 1
            return GuardOutcome(reply=self._refuse(message, method, owner, exc), reason=exc.reason)
        self.counters["opened"] += 1
        new_params = dict(params)
        new_params["requestState"] = inner
        new_message = dict(message)
        new_message["params"] = new_params
        return GuardOutcome(message=new_message, reason="opened")

    def _refuse(
        self, message: dict[str, Any], method: str, owner: str, exc: StateError
    ) -> dict[str, Any]:
        decision_id = os.urandom(12).hex()
        if self.audit is not None:
            self.audit.event(
                "elicitguard.request_state",
                outcome="refused",
                code=exc.code,
                reason=exc.reason,
                decision_id=decision_id,
                server=self.server,
                method=method,
                principal=self.audit.keys.id_hash(owner),
                key_id=self._key_id(message),
            )
        return {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {
                "code": INVALID_PARAMS,
                "message": INVALID_STATE_MESSAGE,
                "data": {"elicitguard": {"codes": [exc.code], "decision_id": decision_id}},
            },
        }

    def _key_id(self, message: dict[str, Any]) -> str | None:
        params = message.get("params")
        token = params.get("requestState") if isinstance(params, dict) else None
        return self.sealer.key_id(token) if isinstance(token, str) else None

    # --- server to client -----------------------------------------------------------------

    def server_message(
        self, message: dict[str, Any], *, connection: str | None = None
    ) -> GuardOutcome:
        """Seal the ``requestState`` of a result, bound to the request it answers."""
        if "id" not in message or "method" in message:
            return _PASS
        origin = self._forget(connection, message.get("id"))
        result = message.get("result")
        if not isinstance(result, dict):
            return _PASS
        holder_key: str | None = None
        holder = result
        if isinstance(result.get("requestState"), str):
            holder_key = None
        elif isinstance(result.get("task"), dict) and isinstance(
            result["task"].get("requestState"), str
        ):
            holder_key = "task"
            holder = result["task"]
        else:
            return _PASS
        digest, owner = origin if origin is not None else (_UNKNOWN_REQUEST, "anonymous")
        sealed = self.sealer.seal(holder["requestState"], owner=owner, request=digest)
        self.counters["sealed"] += 1
        new_holder = dict(holder)
        new_holder["requestState"] = sealed
        new_result = dict(result)
        if holder_key is None:
            new_result = new_holder
        else:
            new_result[holder_key] = new_holder
        new_message = dict(message)
        new_message["result"] = new_result
        return GuardOutcome(message=new_message, reason="sealed")

    # --- pending requests -----------------------------------------------------------------

    @staticmethod
    def _id_key(value: Any) -> Any:
        if isinstance(value, (dict, list)):
            return None
        return (type(value).__name__, value)

    def _remember(self, connection: str | None, rid: Any, digest: bytes, owner: str) -> None:
        key = self._id_key(rid)
        if key is None:
            return
        with self._lock:
            self._pending[(connection, key)] = (digest, owner)
            while len(self._pending) > self.max_pending:
                self._pending.popitem(last=False)

    def _forget(self, connection: str | None, rid: Any) -> tuple[bytes, str] | None:
        key = self._id_key(rid)
        if key is None:
            return None
        with self._lock:
            return self._pending.pop((connection, key), None)
