"""elicitguard as a gateway's policy service: Envoy ext_proc and agentgateway ext_mcp.

A gateway fleet (Envoy and the gateways built on it, agentgateway) calls these gRPC
services for every MCP exchange. They are thin adapters: the decisions come from the same
:class:`~elicitguard.integrations.asgi.ElicitGuardMiddleware` and
:class:`~elicitguard.integrations.actions.Relay` the HTTP proxy runs, so a message is judged
the same wherever it is seen. State that a round needs across replicas lives in the shared
store (:mod:`elicitguard.gateway.shared_state`). Needs the ``gateway`` extra.
"""
