"""``elicitguard serve ext-proc|ext-mcp``: the policy as a gateway's gRPC service.

``serve ext-proc`` is Envoy's External Processing service (and so Istio's, Envoy
Gateway's, Kuadrant's); ``serve ext-mcp`` is agentgateway's MCP guardrail hook. Both judge
with the same engine and policy as ``proxy http``. Several replicas share state through
``--state-store redis://HOST:PORT/DB`` and one key file (``--keys FILE``); with port 0 the
service binds a free port and prints its address (and writes ``--port-file``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from elicitguard.errors import ElicitguardError

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``elicitguard serve``."""
    serve = subparsers.add_parser(
        "serve", help="run the policy as a gateway's gRPC service (Envoy ext_proc, agentgateway)"
    )
    sub = serve.add_subparsers(dest="serve_command", required=True)
    ext_proc = sub.add_parser("ext-proc", help="Envoy External Processing service")
    _common(ext_proc, default_port=9002)
    ext_proc.add_argument(
        "--mcp-path",
        default="/mcp",
        help="the MCP endpoint's path; other paths pass unjudged (default /mcp)",
    )
    ext_proc.add_argument(
        "--upstream",
        help="the MCP server's URL, for the replies the guard sends it itself (a blocked "
        "pushed elicitation's error); without it they are dropped and audited",
    )
    ext_proc.add_argument(
        "--trust-envoy-jwt",
        metavar="KEY",
        help="take the principal from Envoy's jwt_authn dynamic metadata (its "
        "payload_in_metadata KEY) instead of verifying the bearer token here",
    )
    ext_proc.set_defaults(handler=_run_ext_proc)
    ext_mcp = sub.add_parser("ext-mcp", help="agentgateway's MCP guardrail hook (ExtMcp)")
    _common(ext_mcp, default_port=9003)
    ext_mcp.set_defaults(handler=_run_ext_mcp)


def _common(parser: argparse.ArgumentParser, *, default_port: int) -> None:
    parser.add_argument("--policy", default=None, help="policy file or builtin:NAME")
    parser.add_argument("--env", choices=("dev", "test", "prod"), help="environment")
    parser.add_argument("--server-name", help="your name for the server (policy exceptions)")
    parser.add_argument(
        "--listen",
        default=f"127.0.0.1:{default_port}",
        metavar="HOST:PORT",
        help=f"where to listen (default 127.0.0.1:{default_port}; port 0 picks a free port)",
    )
    parser.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    parser.add_argument(
        "--state-store",
        metavar="URL",
        help="shared state for several replicas: redis://HOST:PORT/DB (or sqlite:///PATH on "
        "one host); overrides identity.store",
    )
    parser.add_argument(
        "--replicas", type=int, metavar="N", help="how many replicas share the state store"
    )
    parser.add_argument(
        "--keys", type=Path, metavar="FILE", help="the key file every replica shares"
    )
    parser.add_argument(
        "--seal-request-state",
        action="store_true",
        help="seal the server's requestState (bound to the user, the request and an expiry)",
    )
    parser.add_argument(
        "--audit-format",
        choices=("native", "ocsf", "ecs"),
        default=None,
        help="audit record format: native (default), OCSF Detection Finding, or ECS",
    )
    parser.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="export a span per decision over OTLP/HTTP (e.g. http://127.0.0.1:4318/v1/traces)",
    )


def _engine(args: argparse.Namespace) -> Any:
    from elicitguard.base.keys import load_keyring
    from elicitguard.engine.engine import Engine
    from elicitguard.engine.policy import load_policy

    policy = load_policy(args.policy, env=args.env)
    keys = load_keyring(args.keys) if args.keys is not None else None
    engine = Engine(policy, keys=keys)
    if args.audit_format is not None or args.otlp_endpoint is not None:
        from elicitguard.audit.formats import install_formats

        install_formats(engine, args.audit_format or "native", otlp=args.otlp_endpoint)
    return engine


