"""A line JSON-RPC server that misbehaves on purpose: ``python fault_server.py MODE``.

* ``hang``: reads requests and never answers; ignores SIGTERM and the end of its input;
* ``bigline``: answers each request after first writing one 100 MB line;
* ``close-stdout``: reads one request, closes its stdout, and lives on;
* ``echo``: answers every request at once with ``{"echo": <id>}`` (elicitation requests
  it reads in ``params.elicit`` are sent to the client first, as server requests);
* ``flood N``: on the first request, writes N notifications as fast as it can, then answers.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def reply(ident: object, result: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode() + b"\n"


def main() -> None:
    mode = sys.argv[1]
    out = sys.stdout.buffer
    if mode == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for _ in sys.stdin.buffer:
            pass
        while True:
            time.sleep(1)
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "method" not in message or "id" not in message:
            continue
        if mode == "close-stdout":
            out.flush()
            os.close(1)
            while True:
                time.sleep(1)
        if mode == "bigline":
            chunk = b"a" * (1 << 20)
            out.write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"')
            for _ in range(100):
                out.write(chunk)
            out.write(b'"}}\n')
        if mode == "flood":
            for n in range(int(sys.argv[2])):
                note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"n": n}}
                out.write(json.dumps(note).encode() + b"\n")
        if isinstance(message.get("params"), dict) and message["params"].get("elicit"):
            ask = {
                "jsonrpc": "2.0",
                "id": f"e{message['id']}",
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                    },
                },
            }
            out.write(json.dumps(ask).encode() + b"\n")
        out.write(reply(message["id"], {"echo": message["id"]}))
        out.flush()


if __name__ == "__main__":
    main()
