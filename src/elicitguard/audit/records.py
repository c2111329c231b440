"""Decision records: one structured audit event per decision on elicitation traffic.

A record says what was decided, under which policy revision, about which message, and
why, with enough to replay the decision (OPA's decision logs are the model) and nothing a
reader could misuse: no form value, query value, header value, token or ``requestState``.
Sessions and principals appear as keyed hashes; the issuer appears in clear.
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from elicitguard.audit.sink import AuditSink, timestamp
from elicitguard.base.decision import Decision
from elicitguard.base.keys import KeyRing
from elicitguard.checks.url_facts import bare_host, site_of
from elicitguard.checks.urls import parse_url
from elicitguard.protocol.envelope import Envelope
from elicitguard.protocol.items import Item, ItemKind

__all__ = ["AuditLog", "decision_record", "safe_jsonrpc_id", "timestamp"]

MAX_ID_CHARS = 64
#: How many session hashes an audit log keeps before it starts afresh.
_SESSION_HASHES_LIMIT = 4096


class AuditLog:
    """Numbers records, counts fast-path traffic, and writes through one sink."""

    def __init__(self, sink: AuditSink, keys: KeyRing) -> None:
        self.sink = sink
        self.keys = keys
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self.counters: dict[str, int] = {"fast_path": 0, "decisions": 0, "records": 0}
        #: Keyed hashes of recent session ids: a session sends many messages and the HMAC
        #: is the costliest part of a record's metadata. Bounded; cleared when full.
        self._session_hashes: dict[str, str] = {}

    def count_fast_path(self) -> None:
        self.counters["fast_path"] += 1

    def record(self, decision: Decision, envelope: Envelope) -> None:
        """Write the record of one decision.

        The caller takes a sequence number and the time, and notes the message's ``id`` and
        ``method`` (an integration may rewrite them once the decision is made); the record
        itself is built where the sink writes it: in its background writer, off the request
        path, when it has one. Numbering and queueing happen under one lock, so records
        reach the sink in ``seq`` order.
        """
        self.counters["decisions"] += 1
        if not self.sink.enabled:
            return
        message = envelope.message
        noted = (message.get("id"), message.get("method"))
        with self._lock:
            seq = next(self._seq)
            self.counters["records"] += 1
            self.sink.submit_record(self._build, (decision, envelope, seq, time.time(), noted))

    def _build(
        self,
        decision: Decision,
        envelope: Envelope,
        seq: int,
        ts: float,
        noted: tuple[Any, Any],
    ) -> dict[str, Any]:
        return decision_record(
            decision,
            envelope,
            self.keys,
            seq=seq,
            session_hash=self._session_hash,
            ts=ts,
            jsonrpc_id=noted[0],
            method=noted[1],
        )

    def _session_hash(self, session: str) -> str:
        cached = self._session_hashes.get(session)
        if cached is None:
            if len(self._session_hashes) >= _SESSION_HASHES_LIMIT:
                self._session_hashes.clear()
            cached = self._session_hashes[session] = self.keys.id_hash(session)
        return cached

    def event(self, name: str, **fields: Any) -> None:
        """Write a non-decision event (policy warnings, engine errors)."""
        if not self.sink.enabled:
            return
        with self._lock:
            seq = next(self._seq)
            self.sink.write({"event": name, "ts": timestamp(), "seq": seq, **fields})


_UNSET: Any = object()


def decision_record(
    decision: Decision,
    envelope: Envelope,
    keys: KeyRing,
    *,
    seq: int,
    session_hash: Callable[[str], str] | None = None,
    ts: float | None = None,
    jsonrpc_id: Any = _UNSET,
    method: Any = _UNSET,
) -> dict[str, Any]:
    """Build the record of ``decision`` (metadata only).

    ``session_hash`` replaces ``keys.id_hash`` for the session (the audit log's cached one);
    ``ts`` is when the decision was recorded (now by default); ``jsonrpc_id`` and ``method``
    are the message's as they were then (read from ``envelope.message`` by default).
    """
    message = envelope.message
    if jsonrpc_id is _UNSET:
        jsonrpc_id = message.get("id")
    if method is _UNSET:
        method = message.get("method")
    if not isinstance(method, str):
        method = None
    items = [i for i in decision.items if isinstance(i, Item)]
    if method is None and items:
        method = items[0].method
    principal = envelope.principal
    transport = envelope.transport
    # ``_value_`` rather than ``.value``: the same string without the enum property's call.
    return {
        "event": "elicitguard.decision",
        "ts": timestamp(ts),
        "seq": seq,
        "decision_id": decision.decision_id,
        "policy": {
            "name": decision.policy_name,
            "revision": decision.policy_revision,
            "environment": decision.environment,
            "mode": decision.mode,
        },
        "side": envelope.side._value_,
        "direction": envelope.direction._value_,
        "transport": transport._value_ if transport is not None else None,
        "protocol_version": decision.era,
        "session": (session_hash or keys.id_hash)(envelope.session) if envelope.session else None,
        "principal": _principal(principal, keys) if principal is not None else None,
        "server": envelope.server,
        "method": method,
        "jsonrpc_id": safe_jsonrpc_id(jsonrpc_id),
        "elicitation": [_item_meta(i) for i in items if i.is_elicitation],
        "action": decision.action._value_,
        "enforced": decision.enforced,
        "findings": [
            {
                "code": f.code,
                "name": f.name,
                "severity": f.severity._value_,
                "action": f.action._value_,
                "pointer": f.pointer,
                "fingerprint": f.fingerprint,
                "value_fingerprint": f.value_fingerprint,
            }
            for f in decision.findings
        ]
        if decision.findings
        else [],
        "suppressed": [
            {"code": s.code, "pointer": s.pointer, "reason": s.reason} for s in decision.suppressed
        ],
        "errors": list(decision.errors),
        "duration_us": decision.duration_us,
    }


def safe_jsonrpc_id(value: Any) -> Any:
    """A JSON-RPC id fit for a record: numbers as they are (text past 64 bits), strings cut."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else str(value)
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        return value[:MAX_ID_CHARS]
    return None


def _principal(principal: Any, keys: KeyRing) -> dict[str, Any] | None:
    if principal is None:
        return None
    subject = getattr(principal, "subject", None)
    issuer = getattr(principal, "issuer", None)
    return {
        "iss": issuer,
        "sub": keys.id_hash(f"{issuer}\x00{subject}") if subject is not None else None,
    }


def _item_meta(item: Item) -> dict[str, Any]:
    meta: dict[str, Any] = {"kind": item.kind.value, "pointer": item.pointer}
    if item.mode is not None:
        meta["mode"] = item.mode
    if item.input_key is not None:
        meta["input_key"] = item.input_key[:MAX_ID_CHARS]
    if item.kind is ItemKind.FORM_REQUEST and isinstance(item.schema, dict):
        props = item.schema.get("properties")
        if isinstance(props, dict):
            meta["fields"] = _fields_meta(props)
    if item.kind is ItemKind.URL_REQUEST and isinstance(item.data, dict):
        url = item.data.get("url")
        if isinstance(url, str):
            parsed = parse_url(url)  # the host EG3xx and match: rules see, never another's
            meta.update(_host_meta(parsed.scheme, bare_host(parsed)))
    if item.kind is ItemKind.ELICIT_RESULT and isinstance(item.data, dict):
        action = item.data.get("action")
        meta["answer"] = action if action in ("accept", "decline", "cancel") else "invalid"
        content = item.data.get("content")
        if isinstance(content, dict):
            meta["answered_fields"] = [str(k)[:MAX_ID_CHARS] for k in list(content)[:100]]
    return meta


def _fields_meta(props: dict[Any, Any]) -> list[dict[str, Any]]:
    """Name and declared type of a form's first 100 fields (a plain loop: the hot part)."""
    fields: list[dict[str, Any]] = []
    append = fields.append
    for name, spec in itertools.islice(props.items(), 100):
        kind = spec.get("type") if type(spec) is dict else None
        append(
            {
                "name": name[:MAX_ID_CHARS] if type(name) is str else str(name)[:MAX_ID_CHARS],
                "type": kind if type(kind) is str else None,
            }
        )
    return fields


def _url_meta(url: str) -> dict[str, Any]:
    parsed = parse_url(url)  # the host EG3xx and match: rules see, never a second parser's
    return dict(_host_meta(parsed.scheme, bare_host(parsed)))


@functools.lru_cache(maxsize=4096)
def _host_meta(scheme: str, host: str) -> tuple[tuple[str, Any], ...]:
    """What a record says of a URL: its scheme, registrable domain and whether the host is
    internationalised. Cached by scheme and host only (never by the URL, whose query may
    hold a secret)."""
    return (
        ("url_scheme", scheme[:16] or None),
        ("url_domain", site_of(host) if host else None),
        ("idn", "xn--" in host or not host.isascii()),
    )
