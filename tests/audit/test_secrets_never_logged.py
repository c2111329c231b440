"""Secrets and PII planted in traffic never reach a report, an audit record or an error.

The planted values are built at test time so that no scanner mistakes this file for a leak.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elicitguard.cli import main

TOKEN = "ghp_" + "Zq8bX2vN4kL7mP1sR6tY9wA3cE5gH0jK2dF4"
AWS = "AKIA" + "QX7ZK2LMN4PRSTUV"
PASSWORD = "hunter2-" + "Correct-Horse-Battery"
CARD = "4111" + "1111" + "1111" + "1111"
EMAIL = "alice.secret" + "@example.org"
STATE = "plain-" + "state-with-user-alice-42"
BEARER = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"
PLANTED = [TOKEN, AWS, PASSWORD, CARD, EMAIL, STATE, BEARER]


def capture(tmp_path: Path) -> Path:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}},
    }
    lines = [
        {
            "direction": "client_to_server",
            "message": init,
            "session": "leak",
            "headers": {"Authorization": f"Bearer {BEARER}"},
        },
        {
            "direction": "server_to_client",
            "message": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}},
            "session": "leak",
        },
        # A URL-mode request to a form-only client, with secrets and PII in the URL.
        {
            "direction": "server_to_client",
            "session": "leak",
            "message": {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "elicitation/create",
                "params": {
                    "mode": "url",
                    "message": f"Token {TOKEN}",
                    "url": f"https://auth.example.com/cb?token={TOKEN}&email={EMAIL}&key={AWS}",
                    "elicitationId": "e1",
                },
            },
        },
        # A form whose default holds a password, answered with a card number.
        {
            "direction": "server_to_client",
            "session": "leak",
            "message": {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Details",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "pw": {"type": "string", "default": PASSWORD, "pattern": PASSWORD},
                            "n": {"type": "integer"},
                        },
                    },
                },
            },
        },
        {
            "direction": "client_to_server",
            "session": "leak",
            "message": {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {
                    "action": "accept",
                    "content": {"pw": PASSWORD, "n": CARD, "extra": EMAIL},
                },
            },
        },
        # 2026-07-28: requestState in clear, answers with secrets, an invalid result.
        {
            "direction": "client_to_server",
            "session": "m",
            "message": {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                    }
                },
            },
        },
        {
            "direction": "server_to_client",
            "session": "m",
            "message": {
                "jsonrpc": "2.0",
                "id": 5,
                "result": {
                    "resultType": "input_required",
                    "inputRequests": {
                        "k": {
                            "method": "elicitation/create",
                            "params": {
                                "message": f"card {CARD}",
                                "requestedSchema": {
                                    "type": "object",
                                    "properties": {"card": {"type": "string"}},
                                },
                            },
                        }
                    },
                    "requestState": STATE,
                },
            },
        },
        {
            "direction": "client_to_server",
            "session": "m",
            "message": {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "tools/list",
                "params": {
                    "inputResponses": {"k": {"action": "decline", "content": {"card": CARD}}},
                    "requestState": STATE,
                },
            },
        },
    ]
    text = "\n".join(json.dumps(line) for line in lines)
    # Unparseable lines that contain secrets too.
    text += f'\n{{"direction": "client_to_server", "message": {{"token": "{TOKEN}"\n'
    text += f"not json at all {PASSWORD} {AWS}\n"
    text += (
        json.dumps({"direction": "client_to_server", "message": {"a": TOKEN}, f"unknown_{AWS}": 1})
        + "\n"
    )
    path = tmp_path / "leak.jsonl"
    path.write_text(text)
    return path


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_planted_value_reaches_any_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """Reports, audit records and error messages hold fingerprints, never the values."""
    path = capture(tmp_path)
    report = tmp_path / f"report.{fmt}"
    audit = tmp_path / "audit.jsonl"
    code = main(
        ["lint", "--format", fmt, "--output", str(report), "--audit-log", str(audit), str(path)]
    )
    assert code == 1
    streams = capsys.readouterr()
    outputs = {
        "report": report.read_text(),
        "audit": audit.read_text(),
        "stdout": streams.out,
        "stderr": streams.err,
    }
    assert outputs["audit"].strip()
    for name, text in outputs.items():
        for secret in PLANTED:
            assert secret not in text, f"a planted value reached {name}"
            assert secret[6:20] not in text, f"part of a planted value reached {name}"


def test_redaction_is_idempotent_and_total() -> None:
    """The redaction boundary masks sensitive keys at any depth, twice the same."""
    from elicitguard.audit.redact import REDACTED, Redactor

    redact = Redactor()
    event = {
        "a": {"Authorization": "Bearer x", "list": [{"token": "t"}, TOKEN]},
        "content": {"x": 1},
    }
    once = redact(event)
    assert once["a"]["Authorization"] == REDACTED
    assert once["a"]["list"][0]["token"] == REDACTED
    assert once["content"] == REDACTED
    assert redact(once) == once


# Answers that carry secrets (EG204) in forms of several languages, both eras; a default and
# a message that leak one (EG205). Built at test time, like the values above.
ANSWER_KEY = "Qm7" + "xT2vL9pK4sW8nB3cR6yH1dF5gJ0aZ2eU"
ANSWER_PASSWORD = "Fichte-7-" + "Wolke!-Sturm"
SEED = "orbit velvet canyon mango " + "ripple tunnel eager fossil lunar basket violin harbor"
DB_PASSWORD = "Vq7xT2m" + "Lp9wKd4s"
DB_URL = f"postgres://svc:{DB_PASSWORD}@db.internal.example:5432/app"
ANSWER_PLANTED = [ANSWER_KEY, ANSWER_PASSWORD, SEED, DB_PASSWORD, TOKEN, BEARER]


def form_capture(tmp_path: Path) -> Path:
    def form(props: dict[str, Any], message: str = "Bitte ausfüllen") -> dict[str, Any]:
        return {"mode": "form", "message": message, "requestedSchema": {"type": "object", "properties": props}}

    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}}}
    key_form = form({"schluessel": {"type": "string", "title": "API-Schlüssel"}, "kennwort": {"type": "string", "title": "Kennwort"}})
    seed_form = form({"phrase": {"type": "string", "title": "助记词"}, "memo": {"type": "string", "title": "備註"}})
    leaky = form({"db": {"type": "string", "title": "Base de datos", "default": DB_URL}}, message=f"Token {TOKEN}")
    lines = [
        {"direction": "client_to_server", "session": "p", "message": init},
        {"direction": "server_to_client", "session": "p", "message": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}},
        {"direction": "server_to_client", "session": "p", "message": {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": key_form}},
        {"direction": "client_to_server", "session": "p", "message": {"jsonrpc": "2.0", "id": 1, "result": {"action": "accept", "content": {"schluessel": ANSWER_KEY, "kennwort": ANSWER_PASSWORD}}}},
        {"direction": "server_to_client", "session": "p", "message": {"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": leaky}},
        {"direction": "client_to_server", "session": "m", "message": {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "wallet", "arguments": {}, "_meta": meta}}},
        {"direction": "server_to_client", "session": "m", "message": {"jsonrpc": "2.0", "id": 5, "result": {"resultType": "input_required", "inputRequests": {"w": {"method": "elicitation/create", "params": seed_form}}, "requestState": "opaque-ref-5"}}},
        {"direction": "client_to_server", "session": "m", "message": {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "wallet", "arguments": {}, "inputResponses": {"w": {"action": "accept", "content": {"phrase": SEED, "memo": f"also {DB_URL} and Bearer {BEARER}"}}}, "requestState": "opaque-ref-5", "_meta": meta}}},
    ]
    path = tmp_path / "forms.jsonl"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_planted_answer_secrets_are_found_and_never_reach_any_output(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """EG204 and EG205 fire on every planted secret; reports, audit records and stderr hold none of them."""
    path = form_capture(tmp_path)
    report = tmp_path / f"report.{fmt}"
    audit = tmp_path / "audit.jsonl"
    code = main(["lint", "--format", fmt, "--output", str(report), "--audit-log", str(audit), str(path)])
    assert code == 1
    streams = capsys.readouterr()
    outputs = {"report": report.read_text(encoding="utf-8"), "audit": audit.read_text(encoding="utf-8"), "stdout": streams.out, "stderr": streams.err}
    if fmt == "json":
        found = {(f["line"], f["code"], f["pointer"]) for f in json.loads(outputs["report"])["findings"]}
        assert {
            (4, "EG204", "/result/content/schluessel"),
            (4, "EG204", "/result/content/kennwort"),
            (5, "EG205", "/params/message"),
            (5, "EG205", "/params/requestedSchema/properties/db/default"),
            (8, "EG204", "/params/inputResponses/w/content/phrase"),
            (8, "EG204", "/params/inputResponses/w/content/memo"),
        } <= found
    for name, text in outputs.items():
        for secret in ANSWER_PLANTED:
            assert secret not in text, f"a planted value reached {name}"
            assert secret[3:15] not in text, f"part of a planted value reached {name}"
