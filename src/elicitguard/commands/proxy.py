"""``elicitguard proxy stdio|http``: enforce a policy in front of any MCP server.

``proxy stdio [options] -- COMMAND [ARGS...]`` spawns the server and sits on its stdio (put it
in a desktop client's ``mcpServers`` entry in place of the server's own command).
``proxy http --upstream URL [--listen 127.0.0.1:PORT]`` is a Streamable HTTP reverse proxy;
with port 0 it binds a free port and prints its URL on stdout (and in ``--port-file``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from elicitguard.errors import ElicitguardError
from elicitguard.protocol.envelope import Side

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``elicitguard proxy``."""
    proxy = subparsers.add_parser(
        "proxy", help="enforce a policy in front of an MCP server (stdio or Streamable HTTP)"
    )
    sub = proxy.add_subparsers(dest="proxy_command", required=True)

    stdio = sub.add_parser(
        "stdio",
        help="spawn a stdio server and relay its traffic through the policy",
        usage="elicitguard proxy stdio [options] -- COMMAND [ARGS...]",
    )
    _common(stdio)
    stdio.add_argument(
        "--shutdown-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="after the client leaves: wait this long before SIGTERM, and again before SIGKILL",
    )
    stdio.add_argument(
        "--request-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="answer a client request with an error when the server leaves it this long "
        "(default: wait as long as the server takes)",
    )
    stdio.add_argument("command", nargs=argparse.REMAINDER, help="the server's command line")
    stdio.set_defaults(handler=_run_stdio)

    http = sub.add_parser("http", help="reverse proxy for a Streamable HTTP server")
    _common(http)
    http.add_argument("--upstream", required=True, help="the server's MCP endpoint URL")
    http.add_argument(
        "--listen",
        default="127.0.0.1:8787",
        metavar="HOST:PORT",
        help="where to listen (default 127.0.0.1:8787; port 0 picks a free port)",
    )
    http.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    http.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the upstream to accept a connection",
    )
    http.add_argument(
        "--request-timeout",
        type=_positive_seconds,
        default=None,
        metavar="SECONDS",
        help="answer a request with an error (HTTP 504, JSON-RPC -32603) when the server "
        "sends no headers or no complete JSON body within this time, or leaves a POST's "
        "event stream silent this long; audited (default: wait as long as the server takes)",
    )
    http.set_defaults(handler=_run_http)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text!r}")
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default=None, help="policy file or builtin:NAME")
    parser.add_argument("--env", choices=("dev", "test", "prod"), help="environment")
    parser.add_argument(
        "--server-name", help="your name for the server (policy exceptions match it)"
    )
    parser.add_argument(
        "--audit-log",
        type=Path,
        metavar="FILE",
        help="append audit records to FILE (mode 0600) instead of the policy's audit sink; "
        "keeps them apart from the server's own stderr",
    )
    parser.add_argument("--record", type=Path, metavar="FILE", help="record envelopes (JSONL)")
    parser.add_argument(
        "--record-raw",
        action="store_true",
        help="record values unredacted (only on a machine you trust; headers with "
        "credentials are still left out)",
    )
    parser.add_argument(
        "--seal-request-state",
        action="store_true",
        help="seal the server's requestState (AES-GCM, bound to the user, the request and "
        "an expiry, single use); the server gets back exactly what it issued",
    )
    parser.add_argument(
        "--state-store",
        metavar="URL",
        help="where single-use markers live: memory (default), sqlite:///PATH (one host) or "
        "redis://HOST:PORT/DB (several replicas); overrides identity.store",
    )
    parser.add_argument(
        "--replicas",
        type=int,
        metavar="N",
        help="how many proxies serve the same clients; above 1 needs configured keys and a "
        "shared store (overrides identity.replicas)",
    )


_LAUNCHERS = ("python", "node", "npx", "uv", "uvx", "deno", "bun", "pipx", "docker")


def _default_name(command: list[str]) -> str:
    """A server name from its command: the script or package, not the interpreter."""
    name = Path(command[0]).name
    if name.startswith(_LAUNCHERS):
        for arg in command[1:]:
            if not arg.startswith("-") and arg not in ("run", "exec"):
                return Path(arg).stem or name
    return name


def _engine(args: argparse.Namespace) -> Any:
    from elicitguard.engine.engine import Engine
    from elicitguard.engine.policy import load_policy

    policy = load_policy(args.policy, env=args.env)
    if args.audit_log is None:
        return Engine(policy)
    from elicitguard.audit.sink import open_sink

    try:
        # The policy's writer settings (audit.queue, audit.when_full) hold for --audit-log too.
        sink = open_sink(
            "file", str(args.audit_log), queue=policy.audit_queue, when_full=policy.audit_when_full
        )
    except OSError as exc:
        raise ElicitguardError(f"cannot open --audit-log {args.audit_log}: {exc.strerror}") from exc
    return Engine(policy, audit=sink)