def _listen(text: str) -> tuple[str, int] | None:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _shared(args: argparse.Namespace, engine: Any) -> Any:
    identity = engine.policy.identity
    several = (args.replicas or identity.get("replicas") or 1) > 1
    if args.state_store is None and "store" not in identity and not several:
        return None  # one replica: its own memory (several need a shared store: refused)
    from elicitguard.identity.setup import build_store

    return build_store(engine, store=args.state_store, replicas=args.replicas)


def _sealing(args: argparse.Namespace, engine: Any) -> Any:
    if not (args.seal_request_state or engine.policy.identity.get("seal_request_state")):
        return None
    from elicitguard.identity.setup import build_sealing

    return build_sealing(
        engine, store=args.state_store, replicas=args.replicas, server=args.server_name
    )


def _close(engine: Any) -> None:
    """Flush the span exporters, then close the engine (its audit sink)."""
    from elicitguard.audit.formats import close_exporters

    close_exporters(engine)
    engine.close()


def _missing_extra(exc: ImportError) -> int:
    print(
        f"elicitguard serve needs the gateway extra: pip install 'elicitguard[gateway]' ({exc.name})",
        file=sys.stderr,
    )
    return 2


def _run_ext_proc(args: argparse.Namespace) -> int:
    try:
        from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc

        from elicitguard.gateway.ext_proc import ExtProcService
        from elicitguard.gateway.server import (
            GatewayConfig,
            build_guard,
            run_server,
            serve,
            side_requests,
        )
    except ImportError as exc:
        return _missing_extra(exc)
    listen = _listen(str(args.listen))
    if listen is None:
        print("elicitguard: --listen takes HOST:PORT, e.g. 127.0.0.1:9002", file=sys.stderr)
        return 2
    try:
        engine = _engine(args)
        shared = _shared(args, engine)
        sealing = _sealing(args, engine)
        auth = None
        if args.trust_envoy_jwt is None:
            from elicitguard.identity.setup import build_auth

            auth = build_auth(engine, server=args.server_name)
    except (ElicitguardError, OSError) as exc:
        print(f"elicitguard: {exc}", file=sys.stderr)
        return 2
    config = GatewayConfig(
        host=listen[0],
        port=listen[1],
        port_file=args.port_file,
        path=args.mcp_path,
        server=args.server_name,
        upstream=args.upstream,
        trust_jwt_metadata=args.trust_envoy_jwt,
    )
    guard, state = build_guard(
        engine, path=config.path, server=config.server, shared=shared, sealing=sealing, auth=auth
    )

    async def run() -> int:
        side, close_side = side_requests(config.upstream, engine)
        service = ExtProcService(
            guard,
            engine,
            side_request=side,
            trust_jwt_metadata=config.trust_jwt_metadata,
            state=state,
        )

        def add(server: Any) -> None:
            pb_grpc.add_ExternalProcessorServicer_to_server(service, server)

        return await run_server(add, engine, config, on_close=close_side)

    try:
        return serve(run)
    finally:
        _close(engine)


def _run_ext_mcp(args: argparse.Namespace) -> int:
    try:
        from elicitguard.gateway.ext_mcp import ExtMcpService, add_service
        from elicitguard.gateway.server import GatewayConfig, run_server, serve
    except ImportError as exc:
        return _missing_extra(exc)
    listen = _listen(str(args.listen))
    if listen is None:
        print("elicitguard: --listen takes HOST:PORT, e.g. 127.0.0.1:9003", file=sys.stderr)
        return 2
    try:
        engine = _engine(args)
        shared = _shared(args, engine)
    except (ElicitguardError, OSError) as exc:
        print(f"elicitguard: {exc}", file=sys.stderr)
        return 2
    config = GatewayConfig(
        host=listen[0], port=listen[1], port_file=args.port_file, server=args.server_name
    )

    async def run() -> int:
        service = ExtMcpService(engine, shared=shared, server=config.server)

        def add(server: Any) -> None:
            add_service(service, server)

        return await run_server(add, engine, config, label="grpc")

    try:
        return serve(run)
    finally:
        _close(engine)
