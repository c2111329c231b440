"""OCSF, ECS and OpenTelemetry audit: the same decisions, the same redaction boundary."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from elicitguard.audit.ecs import to_ecs
from elicitguard.audit.formats import install_formats
from elicitguard.audit.ocsf import CLASS_UID, to_ocsf
from elicitguard.audit.otel import span_attributes
from elicitguard.audit.sink import open_sink
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import load_policy
from elicitguard.integrations.actions import Relay
from elicitguard.protocol.envelope import Direction, Side, Transport

SECRETS = (
    "hunter2-Sup3r-S3cret!",
    "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123",
    "q-secret-value-991",
    "state-opaque-7f3a9b",
)


def _traffic() -> list[tuple[dict[str, Any], Direction]]:
    """Messages that carry planted secrets in every place a value can sit."""
    push = {
        "jsonrpc": "2.0",
        "id": "req-1",
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": f"Enter your password (hint {SECRETS[0]})",
            "requestedSchema": {
                "type": "object",
                "properties": {"password": {"type": "string", "format": "password"}},
            },
        },
    }
    answer = {
        "jsonrpc": "2.0",
        "id": "req-1",
        "result": {"action": "accept", "content": {"password": SECRETS[0], "token": SECRETS[1]}},
    }
    url = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "elicitationId": "e1",
            "message": "Sign in",
            "url": f"https://login.evil.example/auth?token={SECRETS[2]}&u=1",
        },
    }
    retry = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "t",
            "arguments": {"api_key": SECRETS[1]},
            "requestState": SECRETS[3],
            "inputResponses": {"k": {"action": "accept", "content": {"p": SECRETS[0]}}},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        },
    }
    s2c, c2s = Direction.SERVER_TO_CLIENT, Direction.CLIENT_TO_SERVER
    return [(push, s2c), (answer, c2s), (url, s2c), (retry, c2s)]


def _run(tmp_path: Path, fmt: str, exported: list[dict[str, Any]] | None = None) -> list[Any]:
    log = tmp_path / f"audit-{fmt}.jsonl"
    engine = Engine(load_policy(None), audit=open_sink("file", str(log)))
    install_formats(engine, fmt)
    if exported is not None:
        engine.audit.sink.exporters.append(lambda record: exported.append(span_attributes(record)))
    relay = Relay(engine, side=Side.PROXY, transport=Transport.HTTP, server="s")
    for message, direction in _traffic():
        relay.inspect(json.dumps(message).encode(), direction, session="sess-1")
    engine.close()
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("fmt", ["native", "ocsf", "ecs"])
def test_no_planted_secret_reaches_any_format(tmp_path: Path, fmt: str) -> None:
    spans: list[dict[str, Any]] = []
    records = _run(tmp_path, fmt, spans)
    assert len(records) >= 4
    text = json.dumps(records) + json.dumps(spans)
    for secret in SECRETS:
        assert secret not in text, (fmt, secret)
    assert "token=" not in text


def test_ocsf_records_are_detection_findings(tmp_path: Path) -> None:
    records = [r for r in _run(tmp_path, "ocsf") if "class_uid" in r]
    assert records
    for record in records:
        assert record["class_uid"] == CLASS_UID
        assert record["type_uid"] == CLASS_UID * 100 + record["activity_id"]
        assert record["metadata"]["product"]["name"] == "elicitguard"
        assert isinstance(record["time"], int)
        assert record["finding_info"]["uid"] == record["metadata"]["uid"]
    blocked = [r for r in records if r["action"] == "Denied"]
    assert blocked
    assert all(r["severity_id"] >= 3 for r in blocked)


def _dropped(sent: Any, kept: Any, path: str = "") -> list[str]:
    """Attributes of ``sent`` that the schema model did not keep (unknown to the class)."""
    out: list[str] = []
    if isinstance(sent, dict) and isinstance(kept, dict):
        for key, value in sent.items():
            if key not in kept:
                out.append(f"{path}/{key}")
            else:
                out += _dropped(value, kept[key], f"{path}/{key}")
    elif isinstance(sent, list) and isinstance(kept, list):
        for index, (a, b) in enumerate(zip(sent, kept, strict=False)):
            out += _dropped(a, b, f"{path}/{index}")
    return out


def test_ocsf_records_validate_against_the_pinned_schema(tmp_path: Path) -> None:
    """Each record is a valid OCSF 1.5.0 Detection Finding (py-ocsf-models pins 1.5.0)."""
    models = pytest.importorskip("py_ocsf_models")
    from py_ocsf_models.events.findings.detection_finding import DetectionFinding

    from elicitguard.audit.ocsf import OCSF_VERSION, SECURITY_CONTROL

    assert models.OCSF_VERSION == OCSF_VERSION
    records = [r for r in _run(tmp_path, "ocsf") if "class_uid" in r]
    assert records
    for record in records:
        model = DetectionFinding.model_validate(record)
        kept = model.model_dump(exclude_none=True, mode="json")
        unknown = {p for p in _dropped(record, kept) if p.lstrip("/") not in SECURITY_CONTROL}
        assert not unknown, unknown
        assert record["metadata"]["profiles"] == ["security_control"]


def test_ecs_records(tmp_path: Path) -> None:
    records = [r for r in _run(tmp_path, "ecs") if "@timestamp" in r]
    assert records
    for record in records:
        assert record["ecs"]["version"]
        event = record["event"]
        assert {"kind", "category", "type", "action", "outcome"} <= set(event)
    with_url = [r for r in records if "url" in r]
    assert with_url
    assert with_url[0]["url"]["domain"] == "evil.example"
    alerts = [r for r in records if r["event"]["kind"] == "alert"]
    assert alerts
    assert all(r["rule"]["id"] for r in alerts)


def test_pure_renderers_keep_only_metadata() -> None:
    native = {
        "event": "elicitguard.decision",
        "ts": "2026-12-01T00:00:00.000000Z",
        "seq": 1,
        "decision_id": "d-1",
        "policy": {"name": "p", "revision": "r", "environment": None, "mode": "enforce"},
        "direction": "server_to_client",
        "protocol_version": "2025-11-25",
        "method": "elicitation/create",
        "jsonrpc_id": 4,
        "elicitation": [{"kind": "url_request", "url_domain": "evil.example"}],
        "action": "block",
        "enforced": True,
        "findings": [{"code": "EG301", "name": "x", "severity": "high", "action": "block"}],
    }
    ocsf = to_ocsf(native)
    assert ocsf["time"] == 1796083200000
    assert ocsf["resources"] == [{"type": "url_domain", "name": "evil.example"}]
    ecs = to_ecs(native)
    assert ecs["event"]["outcome"] == "failure"
    assert ecs["rule"]["id"] == "EG301"
    attributes = span_attributes(native)
    assert attributes["mcp.method.name"] == "elicitation/create"
    assert attributes["jsonrpc.request.id"] == "4"
    assert attributes["gen_ai.guardrail.action"] == "block"


class _Receiver(BaseHTTPRequestHandler):
    received: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        type(self).received.append(self.rfile.read(length))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return


def test_otlp_export_reaches_a_receiver(tmp_path: Path) -> None:
    """A span per decision, over OTLP/HTTP (JSON encoding), decoded by a loopback receiver."""
    pytest.importorskip("opentelemetry.sdk")
    _Receiver.received = []
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        engine = Engine(load_policy(None), audit=open_sink("file", str(tmp_path / "a.jsonl")))
        install_formats(engine, "ocsf", otlp=endpoint)
        relay = Relay(engine, side=Side.PROXY, transport=Transport.HTTP, server="s")
        for message, direction in _traffic():
            relay.inspect(json.dumps(message).encode(), direction, session="sess-1")
        from elicitguard.audit.formats import close_exporters

        close_exporters(engine)
        engine.close()
    finally:
        server.shutdown()
        server.server_close()
    spans = []
    for body in _Receiver.received:
        request = json.loads(body)
        for resource in request["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                spans.extend(scope["spans"])
    assert len(spans) >= 4
    attributes = [{a["key"]: a["value"] for a in span["attributes"]} for span in spans]
    methods = {a["mcp.method.name"]["stringValue"] for a in attributes if "mcp.method.name" in a}
    assert "elicitation/create" in methods
    assert any("gen_ai.guardrail.action" in a for a in attributes)
    raw = b"".join(_Receiver.received)
    for secret in SECRETS:
        assert secret.encode() not in raw
