"""The stdio proxy: elicitguard between an MCP client and a server it spawns.

``elicitguard proxy stdio -- COMMAND ARGS...`` takes the place of the server in a client's
configuration. It spawns the server, relays newline-delimited JSON-RPC both ways through
one :class:`~elicitguard.integrations.actions.Relay`, and passes the server's stderr
straight through. Every frame is parsed once; frames nobody changes go on byte for byte.

Lifecycle, as the MCP stdio transport describes it:

* the client closes our stdin: we close the server's stdin, wait ``shutdown_timeout``
  seconds, then SIGTERM, wait again, then SIGKILL; the child is always reaped;
* the server closes its stdout (it exited or crashed): every client request still in
  flight gets a JSON-RPC error (``-32603``), so nothing hangs; then we exit with the
  server's exit status (``128 + N`` when a signal ``N`` ended it);
* SIGTERM, SIGINT, SIGHUP and SIGQUIT sent to the proxy are forwarded to the server.

Pending ids are kept per direction (the two peers number their requests independently).
A line over ``limits.max_message_bytes`` is never held whole: the reader keeps its first
kilobytes (to recover an id) and skips the rest. Bad frames are reported through the
audit log and counted; with ``limits.bad_frames: close`` the proxy shuts down after one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from elicitguard.errors import FrameError
from elicitguard.integrations.actions import (
    Drop,
    Forward,
    Outcome,
    Relay,
    Replace,
    Reply,
    dumps,
    error_response,
)
from elicitguard.integrations.recorder import Recorder
from elicitguard.protocol.envelope import Direction

__all__ = ["INTERNAL_ERROR", "LineReader", "StdioProxy", "exit_status"]

INTERNAL_ERROR = -32603
SESSION = "stdio"
_CHUNK = 1 << 16
_HEAD = 8192
_FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
_MAX_PENDING = 65536


class ByteReader(Protocol):
    """What the proxy reads from: ``asyncio.StreamReader`` fits."""

    async def read(self, n: int = -1) -> bytes: ...


class ByteWriter(Protocol):
    """What the proxy writes to: ``asyncio.StreamWriter`` fits."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Line:
    """One line read: its bytes (only the head when ``oversize``) and its full size."""

    data: bytes
    oversize: bool
    size: int


class LineReader:
    """Splits a byte stream into lines without ever holding more than the limit."""

    def __init__(self, stream: ByteReader, max_bytes: int) -> None:
        self._stream = stream
        self._max = max_bytes
        self._buf = bytearray()
        self._skipping = False
        self._head = b""
        self._skipped = 0

    async def next(self) -> Line | None:
        """The next non-blank line; ``None`` at the end of the stream."""
        while True:
            line = self._take()
            if line is not None:
                if line.oversize or line.data.strip():
                    return line
                continue
            chunk = await self._stream.read(_CHUNK)
            if not chunk:
                return self._finish()
            self._buf += chunk

    def _take(self) -> Line | None:
        newline = self._buf.find(b"\n")
        if newline < 0:
            if self._skipping:
                self._skipped += len(self._buf)
                self._buf.clear()
            elif len(self._buf) > self._max:
                self._skipping = True
                self._head = bytes(self._buf[:_HEAD])
                self._skipped = len(self._buf)
                self._buf.clear()
            return None
        data = bytes(self._buf[:newline])
        del self._buf[: newline + 1]
        if self._skipping:
            self._skipping = False
            return Line(self._head, True, self._skipped + len(data))
        if len(data) > self._max:
            return Line(data[:_HEAD], True, len(data))
        return Line(data, False, len(data))

    def _finish(self) -> Line | None:
        if self._skipping:
            self._skipping = False
            return Line(self._head, True, self._skipped)
        if self._buf.strip():
            data = bytes(self._buf)
            self._buf.clear()
            return Line(data, False, len(data))
        return None


def exit_status(returncode: int | None) -> int:
    """The shell's convention: a child ended by signal N gives ``128 + N``."""
    if returncode is None:
        return 1
    return 128 - returncode if returncode < 0 else returncode


