#!/usr/bin/env python3
"""Write the example captures in all three formats from examples/traffic/scenarios.yaml.

    python scripts/make_example_traffic.py           # (re)write every file
    python scripts/make_example_traffic.py --check   # exit 1 when a file is stale

For each scenario it writes the envelope JSONL (``examples/traffic/<name>.jsonl``), the raw
JSON-RPC JSONL (``raw/<name>.jsonl``: the messages alone) and a HAR 1.2 document
(``har/<name>.har``) of the same exchange over Streamable HTTP, laid out the way the
transport carries it:

* every client-to-server message is a POST; a request gets its answer in the response
  (``application/json`` when the server sends just the result, ``text/event-stream`` when
  it sends requests or notifications first); a client's response or notification gets
  ``202 Accepted`` with no body;
* a server-to-client request or notification travels on the SSE stream of the client's
  most recent open request in that session, or on the session's GET stream when none is
  open (entries appear in the order of their first message);
* ``Mcp-Session-Id`` is set by the ``initialize`` response and sent on every later request
  of the session; ``MCP-Protocol-Version`` carries the negotiated version (every 2026-07-28
  request carries it, with ``Mcp-Method`` and ``Mcp-Name``); every request carries an
  ``Authorization`` header with a placeholder bearer token, as remote servers require.

The output is deterministic (fixed times and session ids), so the committed files are
checked with ``--check`` in the tests.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TRAFFIC = ROOT / "examples" / "traffic"
URL = "https://{server}.example.com/mcp"
START = dt.datetime(2026, 11, 29, 10, 0, 0, tzinfo=dt.UTC)
MODERN = "2026-07-28"
DIRECTIONS = {"c2s": "client_to_server", "s2c": "server_to_client"}
#: A placeholder, not a credential: remote servers get a bearer token on every request (AU-07).
EXAMPLE_TOKEN = "example-access-token"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def envelope_lines(scenario: dict[str, Any]) -> str:
    """The envelope JSONL text of a scenario."""
    lines = []
    for session, direction, message in scenario["messages"]:
        envelope = {
            "direction": DIRECTIONS[direction],
            "message": message,
            "session": session,
            "server": scenario["server"],
            "transport": scenario["transport"],
        }
        lines.append(_compact(envelope))
    return "\n".join(lines) + "\n"


def raw_lines(scenario: dict[str, Any]) -> str:
    """The raw JSON-RPC JSONL text of a scenario."""
    return "\n".join(_compact(m) for _, _, m in scenario["messages"]) + "\n"


# --- HAR ------------------------------------------------------------------------------------


@dataclass
class _Entry:
    session: str
    method: str
    request: dict[str, Any] | None
    events: list[dict[str, Any]] = field(default_factory=list)
    version: str | None = None
    sets_session: bool = False


@dataclass
class _Session:
    label: str
    session_id: str | None = None
    version: str | None = None
    open_requests: dict[str, int] = field(default_factory=dict)  # id -> entry index
    get_entry: int | None = None


def _id(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def _session_id(scenario: str, label: str) -> str:
    return hashlib.sha256(f"{scenario}/{label}".encode()).hexdigest()[:32]


def _meta_version(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = (
        meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
    )
    return version if isinstance(version, str) else None


def _layout(scenario: dict[str, Any]) -> list[_Entry]:
    """Group the scenario's messages into HTTP exchanges, in the order they start."""
    entries: list[_Entry] = []
    sessions: dict[str, _Session] = {}
    for label, direction, message in scenario["messages"]:
        session = sessions.setdefault(label, _Session(label))
        if direction == "c2s":
            if message.get("method") == "initialize":
                session.version = None
            version = _meta_version(message) or session.version
            entry = _Entry(label, "POST", message, version=version)
            entries.append(entry)
            if "method" in message and "id" in message:
                session.open_requests[_id(message["id"])] = len(entries) - 1
            continue
        is_response = "method" not in message and "id" in message
        owner: int | None = None
        if is_response:
            owner = session.open_requests.pop(_id(message["id"]), None)
        elif session.open_requests:
            owner = list(session.open_requests.values())[-1]
        if owner is None:
            if session.get_entry is None:
                entries.append(_Entry(label, "GET", None, version=session.version))
                session.get_entry = len(entries) - 1
            owner = session.get_entry
        entries[owner].events.append(message)
        result = message.get("result")
        if is_response and isinstance(result, dict) and "protocolVersion" in result:
            request = entries[owner].request or {}
            if request.get("method") == "initialize":
                session.version = result["protocolVersion"]
                entries[owner].sets_session = True
    return entries


