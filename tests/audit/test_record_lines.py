"""A record rendered straight to its line reads byte for byte as the built record did.

:meth:`AuditLog._body` renders a decision record from remembered parts; the plain path
builds the record as dicts (:func:`decision_record`), runs the redaction boundary and
renders it. Both run here over many generated decisions (forms, URLs, answers and other
items; findings with and without fingerprints, generated or not; both eras and none;
every action, enforced or not; a principal or none; planted secrets in field names, URLs,
pointers and ids), each decision recorded several times in shuffled order so remembered
parts are reused, and every line must be the same. Other formats, renderers and the chain
take the plain path, and write the same as before too.
"""

from __future__ import annotations

import dataclasses
import gc
import io
import random
import string
import weakref
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from tests.audit.writer_support import park

from elicitguard.audit.formats import FORMATS, wrap_sink
from elicitguard.audit.records import AuditLog
from elicitguard.audit.sink import AuditSink
from elicitguard.base.decision import Action, Confidence, Decision, Finding, Severity, Suppressed
from elicitguard.base.keys import KeyRing
from elicitguard.engine.verdicts import item_key
from elicitguard.identity.principal import Principal
from elicitguard.protocol.envelope import Direction, Envelope, Side, Transport
from elicitguard.protocol.items import Item, ItemKind

TOKEN = "ghp_" + "Zq8bX2vN4kL7mP1sR6tY9wA3cE5gH0jK2dF4"
AWS = "AKIA" + "QX7ZK2LMN4PRSTUV"
ERAS = ("2025-11-25", "2026-07-28", None)


@dataclass(frozen=True)
class _OwnPrincipal:
    """An operator's own principal class: any object with ``issuer`` and ``subject``."""

    issuer: Any
    subject: Any


class _Dict(dict[str, Any]):
    """A ``dict`` subclass: the metadata reads its fields as not a plain object."""


def _text(rng: random.Random, secret: bool = False) -> str:
    if secret and rng.random() < 0.2:
        return rng.choice((TOKEN, AWS, f"key {TOKEN}", "ok"))
    alphabet = string.ascii_letters + string.digits + '_-é日"\\/ '
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90)))


def _fresh_props(rng: random.Random) -> Any:
    props: dict[str, Any] = {}
    for n in range(rng.choice((0, 1, 1, 3, 10, 110))):
        spec: Any = {"type": rng.choice(("string", "integer", "boolean", 3, None, ["a"]))}
        if rng.random() < 0.3:
            spec["description"] = _text(rng)
        if rng.random() < 0.05:
            spec = rng.choice(("string", 1, None, _Dict(type="string")))
        props[_text(rng, secret=True) or f"f{n}"] = spec
    return _Dict(props) if rng.random() < 0.03 else props


#: Forms many decisions share (a server asks the same form again), each time with other
#: pointers, modes and input keys: remembered parts must be keyed by all of them.
_SHARED_FORMS = [_fresh_props(random.Random(n)) for n in range(6)]


def _props(rng: random.Random) -> Any:
    return rng.choice(_SHARED_FORMS) if rng.random() < 0.6 else _fresh_props(rng)


