"""The Redis command of ``examples/http_proxy/README.md`` leaves no ``dump.rdb`` behind.

The README's own ``redis-server`` line is run (on a random port) in a copy of the example
folder, given a key, and stopped the way a user stops it (SIGTERM, where Redis saves when
it has save points); the folder must hold nothing new.
"""

from __future__ import annotations

import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.examples.support import EXAMPLES
from tests.integration_support import require, require_module

README = EXAMPLES / "http_proxy" / "README.md"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _readme_redis_command() -> str:
    [line] = [s for s in README.read_text().splitlines() if s.startswith("redis-server ")]
    return line.split("#", 1)[0].strip().removesuffix("&").strip()


def test_the_readme_redis_keeps_nothing_in_the_example_folder(tmp_path: Path) -> None:
    binary = require("redis-server")
    require_module("redis")
    import redis

    folder = tmp_path / "http_proxy"
    shutil.copytree(EXAMPLES / "http_proxy", folder)
    before = {p.name for p in folder.iterdir()}
    port = _free_port()
    command = re.sub(r"--port \d+", f"--port {port}", _readme_redis_command())
    assert "--save ''" in command
    argv = shlex.split(command.replace('"$(mktemp -d)"', str(tmp_path / "redis-dir")))
    (tmp_path / "redis-dir").mkdir()
    argv[0] = binary
    process = subprocess.Popen(
        argv, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        client = redis.Redis(host="127.0.0.1", port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.set("k", "v")
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        client.close()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(10)
    assert {p.name for p in folder.iterdir()} == before
    assert not list((tmp_path / "redis-dir").glob("*.rdb"))
