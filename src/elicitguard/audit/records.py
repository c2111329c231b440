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

import orjson

from elicitguard.audit.redact import GENERATED_TEXT
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
#: How many remembered parts of records (per policy and message place, principal, form,
#: finding) an audit log keeps per kind before that kind starts afresh, and the largest
#: form (its ``properties`` as JSON) whose fields part is remembered.
_PARTS_LIMIT = 4096
_FORM_KEY_MAX_BYTES = 64 * 1024
_PASSTHROUGH = orjson.OPT_PASSTHROUGH_SUBCLASS


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
        #: Record parts already rendered as JSON (see :meth:`_line`), one dict per kind.
        self._session_json: dict[str, str] = {}
        self._heads: dict[tuple[Any, ...], tuple[str, str, str]] = {}
        self._principals: dict[tuple[Any, Any], str] = {}
        self._forms: dict[bytes, str] = {}
        self._items: dict[bytes, str] = {}
        self._findings: dict[tuple[Any, ...], str] = {}

    def count_fast_path(self) -> None:
        self.counters["fast_path"] += 1

    def record(self, decision: Decision, envelope: Envelope) -> None:
        """Write the record of one decision.

        The record is numbered and timed here, and the message's ``id`` and ``method``
        noted (an integration may rewrite them once the decision is made). When the sink
        writes plain lines, the record is rendered here from remembered parts, all but its
        time and number (:meth:`_body`, outside the lock: the parts are dicts any thread
        may fill), and handed over as text: a background writer then
        only stamps, judges and writes it, and its queue keeps no message alive. Otherwise
        (another format, an exporter, the chain, or a value the shortcut does not vouch
        for) the record is built where the sink writes it. Numbering and queueing happen
        under one lock, so records reach the sink in ``seq`` order.
        """
        self.counters["decisions"] += 1
        sink = self.sink
        if not sink.enabled:
            return
        message = envelope.message
        noted = (message.get("id"), message.get("method"))
        made = None
        if sink.writes_lines():
            try:
                made = self._body(decision, envelope, noted)
            except Exception:  # the shortcut never costs a record: build it instead
                made = None
        with self._lock:
            seq = next(self._seq)
            self.counters["records"] += 1
            ts = time.time()
            if made is None:
                sink.submit_record(self._build, (decision, envelope, seq, ts, noted))
            else:
                sink.submit_line(*made, seq, ts)

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

    def _body(
        self, decision: Decision, envelope: Envelope, noted: tuple[Any, Any]
    ) -> tuple[str, tuple[Any, ...], Any] | None:
        """The record :meth:`_build` makes, rendered as the default JSON line after its
        ``"seq"`` (the sink puts the time and number in front: :meth:`AuditSink.submit_line`).

        Why: building the record as dicts and rendering it took most of a record's cost,
        and most of a record repeats from one decision to the next (the policy, the side,
        the form's fields, each finding's code and place). Those parts are rendered once,
        by the same ``orjson`` call the renderer makes, and remembered by exactly what
        they are made of; only the ids, fingerprints and duration are rendered per record.
        The line reads byte for byte as ``render_json`` writes the built record
        (tests/audit/test_record_lines.py compares them).

        Returns the text, the record's shape (everything but the fields elicitguard
        generates, as :class:`~elicitguard.audit.processors.RedactRecord` remembers a clean
        record by) and the JSON-RPC id, for the sink's redaction boundary to judge; or
        ``None`` when a value is of a type the shortcut does not vouch for (the record is
        then built as before).
        """
        jsonrpc_id, method = noted
        method, items = _method_and_items(decision, method)
        server = envelope.server
        session = envelope.session
        if not (
            (type(method) is str or method is None)
            and (type(server) is str or server is None)
            and (type(session) is str or session is None)
        ):
            return None
        transport = envelope.transport
        enforced = decision.enforced
        if type(enforced) is not bool:
            return None
        # Enum values, not members, in keys: a member's hash is a Python-level call.
        head_key = (
            decision.policy_name,
            decision.policy_revision,
            decision.environment,
            decision.mode,
            envelope.side._value_,
            envelope.direction._value_,
            transport._value_ if transport is not None else None,
            decision.era,
            server,
            method,
            decision.action._value_,
            enforced,
        )
        head = self._heads.get(head_key)
        if head is None:
            head = self._head(head_key)
        if session:
            session_json = self._session_json.get(session)
            if session_json is None:
                if len(self._session_json) >= _SESSION_HASHES_LIMIT:
                    self._session_json.clear()
                session_json = _json(self._session_hash(session))
                self._session_json[session] = session_json
        else:
            session_json = "null"
        principal = envelope.principal
        principal_json = "null" if principal is None else self._principal_json(principal)
        elicitation = tuple([self._item_json(i) for i in items if i.is_elicitation])
        findings_shape: list[Any] = []
        findings_json: list[str] = []
        if decision.findings:
            templates = self._findings
            generated = GENERATED_TEXT.fullmatch
            for f in decision.findings:
                template_key = (f.code, f.name, f.severity._value_, f.action._value_, f.pointer)
                template = templates.get(template_key)
                if template is None:
                    template = self._finding_template(f)
                fp, vfp = f.fingerprint, f.value_fingerprint
                findings_json.append(
                    f'{template},"fingerprint":{_json(fp)},"value_fingerprint":{_json(vfp)}}}'
                )
                if (fp is None or (isinstance(fp, str) and generated(fp) is not None)) and (
                    vfp is None or (isinstance(vfp, str) and generated(vfp) is not None)
                ):
                    findings_shape.append(template)
                else:
                    findings_shape.append((template, fp, vfp))
        suppressed = (
            _json(
                [
                    {"code": s.code, "pointer": s.pointer, "reason": s.reason}
                    for s in decision.suppressed
                ]
            )
            if decision.suppressed
            else "[]"
        )
        errors = _json(list(decision.errors)) if decision.errors else "[]"
        shape = (head, principal_json, elicitation, tuple(findings_shape), suppressed, errors)
        safe_id = safe_jsonrpc_id(jsonrpc_id)
        body = (
            f'"decision_id":{_json(decision.decision_id)},'
            f'{head[0]},"session":{session_json},"principal":{principal_json},{head[1]},'
            f'"jsonrpc_id":{_json(safe_id)},"elicitation":[{",".join(elicitation)}],{head[2]},'
            f'"findings":[{",".join(findings_json)}],"suppressed":{suppressed},"errors":{errors},'
            f'"duration_us":{_json(decision.duration_us)},"event":"elicitguard.decision"}}'
        )
        return body, shape, safe_id

    def _head(self, key: tuple[Any, ...]) -> tuple[str, str, str]:
        """The parts of a record fixed by policy, place in traffic, server, method and verdict."""
        name, revision, environment, mode, side, direction, transport, era, server, method = key[
            :10
        ]
        action, enforced = key[10:]
        first = _json(
            {
                "policy": {
                    "name": name,
                    "revision": revision,
                    "environment": environment,
                    "mode": mode,
                },
                "side": side,
                "direction": direction,
                "transport": transport,
                "protocol_version": era,
            }
        )[1:-1]
        second = _json({"server": server, "method": method})[1:-1]
        third = _json({"action": action, "enforced": enforced})[1:-1]
        if len(self._heads) >= _PARTS_LIMIT:
            self._heads.clear()
        head = self._heads[key] = (first, second, third)
        return head

    def _principal_json(self, principal: Any) -> str:
        """The principal as a record writes it; remembered for plain text issuer and subject."""
        subject = getattr(principal, "subject", None)
        issuer = getattr(principal, "issuer", None)
        if not (
            (type(subject) is str or subject is None) and (type(issuer) is str or issuer is None)
        ):
            return _json(_principal(principal, self.keys))
        key = (issuer, subject)
        cached = self._principals.get(key)
        if cached is None:
            if len(self._principals) >= _PARTS_LIMIT:
                self._principals.clear()
            cached = self._principals[key] = _json(_principal(principal, self.keys))
        return cached

    def _item_json(self, item: Item) -> str:
        """One item's metadata as JSON, remembered by exactly what it is made of.

        An item the engine judged carries the digest its verdict cache keys it by, which
        covers everything :func:`_item_meta` reads (kind, pointer, mode, input key, schema
        and data): equal digests mean equal metadata, so the metadata is rendered once per
        distinct item and the record describes the item as it was judged. The digest is a
        hash kept in memory only, as the verdict cache keeps it; a URL itself is never a
        key (its query may hold a secret). A form without a digest is remembered by the
        JSON of what the metadata reads of it, written with ``OPT_PASSTHROUGH_SUBCLASS``
        so that a subclass of ``dict`` or ``str`` makes no key; other items are rendered
        afresh.
        """
        digest = item.digest
        if digest is not None:
            cached = self._items.get(digest)
            if cached is None:
                cached = _json(_item_meta(item))
                if len(self._items) >= _PARTS_LIMIT:
                    self._items.clear()
                self._items[digest] = cached
            return cached
        if item.kind is ItemKind.FORM_REQUEST and isinstance(item.schema, dict):
            props = item.schema.get("properties")
            if isinstance(props, dict):
                try:
                    key = orjson.dumps(
                        (item.pointer, item.mode, item.input_key, props), option=_PASSTHROUGH
                    )
                except TypeError:
                    return _json(_item_meta(item))
                cached = self._forms.get(key)
                if cached is None:
                    cached = _json(_item_meta(item))
                    if len(key) <= _FORM_KEY_MAX_BYTES:
                        if len(self._forms) >= _PARTS_LIMIT:
                            self._forms.clear()
                        self._forms[key] = cached
                return cached
        return _json(_item_meta(item))

    def _finding_template(self, f: Any) -> str:
        """A finding's JSON up to its fingerprints (left open for them)."""
        template = _json(
            {
                "code": f.code,
                "name": f.name,
                "severity": f.severity._value_,
                "action": f.action._value_,
                "pointer": f.pointer,
            }
        )[:-1]
        if len(self._findings) >= _PARTS_LIMIT:
            self._findings.clear()
        self._findings[(f.code, f.name, f.severity._value_, f.action._value_, f.pointer)] = template
        return template

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


def _json(value: Any) -> str:
    """``value`` as :func:`~elicitguard.audit.processors.render_json` writes it."""
    return orjson.dumps(value, default=str).decode("utf-8")


def _method_and_items(decision: Decision, method: object) -> tuple[str | None, list[Item]]:
    """The record's method (the message's, else its first item's) and the decision's items:
    one reading for the built record and the line rendered from remembered parts."""
    items = [i for i in decision.items if isinstance(i, Item)]
    name = method if isinstance(method, str) else None
    if name is None and items:
        name = items[0].method
    return name, items


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
    method, items = _method_and_items(decision, method)
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