def _item(rng: random.Random, era: str | None) -> Item:
    kind = rng.choice((ItemKind.FORM_REQUEST,) * 8 + (ItemKind.URL_REQUEST,) * 2 + tuple(ItemKind))
    mode = rng.choice((None, "form", "url", 1, True))
    input_key = rng.choice((None, None, "q0", "q1", _text(rng, secret=True), "k" * 100))
    schema: Any = None
    data: Any = {}
    if kind is ItemKind.FORM_REQUEST:
        props = _props(rng)
        schema = rng.choice(
            ({"type": "object", "properties": props},) * 4 + ({"properties": "x"}, None)
        )
        data = {"requestedSchema": schema}
    elif kind is ItemKind.URL_REQUEST:
        host = rng.choice(("example.com", "bücher.example.de", "xn--bcher-kva.de", "", "1.2.3.4"))
        query = rng.choice(("", f"?token={TOKEN}", f"?k={AWS}", "?a=b"))
        scheme = rng.choice(("https", "http", "javascript", ""))
        data = {"url": rng.choice((f"{scheme}://{host}/p{query}", 5, None)), "elicitationId": "e"}
    elif kind is ItemKind.ELICIT_RESULT:
        content = {_text(rng, secret=True): 1 for _ in range(rng.randint(0, 4))}
        data = {
            "action": rng.choice(("accept", "decline", "cancel", "nope", 3)),
            "content": content,
        }
        if rng.random() < 0.2:
            data["content"] = "not an object"
    pointer = rng.choice(
        ("/params", "/params", "/result", f"/params/inputRequests/{_text(rng, True)}")
    )
    item = Item(
        kind=kind,
        pointer=pointer,
        era=era,
        data=data,
        method=rng.choice(("elicitation/create", None, "tools/call")),
        mode=mode,  # type: ignore[arg-type]
        input_key=input_key,
        schema=schema,
    )
    if rng.random() < 0.6:  # as the engine marks the items it judged (none for subclasses)
        key = item_key(item, None, Side.PROXY, Direction.SERVER_TO_CLIENT)
        item.digest = key[0] if key is not None else None
    return item


def _fingerprint(rng: random.Random) -> Any:
    return rng.choice(
        ("", "0123456789abcdef", f"{rng.getrandbits(64):016x}", "not generated!", f"key {TOKEN}")
    )


def _finding(rng: random.Random) -> Finding:
    code = rng.choice(("EG101", "EG201", "EG301", "EG502"))
    return Finding(
        code=code,
        name=rng.choice(("password-field", "url-secret", "pii")),
        severity=rng.choice(tuple(Severity)),
        confidence=Confidence.HIGH,
        action=rng.choice(tuple(Action)),
        message="m",
        pointer=rng.choice(("/params", "/params/requestedSchema/properties/pw", f"/p/{TOKEN}")),
        fingerprint=_fingerprint(rng),
        value_fingerprint=rng.choice((None, None, _fingerprint(rng))),
    )


def _case(rng: random.Random) -> tuple[Decision, Envelope, tuple[Any, Any]]:
    era = rng.choice(ERAS)
    items = tuple(_item(rng, era) for _ in range(rng.choice((0, 1, 1, 1, 2, 3))))
    findings = tuple(_finding(rng) for _ in range(rng.choice((0, 0, 1, 2, 5))))
    suppressed = tuple(
        Suppressed(
            code="EG101", pointer="/params", reason=_text(rng, secret=True), exception_index=0
        )
        for _ in range(rng.choice((0, 0, 0, 1)))
    )
    decision = Decision(
        action=rng.choice(tuple(Action)),
        findings=findings,
        suppressed=suppressed,
        decision_id=rng.choice((f"{rng.getrandbits(96):024x}", "", "from-a-reply")),
        policy_name=rng.choice(("default", "strict")),
        policy_revision=f"{rng.getrandbits(64):016x}",
        environment=rng.choice(("prod", "dev")),
        mode=rng.choice(("enforce", "monitor")),
        enforced=rng.random() < 0.5,
        items=items,
        era=era,
        errors=tuple(
            rng.choice(("EG101 raised ValueError", TOKEN)) for _ in range(rng.choice((0, 0, 1)))
        ),
        duration_us=rng.randint(0, 10**7),
    )
    principal = rng.choice(
        (
            None,
            None,
            Principal(issuer="https://idp.example", subject=_text(rng) or "u1"),
            _OwnPrincipal("https://idp.example", None),
            _OwnPrincipal(None, "u2"),
            _OwnPrincipal(1, 2),
        )
    )
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create"}
    envelope = Envelope(
        message,
        rng.choice(tuple(Direction)),
        side=rng.choice(tuple(Side)),
        transport=rng.choice((None, *Transport)),
        session=rng.choice((None, "", "s1", "s2", _text(rng))),
        principal=principal,
        server=rng.choice((None, "github", _text(rng, secret=True))),
    )
    jsonrpc_id = rng.choice(
        (1, 0, -5, 2**70, 1.5, "abc", "x" * 100, TOKEN, f"id {AWS}", None, True, [1])
    )
    method = rng.choice(("elicitation/create", None, 5, "tools/call", _text(rng, secret=True)))
    return decision, envelope, (jsonrpc_id, method)


