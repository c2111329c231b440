"""Attacks on the HTTP proxy the way a client or upstream attacker would try them.

Each attack is expected to be refused and audited (the audit log is a file here). The
identity primitives (token forgery, sealed-state tampering and replay, cross-user URL
completion) are attacked in tests/identity/ (test_tokens, test_sealing, test_binding,
test_http_auth); this suite attacks what crosses the wire: header/body disagreement,
duplicate and oversized JSON, and Unicode tricks on rule inputs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration_support import require_module
from tests.integrations.support import http_proxy
from tests.integrations.test_http_proxy import scripted

PACK = Path(__file__).resolve().parents[1] / "integrations" / "policy"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The scripted upstream behind a proxy whose policy audits to a file."""
    require_module("httpx")
    folder = tmp_path_factory.mktemp("attacks")
    audit = folder / "audit.jsonl"
    policy = folder / "policy.yaml"
    policy.write_text(
        "name: attacks\nextends: [builtin:strict]\n"
        f"audit: {{sink: file, file: {json.dumps(str(audit))}}}\n",
        encoding="utf-8",
    )
    with scripted() as base, http_proxy(base + "/mcp", policy=policy) as url:
        yield url, audit


def post(url: str, body: bytes, **headers: str) -> Any:
    import httpx

    merged = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    merged.update(headers)
    return httpx.post(url, content=body, headers=merged, timeout=20)


def audited(audit: Path) -> list[dict[str, Any]]:
    """The complete records in the audit file (a line still being written is not one)."""
    if not audit.exists():
        return []
    text = audit.read_text(encoding="utf-8")
    return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines()]


def audited_after(audit: Path, before: int, patience: float = 10.0) -> list[dict[str, Any]]:
    """The records once more than ``before`` are there: the proxy's file sink writes from a
    background writer (``audit.queue``), so a record lands just after its response."""
    deadline = time.monotonic() + patience
    records = audited(audit)
    while len(records) <= before and time.monotonic() < deadline:
        time.sleep(0.02)
        records = audited(audit)
    return records


def test_duplicate_json_keys_are_refused_and_audited(guarded: tuple[str, Path]) -> None:
    """Two ``method`` keys: one parser would see ``echo``, another ``tools/call``."""
    url, audit = guarded
    before = len(audited(audit))
    body = b'{"jsonrpc":"2.0","id":41,"method":"echo","method":"tools/call"}'
    response = post(url, body)
    assert response.status_code == 400
    assert len(audited_after(audit, before)) > before


def test_oversized_body_is_refused_without_reaching_the_upstream(guarded: tuple[str, Path]) -> None:
    """A body over the policy's max_message_bytes is refused, not buffered and forwarded."""
    url, _ = guarded
    big = b'{"jsonrpc":"2.0","id":42,"method":"echo","params":{"x":"' + b"a" * (32 << 20) + b'"}}'
    response = post(url, big)
    assert response.status_code in (400, 413)


def test_deeply_nested_body_is_refused(guarded: tuple[str, Path]) -> None:
    """Nesting past the depth limit is refused (no recursion blow-up in any parser)."""
    url, _ = guarded
    body = (
        b'{"jsonrpc":"2.0","id":43,"method":"echo","params":{"x":'
        + b"[" * 5000
        + b"]" * 5000
        + b"}}"
    )
    assert post(url, body).status_code == 400


def test_mcp_name_header_disagreeing_with_the_body_is_refused(guarded: tuple[str, Path]) -> None:
    """Header smuggling: ``Mcp-Name: safe`` on a body calling ``dangerous``."""
    url, _ = guarded
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 44,
            "method": "tools/call",
            "params": {"name": "dangerous", "arguments": {}},
        }
    ).encode()
    response = post(url, body, **{"Mcp-Method": "tools/call", "Mcp-Name": "safe"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020
    assert "safe" not in response.text  # header values are never echoed
