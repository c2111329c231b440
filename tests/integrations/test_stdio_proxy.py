"""``elicitguard proxy stdio`` with real processes: the mcp SDK on both ends, and faults."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.integration_support import require_module
from tests.integrations.support import (
    ELICITGUARD,
    ERAS,
    POLICY,
    PY,
    SDK_SERVER,
    SERVERS,
    Seen,
    assert_matrix,
    make_callback,
    read_line,
    run_matrix,
    stop,
)

from elicitguard import Engine, Hit, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.engine.context import CheckContext, check
from elicitguard.engine.rule_overrides import dispatch_table
from elicitguard.integrations.actions import Relay
from elicitguard.integrations.stdio_proxy import LineReader, StdioProxy
from elicitguard.protocol.envelope import Side, Transport
from elicitguard.protocol.items import Item

RAW_SERVER = str(SERVERS / "raw_server.py")
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}, "url": {}}},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def proxy_command(*server: str, extra: tuple[str, ...] = ()) -> list[str]:
    return [ELICITGUARD, "proxy", "stdio", "--policy", str(POLICY), *extra, "--", *server]


def spawn(*server: str, extra: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        proxy_command(*server, extra=extra),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def send(process: subprocess.Popen[bytes], message: dict[str, Any] | bytes) -> None:
    assert process.stdin is not None
    data = message if isinstance(message, bytes) else json.dumps(message).encode()
    process.stdin.write(data + b"\n")
    process.stdin.flush()


def receive(process: subprocess.Popen[bytes], timeout: float = 20.0) -> dict[str, Any]:
    line = read_line(process.stdout, timeout)
    assert line, "the proxy closed its output"
    return json.loads(line)


def child_pids(pid: int) -> list[int]:
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        children.extend(int(c) for c in text)
    return children


def the_child(pid: int, timeout: float = 20.0) -> int:
    """The one process the proxy spawned (waiting for it on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while not (children := child_pids(pid)):
        assert time.monotonic() < deadline, "the proxy spawned no server"
        time.sleep(0.05)
    [child] = children
    return child


@pytest.mark.integration
@pytest.mark.parametrize("era", ERAS)
def test_sdk_client_and_server_through_the_proxy(era: str, tmp_path: Path) -> None:
    """The mcp client and server, in each era: benign elicitation passes, violations are blocked."""
    require_module("mcp")
    from mcp import Client, StdioServerParameters

    record = tmp_path / "rec.jsonl"
    params = StdioServerParameters(
        command=ELICITGUARD,
        args=proxy_command(PY, str(SDK_SERVER), "stdio", extra=("--record", str(record)))[1:],
    )

    async def main() -> dict[str, dict[str, Any]]:
        seen = Seen()
        async with Client(params, mode=era, elicitation_callback=make_callback(seen)) as client:
            return await run_matrix(client, seen, era)

    outcomes = asyncio.run(main())
    assert_matrix(outcomes, era)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert {line["direction"] for line in lines} == {"client_to_server", "server_to_client"}
    assert "Luigi" not in record.read_text()  # tool arguments pass the redaction boundary
    lint = subprocess.run(
        [ELICITGUARD, "lint", str(record), "--policy", str(POLICY), "--format", "json"],
        capture_output=True,
        check=False,
    )
    report = json.loads(lint.stdout)
    codes = {f["code"] for f in report["findings"]}
    assert {"TST001", "TST002"} <= codes


@pytest.mark.integration
def test_messages_are_forwarded_byte_for_byte(tmp_path: Path) -> None:
    """Frames the policy leaves alone reach the other side exactly as they were written."""
    log = tmp_path / "server-saw.txt"
    process = spawn(PY, RAW_SERVER, "echo", str(log))
    try:
        frames = [
            json.dumps(INIT).encode(),
            b'{ "method" : "tools/list",   "jsonrpc":"2.0", "id":"\\u0061b" }',
            b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{"n":1.50}}}',
        ]
        replies = []
        for frame in frames:
            send(process, frame)
            replies.append(read_line(process.stdout))
        assert (
            replies[1]
            == b'{ "result" : {"echo" : true, "z": 1, "a": 2} , "id" : "ab", "jsonrpc":"2.0" }\n'
        )
    finally:
        stop(process)
    assert log.read_bytes() == b"".join(f + b"\n" for f in frames)