def _cases(seed: int, count: int) -> list[tuple[Decision, Envelope, tuple[Any, Any]]]:
    rng = random.Random(seed)
    distinct = [_case(rng) for _ in range(count)]
    repeated = distinct * 3
    rng.shuffle(repeated)
    return repeated


def _record_both(
    cases: list[tuple[Decision, Envelope, tuple[Any, Any]]],
    make_sink: Any,
) -> tuple[list[str], list[str], int]:
    """Each case through the plain path and the line path; both lines, and how many
    records took the line."""
    keys = KeyRing.random()
    plain_stream, line_stream = io.StringIO(), io.StringIO()
    plain_sink, line_sink = make_sink(plain_stream), make_sink(line_stream)
    plain, lines = AuditLog(plain_sink, keys), AuditLog(line_sink, keys)
    made = 0
    for seq, (decision, envelope, noted) in enumerate(cases, 1):
        args = (decision, envelope, seq, 1_700_000_000.0 + seq / 7, noted)
        plain_sink.submit_record(plain._build, args)
        _submit_both_ways(lines, args)
        made += line_sink.writes_lines() and lines._body(decision, envelope, noted) is not None
    return plain_stream.getvalue().splitlines(), line_stream.getvalue().splitlines(), made


def _submit_both_ways(log: AuditLog, args: tuple[Any, ...]) -> None:
    """As :meth:`AuditLog.record` hands a record to its sink: rendered when it can be."""
    decision, envelope, seq, ts, noted = args
    made = log._body(decision, envelope, noted) if log.sink.writes_lines() else None
    if made is None:
        log.sink.submit_record(log._build, args)
    else:
        log.sink.submit_line(*made, seq, ts)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lines_read_as_the_built_records(seed: int) -> None:
    cases = _cases(seed, 150)
    plain, lines, made = _record_both(cases, AuditSink)
    assert made == len(cases)  # the shortcut was taken for every record
    assert len(plain) == len(lines) == len(cases)
    for old, new in zip(plain, lines, strict=True):
        assert new == old
    written = "\n".join(lines)
    assert TOKEN not in written
    assert AWS not in written
    # The generator reaches what the shortcut must get right.
    records = [orjson.loads(line) for line in plain]
    assert any(r["principal"] for r in records)
    assert any(r["principal"] is None for r in records)
    assert {r["protocol_version"] for r in records} == set(ERAS)
    found = [f for r in records for f in r["findings"]]
    assert any(f["value_fingerprint"] for f in found)
    assert any(not f["value_fingerprint"] for f in found)
    assert any("fields" in e for r in records for e in r["elicitation"])
    assert any("[REDACTED]" in line for line in plain)


def test_a_secret_in_a_remembered_form_is_redacted_every_time() -> None:
    """A form whose field name is a token is remembered, and still redacted on each record."""
    rng = random.Random(9)
    decision, envelope, _ = _case(rng)
    item = Item(
        kind=ItemKind.FORM_REQUEST,
        pointer="/params",
        era=None,
        data={},
        schema={"properties": {TOKEN: {"type": "string"}}},
    )
    decision.items = (item,)
    plain, lines, _ = _record_both([(decision, envelope, (1, "elicitation/create"))] * 5, AuditSink)
    assert lines == plain
    assert all(TOKEN not in line and "[REDACTED]" in line for line in lines)


def test_a_fingerprint_that_is_not_generated_is_judged_each_time() -> None:
    """Generated fingerprints are left out of a remembered shape; any other is kept in it."""
    rng = random.Random(12)
    decision, envelope, noted = _case(rng)
    cases = []
    for fingerprint in ("0123456789abcdef", "fedcba9876543210", f"key {TOKEN}", "00ff"):
        finding = dataclasses.replace(_finding(random.Random(1)), fingerprint=fingerprint)
        cases.append((dataclasses.replace(decision, findings=(finding,)), envelope, noted))
    plain, lines, _ = _record_both(cases, AuditSink)
    assert lines == plain
    assert TOKEN not in "".join(lines)


