"""Real peers for the SDK integration tests: the test servers and a host that answers.

The servers run as subprocesses on stdio, so every frame goes through the SDK's real JSON-RPC
framing; the host is an elicitation callback that records what the user was shown and
answers the way a test asks.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
ELICIT_SERVER = SERVERS / "elicit_server.py"
FASTMCP_SERVER = SERVERS / "fastmcp_server.py"
GUARD_POLICY = HERE / "policy" / "guard.yaml"
FORM_ONLY_POLICY = HERE / "policy" / "form-only.yaml"

#: The two eras as ``mcp.Client(mode=...)`` spells them.
ERAS = ("legacy", "2026-07-28")


def server_params(script: Path, *args: str) -> Any:
    """How ``mcp.Client`` starts a test server on stdio."""
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=[str(script), *args])


@dataclass
class Host:
    """An elicitation callback standing in for the user interface.

    ``shown`` records the params of every request the user saw. The host accepts forms
    by filling each field with ``"x"`` (``content`` overrides that) and accepts URLs;
    ``action`` makes it answer something else.
    """

    shown: list[dict[str, Any]] = field(default_factory=list)
    action: str = "accept"
    content: dict[str, Any] | None = None

    async def __call__(self, context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        self.shown.append(params.model_dump(by_alias=True, exclude_none=True))
        if self.action != "accept" or getattr(params, "mode", None) == "url":
            return ElicitResult(action=self.action)
        if self.content is not None:
            return ElicitResult(action="accept", content=self.content)
        fields = params.requested_schema.get("properties", {})
        return ElicitResult(action="accept", content=dict.fromkeys(fields, "x"))


async def outcome(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call ``tool``: its text, or the JSON-RPC error the client got instead."""
    from mcp.shared.exceptions import MCPError

    try:
        result = await client.call_tool(tool, arguments)
    except MCPError as exc:
        return {"error": exc.error.code, "data": exc.error.data}
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return {"text": text, "is_error": result.is_error}


def blocked_by(result: dict[str, Any], code: str, error_code: int = -31001) -> bool:
    """True when ``result`` is the policy's error naming ``code``."""
    data = result.get("data") or {}
    guard = data.get("elicitguard", {}) if isinstance(data, dict) else {}
    return (
        result.get("error") == error_code
        and code in guard.get("codes", ())
        and len(guard.get("decision_id", "")) == 24
    )
