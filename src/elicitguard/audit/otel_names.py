"""The OpenTelemetry attribute names elicitguard's spans use, in one place.

MCP semantic conventions (``mcp.*``, ``jsonrpc.*``) and the GenAI guardrail ones
(``gen_ai.guardrail.*``): the latter are still being settled upstream, so a rename is one
edit here.
"""

from __future__ import annotations

MCP_METHOD = "mcp.method.name"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_SESSION_ID = "mcp.session.id"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
GUARDRAIL_NAME = "gen_ai.guardrail.name"
GUARDRAIL_POLICY = "gen_ai.guardrail.policy"
GUARDRAIL_ACTION = "gen_ai.guardrail.action"
GUARDRAIL_ENFORCED = "gen_ai.guardrail.enforced"
GUARDRAIL_CODES = "gen_ai.guardrail.codes"
GUARDRAIL_DECISION_ID = "gen_ai.guardrail.decision.id"
DIRECTION = "elicitguard.direction"