def test_an_item_of_dict_subclasses_gets_no_digest() -> None:
    """The digest the record's item part is remembered by never stands for a subclass."""
    plain = Item(kind=ItemKind.FORM_REQUEST, pointer="/p", era=None, data={}, schema={"a": 1})
    mixed = Item(kind=ItemKind.FORM_REQUEST, pointer="/p", era=None, data={}, schema=_Dict(a=1))
    where = (None, Side.PROXY, Direction.SERVER_TO_CLIENT)
    assert item_key(plain, *where) is not None
    assert item_key(mixed, *where) is None


def test_a_form_of_dict_subclasses_is_not_taken_for_the_plain_form() -> None:
    """Field specs that are not plain objects read as untyped: never as the plain form's."""
    rng = random.Random(11)
    _, envelope, _ = _case(rng)
    cases = []
    for spec in ({"type": "string"}, _Dict(type="string"), {"type": "string"}):
        schema = {"properties": {"f": spec}}
        item = Item(kind=ItemKind.FORM_REQUEST, pointer="/params", era=None, data={}, schema=schema)
        one = Decision(action=Action.ALLOW, items=(item,), decision_id="d")
        cases.append((one, envelope, (1, "elicitation/create")))
    plain, lines, _ = _record_both(cases, AuditSink)
    assert lines == plain
    assert [orjson.loads(line)["elicitation"][0]["fields"][0]["type"] for line in lines] == [
        "string",
        None,
        "string",
    ]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_writes_what_it_wrote(name: str) -> None:
    """OCSF, ECS and native with an exporter take the plain path: the same lines."""
    exported: list[dict[str, Any]] = []

    def export(record: dict[str, Any]) -> dict[str, Any]:
        exported.append(record)
        return record

    def make_sink(stream: io.StringIO) -> AuditSink:
        sink = AuditSink(stream)
        wrap_sink(sink, FORMATS[name], [export] if FORMATS[name] is None else [])
        return sink

    cases = _cases(4, 60)
    plain, lines, _ = _record_both(cases, make_sink)
    assert lines == plain
    assert len(lines) == len(cases)


def test_a_queued_sink_writes_the_same_lines() -> None:
    cases = _cases(5, 100)

    def make_sink(stream: io.StringIO) -> AuditSink:
        return AuditSink(stream, queue=64)

    keys = KeyRing.random()
    streams = io.StringIO(), io.StringIO()
    sinks = [make_sink(s) for s in streams]
    logs = [AuditLog(s, keys) for s in sinks]
    for seq, (decision, envelope, noted) in enumerate(cases, 1):
        args = (decision, envelope, seq, 1_700_000_000.0 + seq, noted)
        sinks[0].submit_record(logs[0]._build, args)
        _submit_both_ways(logs[1], args)
    for sink in sinks:
        sink.flush()
    written = [s.getvalue() for s in streams]
    for sink in sinks:
        sink.close()
    assert written[1] == written[0]
    assert written[0].count("\n") == len(cases)


def test_a_queued_record_keeps_no_message_alive() -> None:
    """A rendered record is queued as text: the writer's backlog holds no traffic."""
    stream = io.StringIO()
    sink = AuditSink(stream, queue=16)
    _, release = park(sink)
    try:
        log = AuditLog(sink, KeyRing.random())
        message = _Message(jsonrpc="2.0", id=7, method="elicitation/create")
        schema = {"properties": {"name": {"type": "string"}}}
        item = Item(kind=ItemKind.FORM_REQUEST, pointer="/params", era=None, data={}, schema=schema)
        decision = Decision(action=Action.ALLOW, items=(item,), decision_id="d")
        log.record(decision, Envelope(message, Direction.SERVER_TO_CLIENT, side=Side.PROXY))
        alive = weakref.ref(message)
        del message, decision, item
        gc.collect()
        assert alive() is None  # queued, not yet written, and the message is gone
    finally:
        release.set()
    sink.flush()
    written = [orjson.loads(line) for line in stream.getvalue().splitlines()]
    sink.close()
    assert [r.get("jsonrpc_id") for r in written] == [None, 7]
    assert written[1]["elicitation"][0]["fields"] == [{"name": "name", "type": "string"}]


class _Message(dict[str, Any]):
    """A message a weak reference can follow."""