def _id_key(value: Any) -> Any:
    return (type(value).__name__, value) if isinstance(value, (str, int, float)) else None


class StdioProxy:
    """One proxied connection: a client's byte streams and one spawned server."""

    def __init__(
        self,
        relay: Relay,
        command: Sequence[str],
        *,
        recorder: Recorder | None = None,
        shutdown_timeout: float = 5.0,
        request_timeout: float | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        if not command:
            msg = "the stdio proxy needs the server's command after `--`"
            raise ValueError(msg)
        self.relay = relay
        self.command = list(command)
        self.recorder = recorder
        self.shutdown_timeout = shutdown_timeout
        #: A client request the server leaves unanswered this long gets an error instead.
        self.request_timeout = request_timeout
        #: Ids answered by a timeout: the server's late answer is dropped, never sent twice.
        self.timed_out: OrderedDict[Any, None] = OrderedDict()
        self.env = env
        self.max_bytes = relay.policy.limits.max_message_bytes
        #: Requests the client sent that the server has not answered (ids in the client's space).
        self.client_pending: OrderedDict[Any, Any] = OrderedDict()
        #: Requests the server sent that the client has not answered (the server's id space).
        self.server_pending: OrderedDict[Any, Any] = OrderedDict()
        self.process: asyncio.subprocess.Process | None = None
        self.client_gone = False
        self._closing = False
        self._shutdown: asyncio.Task[None] | None = None

    # --- running ------------------------------------------------------------------------

    async def run(self, client_in: ByteReader, client_out: ByteWriter) -> int:
        """Relay until the server exits; return the exit status to propagate."""
        process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
            env=self.env,
        )
        self.process = process
        if process.stdin is None or process.stdout is None:  # pragma: no cover - PIPE asked
            raise RuntimeError("the server's stdin and stdout were not opened as pipes")
        self._client_out = client_out
        self._server_in = process.stdin
        upstream = asyncio.create_task(self._pump_server(process.stdout))
        downstream = asyncio.create_task(self._pump_client(client_in))
        exited = asyncio.create_task(process.wait())
        watchdog = asyncio.create_task(self._watch_timeouts()) if self.request_timeout else None
        try:
            await asyncio.wait({upstream, exited}, return_when=asyncio.FIRST_COMPLETED)
            if not upstream.done():
                # The server exited; a grandchild may still hold its stdout open.
                done, _ = await asyncio.wait({upstream}, timeout=self.shutdown_timeout)
                if not done:
                    upstream.cancel()
                    await self._fail_in_flight()
        finally:
            for task in (upstream, downstream, exited, self._shutdown, watchdog):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
            await self._reap()
            if self.recorder is not None:
                self.recorder.close()
        return exit_status(process.returncode)

    async def _watch_timeouts(self) -> None:
        """Answer client requests the server has left waiting past ``request_timeout``."""
        assert self.request_timeout is not None  # only started with a timeout
        tick = min(1.0, self.request_timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            expired = [
                key
                for key, since in self.client_pending.items()
                if since is not None and now - since > self.request_timeout
            ]
            for key in expired:
                self.client_pending.pop(key, None)
                self.timed_out[key] = None
                while len(self.timed_out) > _MAX_PENDING:
                    self.timed_out.popitem(last=False)
                reply = error_response(
                    key[1],
                    INTERNAL_ERROR,
                    "elicitguard: the MCP server did not answer in time",
                    {
                        "elicitguard": {
                            "reason": "upstream_timeout",
                            "timeout_s": self.request_timeout,
                        }
                    },
                )
                self.relay.engine.audit.event(
                    "elicitguard.upstream_timeout", timeout_s=self.request_timeout
                )
                await self._to_client(dumps(reply))

    def forward_signal(self, signum: int) -> None:
        """Pass a signal the proxy received on to the server."""
        process = self.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signum)

    async def _reap(self) -> None:
        """Wait for the child; escalate to SIGTERM, then SIGKILL. Never leaves a zombie."""
        process = self.process
        if process is None:
            return
        with contextlib.suppress(Exception):
            self._server_in.close()
        for escalate in (None, signal.SIGTERM, signal.SIGKILL):
            if escalate is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(escalate)
            try:
                await asyncio.wait_for(process.wait(), self.shutdown_timeout)
                return
            except TimeoutError:
                continue
        await process.wait()

    # --- client to server ---------------------------------------------------------------

    async def _pump_client(self, client_in: ByteReader) -> None:
        reader = LineReader(client_in, self.max_bytes)
        try:
            while True:
                line = await reader.next()
                if line is None:
                    break
                if await self._from_client(line):
                    break
        finally:
            self.client_gone = True
            # The client went away: close the server's stdin and give it time to exit.
            with contextlib.suppress(Exception):
                self._server_in.close()
            asyncio.get_running_loop().call_soon(self._schedule_shutdown)

    def _schedule_shutdown(self) -> None:
        if not self._closing:
            self._closing = True
            self._shutdown = asyncio.get_running_loop().create_task(self._reap())

    async def _from_client(self, line: Line) -> bool:
        """Handle one client line; True when the connection must close."""
        direction = Direction.CLIENT_TO_SERVER
        message, outcome = self._evaluate(line, direction)
        if message is not None and self.recorder is not None:
            self.recorder.record(message, direction, session=SESSION)
        if isinstance(outcome, Forward):
            self._track(message, direction)
            await self._to_server(line.data)
        elif isinstance(outcome, Replace):
            self._track(outcome.message, direction)
            await self._to_server(outcome.to_bytes())
        elif isinstance(outcome, Reply):
            await self._to_client(outcome.to_bytes())
        elif isinstance(outcome, Drop):
            await self._fail_waiting(outcome, self.server_pending, self._to_server)
        return outcome.close

    # --- server to client ---------------------------------------------------------------

    async def _pump_server(self, server_out: ByteReader) -> None:
        reader = LineReader(server_out, self.max_bytes)
        while True:
            line = await reader.next()
            if line is None:
                break
            if await self._from_server(line):
                self.forward_signal(signal.SIGTERM)
                break
        await self._fail_in_flight()

    async def _from_server(self, line: Line) -> bool:
        direction = Direction.SERVER_TO_CLIENT
        message, outcome = self._evaluate(line, direction)
        if message is not None and self.recorder is not None:
            self.recorder.record(message, direction, session=SESSION)
        if self._late_answer(message):
            return outcome.close
        if isinstance(outcome, Forward):
            self._track(message, direction)
            await self._to_client(line.data)
        elif isinstance(outcome, Replace):
            self._track(outcome.message, direction)
            await self._to_client(outcome.to_bytes())
        elif isinstance(outcome, Reply):
            await self._to_server(outcome.to_bytes())
        elif isinstance(outcome, Drop):
            await self._fail_waiting(outcome, self.client_pending, self._to_client)
        return outcome.close

    def _late_answer(self, message: dict[str, Any] | None) -> bool:
        """True for the server's answer to a request a timeout already answered."""
        if message is None or "method" in message or not self.timed_out:
            return False
        key = _id_key(message.get("id"))
        if key is None or key not in self.timed_out:
            return False
        del self.timed_out[key]
        return True

    async def _fail_in_flight(self) -> None:
        """The server is gone: answer every client request still waiting."""
        returncode = self.process.returncode if self.process is not None else None
        data = {"elicitguard": {"reason": "upstream_closed"}}
        for key in list(self.client_pending):
            jsonrpc_id = key[1]
            reply = error_response(
                jsonrpc_id,
                INTERNAL_ERROR,
                "elicitguard: the MCP server closed its output before answering",
                data if returncode is None else {**data, "exit_status": exit_status(returncode)},
            )
            await self._to_client(dumps(reply))
        self.client_pending.clear()

    # --- shared -------------------------------------------------------------------------

    def _evaluate(self, line: Line, direction: Direction) -> tuple[dict[str, Any] | None, Outcome]:
        if line.oversize:
            limit = self.max_bytes
            error = FrameError(
                "too_large", f"frame of {line.size} bytes is over the limit of {limit} bytes"
            )
            return None, self.relay.bad_frame(line.data, error, direction, session=SESSION)
        parsed = self.relay.parse(line.data, direction, session=SESSION)
        if not isinstance(parsed, dict):
            return None, parsed
        outcome = self.relay.inspect(parsed, direction, raw=line.data, session=SESSION)
        return parsed, outcome

    def _track(self, message: dict[str, Any] | None, direction: Direction) -> None:
        """Keep the per-direction maps of requests waiting for an answer."""
        if message is None:
            return
        key = _id_key(message.get("id"))
        if key is None:
            return
        to_server = direction is Direction.CLIENT_TO_SERVER
        if "method" in message:
            pending = self.client_pending if to_server else self.server_pending
            pending[key] = time.monotonic()
            while len(pending) > _MAX_PENDING:
                pending.popitem(last=False)
        else:
            answered = self.server_pending if to_server else self.client_pending
            answered.pop(key, None)

    async def _fail_waiting(self, outcome: Drop, pending: OrderedDict[Any, Any], send: Any) -> None:
        """A dropped frame answered a request: tell the peer that waits for it."""
        key = _id_key(outcome.jsonrpc_id)
        if key is None or key not in pending:
            return
        pending.pop(key, None)
        codes = list(outcome.decision.codes) if outcome.decision is not None else []
        decision_id = outcome.decision.decision_id if outcome.decision is not None else ""
        reply = error_response(
            outcome.jsonrpc_id,
            INTERNAL_ERROR,
            "elicitguard dropped the peer's answer: " + outcome.reason,
            {"elicitguard": {"codes": codes, "decision_id": decision_id}},
        )
        await send(dumps(reply))

    async def _to_server(self, data: bytes) -> None:
        try:
            self._server_in.write(data + b"\n")
            await self._server_in.drain()
        except (ConnectionError, RuntimeError, OSError):
            pass  # the server is gone; its stdout reaching EOF ends the session

    async def _to_client(self, data: bytes) -> None:
        if self.client_gone and self._closing:
            return
        try:
            self._client_out.write(data + b"\n")
            await self._client_out.drain()
        except (ConnectionError, RuntimeError, OSError):
            self.client_gone = True
            self._schedule_shutdown()


