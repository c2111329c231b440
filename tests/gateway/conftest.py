"""Fixtures for the gateway tests: a real redis-server, two ``serve`` replicas, real peers."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.identity.conftest import key_json, redis_url
from tests.integration_support import require_module
from tests.integrations.support import ELICITGUARD, POLICY, http_proxy, read_line, stop

__all__ = ["redis_url"]


@pytest.fixture(autouse=True)
def _needs_gateway() -> None:
    require_module("grpc")
    require_module("envoy.service.ext_proc.v3.external_processor_pb2_grpc")
    require_module("httpx")
    require_module("uvicorn")


@pytest.fixture(scope="session")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One key file every replica shares."""
    path = tmp_path_factory.mktemp("keys") / "keys.json"
    path.write_text(key_json("k1"))
    path.chmod(0o600)
    return path


@contextlib.contextmanager
def replica(
    kind: str, redis: str | None, keys: Path | None, *extra: str, policy: Path | str = POLICY
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """One ``elicitguard serve KIND`` process on a free loopback port: (address, process)."""
    command = [ELICITGUARD, "serve", kind, "--listen", "127.0.0.1:0", "--policy", str(policy)]
    if redis is not None:
        command += ["--state-store", redis, "--replicas", "2"]
    if keys is not None:
        command += ["--keys", str(keys)]
    process = subprocess.Popen([*command, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = read_line(process.stdout, timeout=30).decode().strip()
        if not line.startswith("grpc://"):
            err = process.stderr.read().decode() if process.stderr else ""
            raise AssertionError(f"serve did not start: {line!r} {err}")
        yield line.removeprefix("grpc://"), process
    finally:
        stop(process)


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """The scripted Streamable HTTP upstream the HTTP proxy tests use; yields its base URL."""
    from tests.integrations.test_http_proxy import scripted

    with scripted() as base:
        yield base


@pytest.fixture(scope="module")
def reference(upstream: str) -> Iterator[str]:
    """``elicitguard proxy http`` in front of the same upstream: the decisions to match."""
    with http_proxy(upstream + "/mcp") as url:
        yield url


@pytest.fixture(scope="module")
def replicas(redis_url: str, key_file: Path, upstream: str) -> Iterator[list[str]]:
    """Two ext_proc replicas sharing one redis and one key file."""
    with (
        replica("ext-proc", redis_url, key_file, "--upstream", upstream + "/mcp") as one,
        replica("ext-proc", redis_url, key_file, "--upstream", upstream + "/mcp") as two,
    ):
        yield [one[0], two[0]]


@pytest.fixture(scope="module")
def gateway(upstream: str, replicas: list[str]) -> Iterator[str]:
    """The Envoy stand-in in front of the upstream, asking the two replicas; its MCP URL."""
    from tests.gateway.envoy_emulator import serve_emulator

    with serve_emulator(upstream, replicas) as base:
        yield base + "/mcp"
