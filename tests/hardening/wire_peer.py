"""A line-based MCP server that misbehaves on cue, for the wire-door tests (no SDK).

``python wire_peer.py LOG SCRIPT``: appends every line it reads to LOG. A ``tools/call``
named ``ask`` makes it write each line of SCRIPT (a JSON list of strings) first, then
answer; one named ``round`` without ``requestState`` is answered with a 2026-07-28
``InputRequiredResult`` whose state is ``v1.issued-here``; anything else gets a plain result.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    log_path, script_path = sys.argv[1], sys.argv[2]
    with open(script_path, encoding="utf-8") as handle:
        script: list[str] = json.load(handle)
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        with open(log_path, "ab") as log:
            log.write(line)
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        name = params.get("name")
        if message["method"] == "tools/call" and name == "ask":
            for frame in script:
                out.write(frame.encode("utf-8", "surrogatepass") + b"\n")
        if message["method"] == "tools/call" and name == "round" and "requestState" not in params:
            result = {
                "resultType": "input_required",
                "inputRequests": {
                    "q": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "How many guests?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"guests": {"type": "integer"}},
                            },
                        },
                    }
                },
                "requestState": "v1.issued-here",
            }
        else:
            result = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
