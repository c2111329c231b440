"""Fixtures for the identity tests: configured keys, a real redis-server on loopback."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration_support import require, require_module

from elicitguard.base.keys import KeyRing, load_keyring


def key_json(*ids: str, retired: tuple[str, ...] = ()) -> str:
    """A key file's text with one random 32-byte key per id (the first one signs)."""
    return json.dumps(
        {
            "keys": [
                {
                    "id": key_id,
                    "secret": base64.b64encode(os.urandom(32)).decode(),
                    "retired": key_id in retired,
                }
                for key_id in ids
            ]
        }
    )


@pytest.fixture
def keys() -> KeyRing:
    """A configured keyring with one key."""
    return load_keyring(environ={"ELICITGUARD_KEYS": key_json("k1")})


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on 127.0.0.1 and a random port, for the whole session."""
    binary = require("redis-server")
    require_module("redis")
    folder: Path = tmp_path_factory.mktemp("redis")
    port = _free_port()
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
            "--protected-mode",
            "yes",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(host="127.0.0.1", port=port)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                pytest.fail("redis-server did not start")
            time.sleep(0.05)
    client.close()
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def has_redis() -> bool:
    """Whether redis-server is on PATH (for parametrisation ids only)."""
    return shutil.which("redis-server") is not None
