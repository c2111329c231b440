"""Secrets and personal data in URL-mode targets never reach a report or an audit record.

EG301-EG306 and EG202 fire on values inside URLs (a token in a query, a password in the
user-info, an e-mail in a path, a signed URL's signature, a link in a form). Every channel
that carries a URL to the user is exercised: pushed and task-augmented requests, -32042
error data and ``inputRequests``. The reports (text, JSON, SARIF) and the audit log must
name the kind of value and where it sits, never the value; with keys configured, the audit
record holds a keyed fingerprint that identifies the value instead (the same value gives
the same fingerprint in two messages). Values are assembled at test time so that no
scanner mistakes this file for a leak.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from elicitguard.checks.secrets import base62_crc32
from elicitguard.cli import main

_BODY = "Qm7Xk2Lp9Vt4Wn8Rb3Yc6Zd1Fg5Hj0Ks"[:30]
TOKEN = "gh" + "p_" + _BODY + base62_crc32(_BODY)
AWS = "AK" + "IA" + "QX7ZK2LMN4PRSTUV"
PASSWORD = "Corr3ct-" + "Horse-Battery-9"
API_KEY = "tY8rW2qE" + "5uI9oP3aS7dF1gH4"
EMAIL = "alice.private" + "@gmail.com"
CARD = "4111" + "1111" + "1111" + "1111"
SSN = "536-90" + "-4399"
IBAN = "DE8937040044" + "0532013000"
SIGNATURE = "c821615" + "6cad88c5aae04e07d93c3a3d76b83217c3bd54b72d030ec90117f72d2"
MAGIC = "Zr4Wm7Xn2Bv6" + "Cj9Dh3Fp5Gt1Hy0J"
LINK = "https://acme-" + "phish.example/verify"
PLANTED = [TOKEN, AWS, PASSWORD, API_KEY, EMAIL, CARD, SSN, IBAN, SIGNATURE, MAGIC, LINK]
# Only parameter names and our own words may appear; these are parts of values.
PIECES = [TOKEN[4:18], AWS[4:16], PASSWORD[3:14], API_KEY[2:14], "alice.private", SIGNATURE[:16], MAGIC[:12], "acme-phish"]

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}


def _url_request(n: int, url: str, **extra: Any) -> dict[str, Any]:
    params = {"mode": "url", "message": "Connect your account", "url": url, "elicitationId": f"e-{n}", **extra}
    return {"jsonrpc": "2.0", "id": n, "method": "elicitation/create", "params": params}


def _envelope(message: dict[str, Any], direction: str = "server_to_client", session: str = "push") -> str:
    return json.dumps({"direction": direction, "session": session, "server": "acme-crm", "message": message})


def capture(tmp_path: Path) -> Path:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}, "url": {}}}}}
    b64_email = base64.urlsafe_b64encode(json.dumps({"email": EMAIL}).encode()).decode().rstrip("=")
    s3 = (
        "https://bucket.s3.amazonaws.com/q3.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential={AWS}%2F20251125%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature={SIGNATURE}"
    )
    lines = [
        _envelope(init, "client_to_server"),
        _envelope({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}),
        # pushed requests: credentials in every component, plain http, personal data
        _envelope(_url_request(1, f"http://admin:{PASSWORD}@auth.example.com/k/{AWS}?api_key={API_KEY}&data={TOKEN}")),
        _envelope(_url_request(2, f"https://app.example.com/u/{EMAIL}?card={CARD}&ssn={SSN}&iban={IBAN}&state={b64_email}")),
        # the same token again, bare and nested in a redirect (same fingerprint expected)
        _envelope(_url_request(3, f"https://app.example.com/install?{TOKEN}&next=https%3A%2F%2Fb.example%2F%3Ftoken%3D{API_KEY}")),
        # task-augmented: a magic link; an invalid URL holding a secret
        _envelope(_url_request(4, f"https://app.example.com/login?token={MAGIC}", task={"ttl": 60000})),
        _envelope(_url_request(5, f"https://auth.example.com\\@b.example/?password={PASSWORD}")),
        # -32042 error data: a presigned S3 URL; a form with a link in its message
        _envelope({"jsonrpc": "2.0", "id": 6, "error": {"code": -32042, "message": "Authorization required", "data": {"elicitations": [{"mode": "url", "message": f"Or open {LINK}", "url": s3, "elicitationId": "e-6"}]}}}),
        _envelope({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {"mode": "form", "message": f"First sign in at {LINK}", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean", "title": f"I opened {LINK}"}}}}}),
        # 2026-07-28 inputRequests
        _envelope({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "t", "arguments": {}, "_meta": META}}, "client_to_server", "modern"),
        _envelope({"jsonrpc": "2.0", "id": 8, "result": {"resultType": "input_required", "inputRequests": {"a": {"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": f"https://app.example.com/cb#access_token={API_KEY}&email={EMAIL}"}}}}}, session="modern"),
    ]
    path = tmp_path / "url-leak.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = base64.b64encode(bytes(range(32))).decode()
    monkeypatch.setenv("ELICITGUARD_KEYS", json.dumps({"keys": [{"id": "k1", "secret": secret}]}))


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_no_url_value_reaches_any_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None, fmt: str
) -> None:
    """Reports, audit records and streams name kinds and places, never the values."""
    path = capture(tmp_path)
    report = tmp_path / f"report.{fmt}"
    audit = tmp_path / "audit.jsonl"
    code = main(["lint", "--format", fmt, "--output", str(report), "--audit-log", str(audit), str(path)])
    assert code == 1
    streams = capsys.readouterr()
    outputs = {"report": report.read_text(), "audit": audit.read_text(), "stdout": streams.out, "stderr": streams.err}
    for name, text in outputs.items():
        for value in PLANTED:
            assert value not in text, f"a planted value reached {name}"
        for piece in PIECES:
            assert piece not in text, f"part of a planted value reached {name}"


def test_every_family_fires_and_values_are_fingerprinted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None
) -> None:
    """EG202 and EG301-EG305 fire; each value-bearing finding carries a keyed fingerprint."""
    path = capture(tmp_path)
    audit = tmp_path / "audit.jsonl"
    main(["lint", "--format", "json", "--audit-log", str(audit), str(path)])
    capsys.readouterr()
    findings = [f for line in audit.read_text().splitlines() for f in json.loads(line).get("findings", [])]
    codes = {f["code"] for f in findings}
    assert {"EG202", "EG301", "EG302", "EG303", "EG304", "EG305"} <= codes
    for finding in findings:
        if finding["code"] in {"EG202", "EG303", "EG304", "EG305"}:
            assert str(finding["value_fingerprint"]).startswith("hmac:k1:")
    # the token of line 3 (bare key) and line 1 (query value) is the same value
    token_prints = [f["value_fingerprint"] for f in findings if f["code"] == "EG303"]
    assert len(token_prints) > len(set(token_prints))