@pytest.mark.integration
def test_upstream_exit_mid_request_fails_in_flight_requests() -> None:
    """The server dies while answering: every pending request gets an error; the status propagates."""
    process = spawn(PY, str(SDK_SERVER), "stdio")
    try:
        send(process, INIT)
        assert receive(process)["id"] == 0
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            process,
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 30}},
            },
        )
        send(
            process,
            {
                "jsonrpc": "2.0",
                "id": "six",
                "method": "tools/call",
                "params": {"name": "crash", "arguments": {}},
            },
        )
        replies = {receive(process)["id"]: None for _ in range(2)}
        assert set(replies) == {5, "six"}
        assert process.wait(10) == 3
    finally:
        stop(process)


@pytest.mark.integration
def test_upstream_killed_by_a_signal() -> None:
    """A server killed by SIGKILL mid-request: the request fails and the proxy exits 137."""
    process = spawn(PY, str(SDK_SERVER), "stdio")
    try:
        send(process, INIT)
        receive(process)
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            process,
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 30}},
            },
        )
        time.sleep(0.5)
        os.kill(the_child(process.pid), signal.SIGKILL)
        reply = receive(process)
        assert reply["id"] == 9
        assert reply["error"]["code"] == -32603
        assert reply["error"]["data"]["elicitguard"]["reason"] == "upstream_closed"
        assert process.wait(10) == 128 + signal.SIGKILL
    finally:
        stop(process)


@pytest.mark.integration
def test_garbage_from_the_server_is_reported_and_never_forwarded(tmp_path: Path) -> None:
    """Non-JSON, binary and over-limit lines are dropped and audited; the session goes on."""
    policy = tmp_path / "p.yaml"
    policy.write_text(
        'extends: ["builtin:default"]\nlimits: {max_message_bytes: 65536}\naudit: {sink: stderr}\n'
    )
    process = subprocess.Popen(
        [ELICITGUARD, "proxy", "stdio", "--policy", str(policy), "--", PY, RAW_SERVER, "garbage"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        send(process, INIT)
        assert receive(process) == {
            "result": {"echo": True, "z": 1, "a": 2},
            "id": 0,
            "jsonrpc": "2.0",
        }
        send(process, {"jsonrpc": "2.0", "id": 1, "method": "broken"})
        reply = receive(process)
        assert reply["id"] == 1
        assert reply["error"]["code"] == -32603
        assert reply["error"]["data"]["elicitguard"]["codes"] == ["EG904"]
        send(process, b"not json from the client")
        send(process, b'{"jsonrpc":"2.0","id":77,"method":"tools/call","params":')
        reply = receive(process)
        assert reply["id"] == 77
        assert reply["error"]["code"] == -32700
        send(process, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert receive(process)["id"] == 2
    finally:
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(10) == 0
        stderr = process.stderr.read().decode() if process.stderr else ""
        stop(process)
    codes = [
        json.loads(line)["findings"][0]["code"]
        for line in stderr.splitlines()
        if '"findings":[{' in line
    ]
    assert codes.count("EG903") == 2  # one over-limit line before each of the two answers
    assert codes.count("EG904") == 7  # 2 x (not JSON, NUL bytes), the cut answer, 2 from the client
    assert "this is not JSON" not in stderr


@pytest.mark.integration
def test_client_going_away_terminates_and_reaps_a_stubborn_child() -> None:
    """The client closes stdin; a server that ignores it and SIGTERM is killed and reaped."""
    process = spawn(PY, RAW_SERVER, "stubborn", extra=("--shutdown-timeout", "0.3"))
    try:
        child = the_child(process.pid)
        started = time.monotonic()
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(10) == 128 + signal.SIGKILL
        assert time.monotonic() - started < 5
        assert not Path(f"/proc/{child}").exists()
    finally:
        stop(process)


@pytest.mark.integration
def test_sigterm_is_forwarded_and_the_status_propagates() -> None:
    """SIGTERM to the proxy reaches the server; in-flight requests fail; exit status follows."""
    process = spawn(PY, str(SDK_SERVER), "stdio")
    try:
        send(process, INIT)
        receive(process)
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            process,
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 30}},
            },
        )
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        reply = receive(process)
        assert reply["id"] == 4
        assert "error" in reply
        assert process.wait(10) == 128 + signal.SIGTERM
    finally:
        stop(process)