def _run_stdio(args: argparse.Namespace) -> int:
    from elicitguard.integrations.actions import Relay
    from elicitguard.integrations.recorder import Recorder
    from elicitguard.integrations.stdio_proxy import StdioProxy, serve_stdio
    from elicitguard.protocol.envelope import Side, Transport

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("elicitguard proxy stdio: give the server's command after `--`", file=sys.stderr)
        return 2
    server = args.server_name or _default_name(command)
    try:
        engine = _engine(args)
    except ElicitguardError as exc:
        print(f"elicitguard: {exc}", file=sys.stderr)
        return 2
    recorder = (
        Recorder(args.record, raw=args.record_raw, transport=Transport.STDIO, server=server)
        if args.record is not None
        else None
    )
    try:
        sealing = _sealing(args, engine, server)
    except ElicitguardError as exc:
        print(f"elicitguard: {exc}", file=sys.stderr)
        engine.close()
        return 2
    relay = Relay(
        engine, side=Side.PROXY, transport=Transport.STDIO, server=server, sealing=sealing
    )
    proxy = StdioProxy(
        relay,
        command,
        recorder=recorder,
        shutdown_timeout=args.shutdown_timeout,
        request_timeout=args.request_timeout,
    )
    try:
        return asyncio.run(serve_stdio(proxy))
    except FileNotFoundError:
        print(f"elicitguard: cannot run {command[0]!r}: not found", file=sys.stderr)
        return 127
    except PermissionError:
        print(f"elicitguard: cannot run {command[0]!r}: permission denied", file=sys.stderr)
        return 126
    finally:
        engine.close()


def _run_http(args: argparse.Namespace) -> int:
    try:
        from elicitguard.integrations.http_proxy import serve_http
    except ImportError as exc:
        print(
            f"elicitguard proxy http needs the http extra: pip install 'elicitguard[http]' ({exc.name})",
            file=sys.stderr,
        )
        return 2
    host, _, port_text = str(args.listen).rpartition(":")
    if not host or not port_text.isdigit():
        print("elicitguard: --listen takes HOST:PORT, e.g. 127.0.0.1:8787", file=sys.stderr)
        return 2
    try:
        engine = _engine(args)
    except ElicitguardError as exc:
        print(f"elicitguard: {exc}", file=sys.stderr)
        return 2
    try:
        from elicitguard.identity.setup import build_auth

        sealing = _sealing(args, engine, args.server_name)
        auth = build_auth(engine, server=args.server_name)
    except ElicitguardError as exc:
        print(f"elicitguard: {exc}", file=sys.stderr)
        engine.close()
        return 2
    notice = unverified_user_notice(engine)
    if notice is not None:
        print(notice, file=sys.stderr)
    try:
        return serve_http(
            engine,
            upstream=args.upstream,
            host=host.strip("[]"),
            port=int(port_text),
            server=args.server_name,
            record=args.record,
            record_raw=args.record_raw,
            port_file=args.port_file,
            connect_timeout=args.connect_timeout,
            request_timeout=args.request_timeout,
            sealing=sealing,
            auth=auth,
        )
    finally:
        engine.close()


def unverified_user_notice(engine: Any) -> str | None:
    """The startup line of an HTTP proxy that can verify no user (EG501 on, no identity).

    Said once here, and EG501 then reports each session's first elicitation only, instead
    of the same finding on every message; a policy that blocks on EG501 still blocks each.
    """
    from elicitguard.engine.builtin.identity_rules import identity_configured

    rule = engine.policy.rules.get("EG501")
    if rule is None or rule.action_for(Side.PROXY) is None:
        return None
    if identity_configured(engine.policy.identity):
        return None
    return (
        "elicitguard: no identity is configured (policy `identity:` has no issuers or keys), "
        "so no user can be verified; EG501 reports the first elicitation of each session. "
        "See `elicitguard rules explain EG501`."
    )


def _sealing(args: argparse.Namespace, engine: Any, server: str | None) -> Any:
    """The requestState guard when ``--seal-request-state`` is given (or the policy asks)."""
    identity = engine.policy.identity
    wanted = args.seal_request_state or bool(identity.get("seal_request_state"))
    shared = args.state_store is not None or args.replicas is not None or "store" in identity
    if not wanted and not shared and "replicas" not in identity:
        return None  # nothing to set up: keep the proxy's start fast
    from elicitguard.identity.setup import build_sealing, build_store

    if not wanted:
        build_store(engine, store=args.state_store, replicas=args.replicas).close()
        return None
    return build_sealing(engine, store=args.state_store, replicas=args.replicas, server=server)
