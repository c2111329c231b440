"""Call the demo server's tools through the proxy with a bearer token (an `mcp` client).

    python examples/http_proxy/call.py http://127.0.0.1:8787/mcp "$TOKEN" [--era 2026-07-28]

Prints one line per call: the harmless form and the https URL pass; the password form
(EG201) and the `http://` URL (EG301) come back as the policy's -31001 error.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("book_table", {}),
    ("unlock", {}),
    ("connect", {"url": "https://accounts.example.com/connect"}),
    ("connect", {"url": "http://accounts.example.com/connect"}),
]


async def user(context: Any, params: Any) -> ElicitResult:
    """Accept everything: elicitguard, not this callback, is what stops bad requests."""
    if getattr(params, "mode", None) == "url":
        return ElicitResult(action="accept")
    fields = params.requested_schema.get("properties", {})
    return ElicitResult(action="accept", content=dict.fromkeys(fields, 4))


async def run(url: str, token: str, era: str) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with (
        http,
        Client(
            streamable_http_client(url, http_client=http), mode=era, elicitation_callback=user
        ) as client,
    ):
        for tool, arguments in CALLS:
            try:
                result = await client.call_tool(tool, arguments)
                text = " ".join(getattr(c, "text", "") for c in result.content)
            except MCPError as exc:
                codes = (exc.error.data or {}).get("elicitguard", {}).get("codes", [])
                text = f"error {exc.error.code} {' '.join(codes)}"
            print(f"{era} {tool}: {text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("token")
    parser.add_argument("--era", choices=["legacy", "2026-07-28"], default="2026-07-28")
    args = parser.parse_args()
    anyio.run(run, args.url, args.token, args.era)


if __name__ == "__main__":
    main()