def _headers(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in pairs]


def _har_entry(
    scenario: dict[str, Any], entry: _Entry, index: int, session_ids: dict[str, str]
) -> dict[str, Any]:
    url = URL.format(server=scenario["server"])
    session_id = session_ids.get(entry.session)
    request_headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", f"Bearer {EXAMPLE_TOKEN}"),
    ]
    if entry.method == "POST":
        request_headers.insert(0, ("Content-Type", "application/json"))
    if session_id is not None and not entry.sets_session:
        request_headers.append(("Mcp-Session-Id", session_id))
    if entry.version is not None:
        request_headers.append(("MCP-Protocol-Version", entry.version))
    message = entry.request
    if entry.version == MODERN and message is not None and "method" in message:
        request_headers.append(("Mcp-Method", message["method"]))
        params = message.get("params")
        name = params.get("name", params.get("uri")) if isinstance(params, dict) else None
        if isinstance(name, str):
            request_headers.append(("Mcp-Name", name))
    request: dict[str, Any] = {
        "method": entry.method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _headers(request_headers),
        "queryString": [],
        "headersSize": -1,
        "bodySize": 0,
    }
    if message is not None:
        text = _compact(message)
        request["postData"] = {"mimeType": "application/json", "text": text}
        request["bodySize"] = len(text.encode())
    response_headers: list[tuple[str, str]] = []
    if entry.sets_session and session_id is not None:
        response_headers.append(("Mcp-Session-Id", session_id))
    if not entry.events:
        status, mime, body = 202, "", ""
    elif len(entry.events) == 1 and "method" not in entry.events[0] and entry.method == "POST":
        status, mime, body = 200, "application/json", _compact(entry.events[0])
    else:
        status, mime = 200, "text/event-stream"
        body = "".join(f"event: message\ndata: {_compact(e)}\n\n" for e in entry.events)
    if mime:
        response_headers.insert(0, ("Content-Type", mime))
    started = START + dt.timedelta(seconds=index)
    return {
        "startedDateTime": started.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "time": 12,
        "request": request,
        "response": {
            "status": status,
            "statusText": "OK" if status == 200 else "Accepted",
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _headers(response_headers),
            "content": {"size": len(body.encode()), "mimeType": mime, "text": body},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(body.encode()),
        },
        "cache": {},
        "timings": {"send": 1, "wait": 10, "receive": 1},
    }


def har_text(scenario: dict[str, Any]) -> str:
    """The HAR document of a scenario."""
    entries = _layout(scenario)
    modern = all(e.version == MODERN for e in entries if e.method == "POST")
    session_ids = (
        {}
        if modern
        else {label: _session_id(scenario["name"], label) for label in {e.session for e in entries}}
    )
    document = {
        "log": {
            "version": "1.2",
            "creator": {"name": "elicitguard make_example_traffic.py", "version": "1"},
            "entries": [
                _har_entry(scenario, entry, n, session_ids) for n, entry in enumerate(entries)
            ],
        }
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


# --- driver ---------------------------------------------------------------------------------


def outputs(definition: Path) -> dict[Path, str]:
    """Every file the definition produces, with its text."""
    data = yaml.safe_load(definition.read_text(encoding="utf-8"))
    files: dict[Path, str] = {}
    for scenario in data["scenarios"]:
        name = scenario["name"]
        files[TRAFFIC / f"{name}.jsonl"] = envelope_lines(scenario)
        files[TRAFFIC / "raw" / f"{name}.jsonl"] = raw_lines(scenario)
        files[TRAFFIC / "har" / f"{name}.har"] = har_text(scenario)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    parser.add_argument("--definition", type=Path, default=TRAFFIC / "scenarios.yaml")
    args = parser.parse_args(argv)
    stale = []
    for path, text in outputs(args.definition).items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for path in stale:
        print(("stale: " if args.check else "wrote ") + str(path.relative_to(ROOT)))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
