"""``elicitguard serve``: what it refuses at start, with a clear message."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.integrations.support import ELICITGUARD


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ELICITGUARD, "serve", *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("kind", ["ext-proc", "ext-mcp"])
def test_several_replicas_need_a_shared_store(kind: str, key_file: Path) -> None:
    result = _serve(kind, "--listen", "127.0.0.1:0", "--replicas", "2", "--keys", str(key_file))
    assert result.returncode == 2
    assert "memory state store cannot be shared" in result.stderr


def test_several_replicas_need_configured_keys(redis_url: str) -> None:
    result = _serve(
        "ext-proc", "--listen", "127.0.0.1:0", "--replicas", "2", "--state-store", redis_url
    )
    assert result.returncode == 2
    assert "configured keys" in result.stderr


def test_bad_listen_address() -> None:
    result = _serve("ext-mcp", "--listen", "nowhere")
    assert result.returncode == 2
    assert "HOST:PORT" in result.stderr