# --- process plumbing for the command line ----------------------------------------------


async def _stdio_streams() -> tuple[ByteReader, ByteWriter]:
    """Our stdin and stdout as asyncio streams (threads for regular files and odd fds)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    try:
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader),
            os.fdopen(0, "rb", buffering=0, closefd=False),
        )
        in_stream: ByteReader = reader
    except (ValueError, OSError):
        in_stream = _ThreadReader(0)
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(1, "wb", buffering=0, closefd=False)
        )
        out_stream: ByteWriter = asyncio.StreamWriter(transport, protocol, None, loop)
    except (ValueError, OSError):
        out_stream = _ThreadWriter(1)
    return in_stream, out_stream


class _ThreadReader:
    """Reads a file descriptor asyncio cannot watch (a regular file) in a thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def read(self, n: int = -1) -> bytes:
        return await asyncio.to_thread(os.read, self._fd, n if n > 0 else _CHUNK)


class _ThreadWriter:
    """Writes to a file descriptor asyncio cannot watch, in a thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pending = bytearray()

    def write(self, data: bytes) -> None:
        self._pending += data

    async def drain(self) -> None:
        data, self._pending = bytes(self._pending), bytearray()
        view = memoryview(data)
        while view:
            written = await asyncio.to_thread(os.write, self._fd, view)
            view = view[written:]

    def close(self) -> None:
        pass


async def serve_stdio(proxy: StdioProxy) -> int:
    """Run ``proxy`` on this process's stdin and stdout, forwarding signals."""
    loop = asyncio.get_running_loop()
    for signum in _FORWARDED_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, proxy.forward_signal, signum)
    client_in, client_out = await _stdio_streams()
    try:
        return await proxy.run(client_in, client_out)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
