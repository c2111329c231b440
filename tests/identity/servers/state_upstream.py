"""A tiny stdio MCP upstream: asks once with a requestState, then echoes the state it got back."""

from __future__ import annotations

import json
import sys

INNER = 'upstream:{"step":2} é ✓ \\ "quoted"'


def main() -> None:
    """Answer newline-delimited JSON-RPC on stdin until it closes."""
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        params = message.get("params") or {}
        if "requestState" in params:
            result = {
                "resultType": "complete",
                "content": [{"type": "text", "text": json.dumps(params["requestState"])}],
            }
        else:
            result = {"resultType": "input_required", "requestState": INNER}
        sys.stdout.write(
            json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