@pytest.mark.integration
def test_exit_status_and_missing_command() -> None:
    """The server's exit status is the proxy's; a command that does not exist gives 127."""
    process = spawn(PY, RAW_SERVER, "exit", "7")
    try:
        send(process, INIT)
        assert process.wait(10) == 7
    finally:
        stop(process)
    missing = subprocess.run(
        proxy_command("/nonexistent/server"), capture_output=True, check=False, timeout=30
    )
    assert missing.returncode == 127
    assert b"not found" in missing.stderr


@check("tests.integrations.raises")
def _raises(item: Item, ctx: CheckContext, params: Mapping[str, Any]) -> Iterator[Hit]:
    raise RuntimeError("boom")


class _Collect:
    """The client's side of the proxy's output, kept in memory."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.event = asyncio.Event()

    def write(self, data: bytes) -> None:
        self.lines.extend(json.loads(line) for line in data.splitlines() if line.strip())
        self.event.set()

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None


@pytest.mark.integration
@pytest.mark.parametrize(("on_error", "blocked"), [("block", True), ("warn", False)])
def test_a_check_that_raises_follows_on_error_and_is_audited(on_error: str, blocked: bool) -> None:
    """A crashing check blocks the elicitation (or lets it pass with warn) and is audited."""
    import io

    policy = load_policy(POLICY, environ={}, extra_layers=[{"on_error": on_error}])
    policy.rules["TST001"].match = None
    policy.rules["TST001"].check = _raises
    policy.dispatch = dispatch_table(policy.rules)
    audit = io.StringIO()
    engine = Engine(policy, audit=AuditSink(audit), keys=KeyRing.random())
    relay = Relay(engine, side=Side.PROXY, transport=Transport.STDIO, server="sdk")
    proxy = StdioProxy(relay, [PY, str(SDK_SERVER), "stdio"], shutdown_timeout=2)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "connect_account", "arguments": {"host": "auth.example.com"}},
    }

    async def main() -> list[dict[str, Any]]:
        client_in = asyncio.StreamReader()
        out = _Collect()
        task = asyncio.create_task(proxy.run(client_in, out))
        for message in (INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call):
            client_in.feed_data(json.dumps(message).encode() + b"\n")
        while not any(
            line.get("id") == 2 or line.get("method") == "elicitation/create" for line in out.lines
        ):
            out.event.clear()
            await asyncio.wait_for(out.event.wait(), 20)
        client_in.feed_eof()
        await asyncio.wait_for(task, 20)
        return out.lines

    lines = asyncio.run(main())
    pushed = [line for line in lines if line.get("method") == "elicitation/create"]
    if blocked:
        assert not pushed
        [result] = [line for line in lines if line.get("id") == 2]
        assert "error" in result or result["result"]["isError"]
    else:
        assert len(pushed) == 1
    record = next(json.loads(line) for line in audit.getvalue().splitlines() if "EG901" in line)
    assert record["action"] == ("block" if blocked else "warn")
    assert "TST001 raised RuntimeError" in record["errors"]


def test_line_reader_never_holds_an_oversized_line() -> None:
    """An over-limit line comes back as its head and size; the next line is intact."""

    async def main() -> list[Any]:
        stream = asyncio.StreamReader()
        stream.feed_data(b"x" * 300_000 + b"\n\n  \n" + b'{"a":1}\n' + b"tail")
        stream.feed_eof()
        reader = LineReader(stream, 1000)
        lines = []
        while (line := await reader.next()) is not None:
            lines.append(line)
        return lines

    big, small, tail = asyncio.run(main())
    assert big.oversize
    assert big.size == 300_000
    assert len(big.data) <= 8192
    assert small.data == b'{"a":1}'
    assert tail.data == b"tail"


@pytest.mark.integration
def test_bad_frames_close_ends_the_session(tmp_path: Path) -> None:
    """With limits.bad_frames: close, one unparseable client frame ends the connection."""
    policy = tmp_path / "close.yaml"
    policy.write_text(
        'extends: ["builtin:default"]\nlimits: {bad_frames: close}\naudit: {sink: none}\n'
    )
    log = tmp_path / "server-saw.txt"
    process = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "stdio",
            "--policy",
            str(policy),
            "--",
            PY,
            RAW_SERVER,
            "echo",
            str(log),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        send(process, INIT)
        assert receive(process)["id"] == 0
        send(process, b"\x00garbage")
        assert process.wait(20) == 0  # the server saw its stdin close and exited
        assert read_line(process.stdout, 5) == b""
    finally:
        stop(process)
    assert b"garbage" not in log.read_bytes()
