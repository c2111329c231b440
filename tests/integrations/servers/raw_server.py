"""A minimal line-based JSON-RPC peer for fault tests (no SDK: it must misbehave on purpose).

``python raw_server.py MODE [ARG]``:
* ``echo FILE``: appends every line it reads to FILE, byte for byte, and answers each request
  with a result written in an unusual but valid layout (spaces, key order);
* ``garbage``: before each answer writes a non-JSON line, a line of NUL bytes and a line over
  64 KiB; a request for the method ``broken`` is answered with a truncated object instead;
* ``stubborn``: ignores SIGTERM and the end of its input, and never exits by itself;
* ``exit N``: reads one line, then exits with status N.
"""

from __future__ import annotations

import json
import signal
import sys
import time


def answer(line: bytes) -> bytes | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    ident = json.dumps(message["id"])
    return (
        b'{ "result" : {"echo" : true, "z": 1, "a": 2} , "id" : '
        + ident.encode()
        + b', "jsonrpc":"2.0" }\n'
    )


def main() -> None:
    mode = sys.argv[1]
    out = sys.stdout.buffer
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    if mode == "exit":
        sys.stdin.buffer.readline()
        sys.exit(int(sys.argv[2]))
    for line in sys.stdin.buffer:
        if mode == "echo":
            with open(sys.argv[2], "ab") as log:
                log.write(line)
        reply = answer(line)
        if reply is None:
            continue
        if mode == "garbage":
            request = json.loads(line)
            if request["method"] == "broken":
                ident = json.dumps(request["id"]).encode()
                out.write(b'{"jsonrpc":"2.0","id":' + ident + b',"result":{"cut\n')
                out.flush()
                continue
            out.write(b"this is not JSON\n")
            out.write(b"\x00\x00\x00\n")
            big = b"a" * 70000
            out.write(
                b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'
                + big
                + b'"}}\n'
            )
        out.write(reply)
        out.flush()


if __name__ == "__main__":
    main()
