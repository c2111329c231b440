"""The stdio proxy: elicitguard between an MCP client and a server it spawns.

``elicitguard proxy stdio -- COMMAND ARGS...`` takes the place of the server in a client's
configuration. It spawns the server, relays newline-delimited JSON-RPC both ways through
one :class:`~elicitguard.integrations.actions.Relay`, and passes the server's stderr
straight through. Every frame is parsed once; frames nobody changes go on byte for byte.

Both directions are relayed by one thread waiting on all the pipes in one ``poll``
(:mod:`.relay_loop`; :mod:`.pipes` says why not the event loop and not a thread per
direction). The frames of one read are judged together and what they produce leaves in one
``write`` per destination; when every frame of a read goes on unchanged, that write is the
chunk as read. Ordinary traffic takes the engine's fast route
(:meth:`~elicitguard.engine.engine.Engine.evaluate` given the parsed frame, no envelope
built, no outcome object). The event loop keeps the rest: the child process, signals and
shutdown. A client given as asyncio streams (embedding, tests) is bridged to the relay's
thread through a pipe each way.

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
The module is a little over 500 lines because the lifecycle above (start, relay both ways,
shutdown, signals, exit status) is one story and reads in that order.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from elicitguard.errors import FrameError
from elicitguard.integrations.actions import (
    Drop,
    Forward,
    Outcome,
    Relay,
    Replace,
    Reply,
    act,
    dumps,
    error_response,
)
from elicitguard.integrations.lines import ByteReader, Line, LineReader
from elicitguard.integrations.pipes import CHUNK, ByteWriter, make_nonblocking, restore_flags
from elicitguard.integrations.recorder import Recorder
from elicitguard.integrations.relay_loop import RelayLoop
from elicitguard.protocol.envelope import Direction
from elicitguard.protocol.parsing import parse_frame

__all__ = ["INTERNAL_ERROR", "LineReader", "StdioProxy", "exit_status", "serve_stdio"]

INTERNAL_ERROR = -32603
SESSION = "stdio"
_FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
_MAX_PENDING = 65536
_C2S = Direction.CLIENT_TO_SERVER
_S2C = Direction.SERVER_TO_CLIENT
#: What :meth:`StdioProxy._handle` reports, as bits.
_CLOSE = 1
_CHANGED = 2


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
        self._stopping = False
        self._shutdown: asyncio.Task[None] | None = None
        self._max_depth = relay.policy.limits.max_depth
        #: The engine's one door, with what never changes on this connection bound once.
        self._judge = functools.partial(
            relay.engine.evaluate,
            side=relay.side,
            session=SESSION,
            transport=relay.transport,
            server=relay.server,
            location=relay.location,
        )

    # --- running ------------------------------------------------------------------------

    async def run(self, client_in: ByteReader | int, client_out: ByteWriter | int) -> int:
        """Relay until the server exits; return the exit status to propagate.

        ``client_in`` and ``client_out`` are file descriptors (the command line passes 0 and
        1) or asyncio streams (bridged to the relay's thread through pipes).
        """
        loop = asyncio.get_running_loop()
        self._loop = loop
        to_server_r, to_server_w = os.pipe()
        from_server_r, from_server_w = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *self.command, stdin=to_server_r, stdout=from_server_w, stderr=None, env=self.env
            )
        except BaseException:
            for fd in (to_server_w, from_server_r):
                os.close(fd)
            raise
        finally:
            os.close(to_server_r)
            os.close(from_server_w)
        self.process = process
        owned = [from_server_r]
        feeding: asyncio.Future[None] | None = None
        draining: asyncio.Future[None] | None = None
        if isinstance(client_in, int):
            client_rx = client_in
        else:
            client_rx, bridge_w = os.pipe()
            owned.append(client_rx)
            feeding = asyncio.ensure_future(_feed_pipe(client_in, bridge_w))
        if isinstance(client_out, int):
            client_tx = client_out
        else:
            bridge_r, client_tx = os.pipe()
            draining = asyncio.ensure_future(_drain_pipe(bridge_r, client_out))
        restore = [
            (fd, make_nonblocking(fd, shared=fd in (client_in, client_out)))
            for fd in dict.fromkeys((client_rx, client_tx, from_server_r, to_server_w))
        ]
        tick = min(1.0, self.request_timeout / 4) if self.request_timeout else None
        self._io = RelayLoop(
            self,
            client_rx=client_rx,
            client_tx=client_tx,
            server_rx=from_server_r,
            server_tx=to_server_w,
            max_bytes=self.max_bytes,
            tick=tick,
        )
        relayed, thread = self._in_thread(self._io.run)
        exited = asyncio.ensure_future(process.wait())
        try:
            first: set[asyncio.Future[Any]] = {relayed, exited}
            await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
            if not relayed.done():
                # The server exited; a grandchild may still hold its stdout open.
                done, _ = await asyncio.wait({relayed}, timeout=self.shutdown_timeout)
                if not done:
                    self._io.post(self._io.abandon_server)
                    await asyncio.wait({relayed}, timeout=1.0)
        finally:
            self._stopping = True
            self._io.stop()
            stopped = await self._join(thread)
            if stopped:
                self._io.close()  # the server's stdin: it sees the end of its input
                if draining is not None:  # the client's bridge gets what is left, then ends
                    os.close(client_tx)
                    await asyncio.wait({draining}, timeout=1.0)
            for task in (exited, self._shutdown, feeding, draining):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
            await self._reap()
            for fd, flags in restore:
                if fd in (client_in, client_out):
                    restore_flags(fd, flags)
            if stopped:  # else the relay's thread still holds them: left to process exit
                for fd in owned:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            if self.recorder is not None:
                self.recorder.close()
        return exit_status(process.returncode)

    def _in_thread(
        self, target: Callable[[], None]
    ) -> tuple[asyncio.Future[None], threading.Thread]:
        """Run ``target()`` in a daemon thread; the future completes when it returns."""
        loop = self._loop
        future: asyncio.Future[None] = loop.create_future()

        def settle() -> None:
            if not future.done():
                future.set_result(None)

        def body() -> None:
            try:
                target()
            finally:
                with contextlib.suppress(RuntimeError):  # the loop is already closed
                    loop.call_soon_threadsafe(settle)

        thread = threading.Thread(target=body, name="elicitguard-relay", daemon=True)
        thread.start()
        return future, thread

    @staticmethod
    async def _join(thread: threading.Thread) -> bool:
        """Wait briefly for the relay's thread; False if it is still blocked."""
        deadline = time.monotonic() + 1.0
        while thread.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        return not thread.is_alive()

    def _call_soon(self, callback: Callable[..., None], *args: Any) -> None:
        """Run ``callback`` on the event loop, from any thread."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to do
            self._loop.call_soon_threadsafe(callback, *args)

    def tick(self, now: float) -> None:
        """Answer client requests the server has left waiting past ``request_timeout``."""
        timeout = self.request_timeout
        if timeout is None or not self.client_pending:
            return
        expired = [
            key
            for key, since in self.client_pending.items()
            if since is not None and now - since > timeout
        ]
        replies = bytearray()
        for key in expired:
            self.client_pending.pop(key, None)
            self.timed_out[key] = None
            while len(self.timed_out) > _MAX_PENDING:
                self.timed_out.popitem(last=False)
            reply = error_response(
                key[1],
                INTERNAL_ERROR,
                "elicitguard: the MCP server did not answer in time",
                {"elicitguard": {"reason": "upstream_timeout", "timeout_s": timeout}},
            )
            self.relay.engine.audit.event("elicitguard.upstream_timeout", timeout_s=timeout)
            replies += dumps(reply) + b"\n"
        if replies:
            self._to_client(bytes(replies))

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

    # --- what the relay's thread reports ---------------------------------------------------

    def client_ended(self) -> None:
        """The client went away: the relay closes the server's stdin; give it time to exit."""
        self.client_gone = True
        if not self._stopping:
            self._call_soon(self._schedule_shutdown)

    def _schedule_shutdown(self) -> None:
        if not self._closing and not self._stopping:
            self._closing = True
            self._shutdown = asyncio.get_running_loop().create_task(self._reap())

    def server_ended(self, closed: bool) -> None:
        """The server's output ended: answer what still waits (and stop it if a frame said
        to close)."""
        if closed:
            self._call_soon(self.forward_signal, signal.SIGTERM)
        self._fail_in_flight()

    def client_lost(self) -> None:
        self.client_gone = True
        self._call_soon(self._schedule_shutdown)

    def _late_answer(self, message: dict[str, Any] | None) -> bool:
        """True for the server's answer to a request a timeout already answered."""
        if message is None or "method" in message or not self.timed_out:
            return False
        key = _id_key(message.get("id"))
        if key is None or key not in self.timed_out:
            return False
        del self.timed_out[key]
        return True

    def _fail_in_flight(self) -> None:
        """The server is gone: answer every client request still waiting."""
        returncode = self.process.returncode if self.process is not None else None
        data = {"elicitguard": {"reason": "upstream_closed"}}
        replies = bytearray()
        for key in self.client_pending:
            reply = error_response(
                key[1],
                INTERNAL_ERROR,
                "elicitguard: the MCP server closed its output before answering",
                data if returncode is None else {**data, "exit_status": exit_status(returncode)},
            )
            replies += dumps(reply) + b"\n"
        self.client_pending.clear()
        if replies:
            self._to_client(bytes(replies))

    # --- shared -------------------------------------------------------------------------

    def lines(
        self,
        lines: list[bytes | Line],
        direction: Direction,
        chunk: bytes | None = None,
        whole: bool = False,
    ) -> bool:
        """Judge the lines of one read and send what they make; True: close the session.

        What goes to one destination leaves in one write, in order; when every line goes on
        unchanged and they were the whole ``chunk``, that write is ``chunk`` itself.
        """
        if not lines:
            return False
        if self._stopping:  # run() is done with the session: judge and send nothing more
            return True
        onward: list[bytes] = []
        back: list[bytes] = []
        flags = 0
        for line in lines:
            flags |= self._handle(line, direction, onward, back)
            if flags & _CLOSE:
                break
        if onward:
            if chunk is not None and whole and not flags and len(onward) == len(lines):
                data = chunk
            else:
                onward.append(b"")
                data = b"\n".join(onward)
            if direction is _C2S:
                self._io.to_server(data)
            else:
                self._to_client(data)
        if back:
            back.append(b"")
            if direction is _C2S:
                self._to_client(b"\n".join(back))
            else:
                self._io.to_server(b"\n".join(back))
        return bool(flags & _CLOSE)

    def _handle(
        self, line: bytes | Line, direction: Direction, onward: list[bytes], back: list[bytes]
    ) -> int:
        """Judge one line (under the lock): append what goes on and what goes back."""
        message, outcome = self._evaluate(line, direction)
        if message is not None and self.recorder is not None:
            self.recorder.record(message, direction, session=SESSION)
        if direction is _S2C and self.timed_out and self._late_answer(message):
            return _CLOSE | _CHANGED if outcome is not None and outcome.close else _CHANGED
        if outcome is None:  # the engine's fast route: the frame goes on as it came
            assert message is not None
            assert isinstance(line, bytes)
            self._track(message, direction)
            onward.append(line)
            return 0
        flags = _CLOSE if outcome.close else 0
        if isinstance(outcome, Forward):
            self._track(message, direction)
            onward.append(line if isinstance(line, bytes) else line.data)
            return flags
        flags |= _CHANGED
        if isinstance(outcome, Replace):
            self._track(outcome.message, direction)
            onward.append(outcome.to_bytes())
        elif isinstance(outcome, Reply):
            back.append(outcome.to_bytes())
        elif isinstance(outcome, Drop):
            waiting = self.server_pending if direction is _C2S else self.client_pending
            self._fail_waiting(outcome, waiting, onward)
        return flags

    def _evaluate(
        self, line: bytes | Line, direction: Direction
    ) -> tuple[dict[str, Any] | None, Outcome | None]:
        """Parse and judge one line; ``None`` for the outcome: the engine's fast route let
        it through unchanged (no outcome object is built for ordinary traffic)."""
        relay = self.relay
        if isinstance(line, Line):  # only oversized lines come as Line
            error = FrameError(
                "too_large",
                f"frame of {line.size} bytes is over the limit of {self.max_bytes} bytes",
            )
            return None, relay.bad_frame(line.data, error, direction, session=SESSION)
        try:
            parsed = parse_frame(line, max_bytes=self.max_bytes, max_depth=self._max_depth)
        except FrameError as exc:
            return None, relay.bad_frame(line, exc, direction, session=SESSION)
        if relay.sealing is not None:  # sealing rewrites requestState: the relay does it all
            return parsed, relay.inspect(parsed, direction, raw=line, session=SESSION)
        try:
            decision = self._judge(parsed, direction, raw=line)
            if decision.fast_path:
                return parsed, None
            envelope = relay.envelope(parsed, direction, raw=line, session=SESSION)
            state = relay.engine.store.get(SESSION)
            return parsed, act(decision, envelope, policy=relay.policy, state=state)
        except Exception as exc:  # as Relay.inspect: a bug here must not take the session down
            envelope = relay.envelope(parsed, direction, raw=line, session=SESSION)
            return parsed, relay._failure(envelope, exc)

    def _track(self, message: dict[str, Any] | None, direction: Direction) -> None:
        """Keep the per-direction maps of requests waiting for an answer."""
        if message is None:
            return
        key = _id_key(message.get("id"))
        if key is None:
            return
        to_server = direction is _C2S
        if "method" in message:
            pending = self.client_pending if to_server else self.server_pending
            pending[key] = time.monotonic() if self.request_timeout else None
            while len(pending) > _MAX_PENDING:
                pending.popitem(last=False)
        else:
            answered = self.server_pending if to_server else self.client_pending
            answered.pop(key, None)

    def _fail_waiting(
        self, outcome: Drop, pending: OrderedDict[Any, Any], out: list[bytes]
    ) -> None:
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
        out.append(dumps(reply))

    def _to_client(self, data: bytes) -> None:
        """Send to the client (the relay reports a client that went away)."""
        if self.client_gone and self._closing:
            return
        self._io.to_client(data)


async def _feed_pipe(stream: ByteReader, fd: int) -> None:
    """Copy an asyncio client stream into the pipe the relay reads; close it at the end
    (after a write still in flight in its thread, never under it)."""
    writing: asyncio.Future[None] | None = None
    try:
        while chunk := await stream.read(CHUNK):
            writing = asyncio.ensure_future(asyncio.to_thread(_write_all, fd, chunk))
            await asyncio.shield(writing)
            writing = None
    except OSError:
        pass  # the relay stopped reading
    finally:
        if writing is not None and not writing.done():
            writing.add_done_callback(functools.partial(_close_after, fd))
        else:
            os.close(fd)


def _close_after(fd: int, write: asyncio.Future[None]) -> None:
    if not write.cancelled():
        write.exception()  # retrieved: a reader that went away is no error here
    os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def _drain_pipe(fd: int, writer: ByteWriter) -> None:
    """Copy what the relay writes for an asyncio client to its writer, whole lines at a time."""
    held = b""
    try:
        while chunk := await asyncio.to_thread(os.read, fd, CHUNK):
            cut = chunk.rfind(b"\n") + 1
            if not cut:
                held += chunk
                continue
            writer.write(held + chunk[:cut])
            held = chunk[cut:]
            await writer.drain()
        if held:
            writer.write(held)
            await writer.drain()
    except (ConnectionError, RuntimeError, OSError):
        pass  # the client went away: closing the pipe tells the relay
    finally:
        os.close(fd)
        writer.close()


async def serve_stdio(proxy: StdioProxy) -> int:
    """Run ``proxy`` on this process's stdin and stdout, forwarding signals."""
    loop = asyncio.get_running_loop()
    for signum in _FORWARDED_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, proxy.forward_signal, signum)
    try:
        return await proxy.run(0, 1)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
