"""Header smuggling: Mcp-* headers must agree with the body the guard judged (TR-01)."""

from __future__ import annotations

import base64

import pytest

from elicitguard.integrations.asgi import header_mismatch

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "book_täble", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
B64 = "=?base64?" + base64.b64encode("book_täble".encode()).decode() + "?="


@pytest.mark.parametrize(
    ("headers", "disagrees"),
    [
        ({}, False),  # no Mcp-* headers at all (push era)
        ({"mcp-method": "tools/call", "mcp-name": B64, "mcp-protocol-version": "2026-07-28"}, False),  # all agree, name in base64 form
        ({"mcp-method": "tools/list"}, True),  # method smuggled
        ({"mcp-name": "book_table"}, True),  # a look-alike name
        ({"mcp-name": "=?base64?not-base64?="}, True),  # undecodable base64 form
        ({"mcp-protocol-version": "2025-11-25"}, True),  # version disagrees with _meta
    ],
)
def test_header_mismatch(headers: dict[str, str], disagrees: bool) -> None:
    """Each Mcp-* header the client sent must say what the body says."""
    reason = header_mismatch(headers, CALL)
    assert (reason is not None) is disagrees
    if reason is not None:
        assert "book" not in reason  # names the header, never the value
