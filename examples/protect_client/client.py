"""An `mcp` SDK client protected by elicitguard, with a terminal consent screen.

It starts the demo server (`examples/protect_server/server.py --no-guard`: nothing protects
it on the server side) over stdio and calls its tools. elicitguard judges every elicitation
before the user sees it and every answer before it leaves:

- a form asking for a password (EG201) is answered `decline` without asking the user;
- a URL-mode request is shown as a consent screen (`elicitguard.consent.render_text`: the
  asking server, the full URL, the domain to check); an `accept` only reaches the server
  when the user said yes on that screen (the `ConsentGate`);
- a look-alike host (`аррӏе.com`, Cyrillic letters: EG403) never reaches the user.

The lines elicitguard adds are marked `# elicitguard`. Run it and answer on the terminal:

    python examples/protect_client/client.py            # both eras, one after the other
    python examples/protect_client/client.py --era 2026-07-28
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult

from elicitguard.consent import ConsentGate, render_text  # elicitguard
from elicitguard.integrations.mcp_client import ClientGuard, current_ticket  # elicitguard

SERVER = Path(__file__).resolve().parent.parent / "protect_server" / "server.py"
POLICY = "builtin:default"


def ask(question: str) -> str:
    """One line from the terminal (stdin), or empty at end of input."""
    print(question, end=" ", flush=True)
    line = sys.stdin.readline()
    return line.strip()


def consent_screen(view: Any) -> bool:
    """The consent dialog: the screen elicitguard renders, then a yes/no question."""
    print(render_text(view))  # elicitguard: never prints server text raw
    return ask("Open this page in your browser? [y/N]").lower() in ("y", "yes")


gate = ConsentGate(presenter=consent_screen, policy=POLICY)  # elicitguard
guard = ClientGuard(  # elicitguard
    policy=POLICY,
    server="demo-server",  # your name for the server (the mcpServers key)
    consent=gate,
    on_block=lambda notice: print(f"[elicitguard] {notice.stage}: {notice.reason}"),
)


async def ask_user(context: Any, params: Any) -> ElicitResult:
    """The application's own elicitation callback: it only sees what the policy allows."""
    if getattr(params, "mode", None) == "url":
        view = gate.view_for(current_ticket())  # elicitguard: the view of this request
        assert view is not None
        record = await anyio.to_thread.run_sync(gate.show, view)  # elicitguard: records the yes
        return ElicitResult(action="accept" if record.accepted else "decline")
    print(f"The server asks: {params.message}")
    content: dict[str, Any] = {}
    for name, spec in params.requested_schema.get("properties", {}).items():
        value = await anyio.to_thread.run_sync(ask, f"  {name}?")
        content[name] = int(value) if spec.get("type") == "integer" and value.isdigit() else value
    return ElicitResult(action="accept", content=content)


async def run(era: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "--no-guard"])
    transport = guard.transport(stdio_client(params))  # elicitguard: declares the policy's modes
    callback = guard.callback(ask_user)  # elicitguard: judges requests and answers
    async with Client(transport, mode=era, elicitation_callback=callback) as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("book_table", {}),
            ("connect", {"url": "https://accounts.example.com/connect"}),
            ("connect", {"url": "https://аррӏе.com/signin"}),
            ("unlock", {}),
        ]
        for tool, arguments in calls:
            try:
                result = await client.call_tool(tool, arguments)
                text = " ".join(getattr(c, "text", "") for c in result.content)
            except MCPError as exc:
                text = f"error {exc.error.code}"
            print(f"{era} {tool}: {text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--era", choices=["legacy", "2026-07-28"], action="append")
    for era in parser.parse_args().era or ["legacy", "2026-07-28"]:
        anyio.run(run, era)


if __name__ == "__main__":
    main()
