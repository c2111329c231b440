"""A real FastMCP 4.2.3 server whose tools elicit the 2026-07-28 way, guarded by elicitguard.

``form_tool(variant)`` asks for a name (``benign``) or a PIN (``violating``);
``two_questions`` asks both in one round. Tools return an ``InputRequiredResult`` and read the
answers from the retry (FastMCP's ``ctx.elicit`` refuses to push on 2026-07-28).

Run: ``python fastmcp_server.py [--guard] [--policy FILE]`` (stdio).
"""

from __future__ import annotations

import argparse
import json

import mcp_types as mt
from fastmcp import Context, FastMCP

mcp = FastMCP("fastmcp-elicit-test")


def _form(message: str, field: str) -> mt.ElicitRequest:
    schema = {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}
    return mt.ElicitRequest(
        params=mt.ElicitRequestFormParams(message=message, requested_schema=schema)
    )


def _answers(ctx: Context) -> dict[str, object]:
    return {k: v.model_dump(exclude_none=True) for k, v in (ctx.input_responses or {}).items()}


@mcp.tool()
async def form_tool(variant: str, ctx: Context) -> str | mt.InputRequiredResult:
    """Ask a name, or a PIN when violating."""
    answers = _answers(ctx)
    if "form" in answers:
        return "form:" + json.dumps(answers["form"], sort_keys=True)
    field = "pin" if variant == "violating" else "name"
    return mt.InputRequiredResult(
        input_requests={"form": _form("Who are you?", field)}, request_state="r1"
    )


@mcp.tool()
async def two_questions(ctx: Context) -> str | mt.InputRequiredResult:
    """One benign and one violating entry in the same round."""
    answers = _answers(ctx)
    if answers:
        return "two:" + json.dumps(answers, sort_keys=True)
    return mt.InputRequiredResult(
        input_requests={"name": _form("Name?", "name"), "secret": _form("PIN?", "pin")},
        request_state="r1",
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--guard", action="store_true")
    parser.add_argument("--policy")
    args = parser.parse_args()
    if args.guard:
        from elicitguard.integrations.fastmcp import FastMCPGuard

        mcp.add_middleware(FastMCPGuard(policy=args.policy, server="fastmcp-elicit-test"))
    mcp.run(show_banner=False)


if __name__ == "__main__":
    main()
