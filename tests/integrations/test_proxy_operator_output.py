"""What an operator reads from the proxies: ``--audit-log`` and the upstream going down.

``--audit-log FILE`` keeps audit records apart from the server's own stderr (mode 0600,
appended); ``proxy http`` says on stderr when the upstream cannot be reached, once, and
again when it answers, instead of answering 502 in silence.
"""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import time
from pathlib import Path

import httpx
from tests.integrations.support import ELICITGUARD, PY, SERVERS, read_line, stop

RAW_SERVER = str(SERVERS / "raw_server.py")


def test_stdio_audit_log_keeps_records_off_stderr(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    policy = tmp_path / "p.yaml"
    policy.write_text('extends: ["builtin:default"]\naudit: {sink: stderr}\n')
    process = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "stdio",
            "--policy",
            str(policy),
            "--audit-log",
            str(log),
            "--",
            PY,
            RAW_SERVER,
            "garbage",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None
        process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"broken"}\n')
        process.stdin.flush()
        reply = json.loads(read_line(process.stdout, 20.0))
        assert reply["error"]["data"]["elicitguard"]["codes"] == ["EG904"]
        process.stdin.close()
        process.wait(20)
        assert process.stderr is not None
        stderr = process.stderr.read().decode()
    finally:
        stop(process)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(f["code"] == "EG904" for r in records for f in r.get("findings", []))
    assert '"findings"' not in stderr  # the audit records went to the file only
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_http_proxy_says_when_the_upstream_is_down_and_back(tmp_path: Path) -> None:
    upstream_port = _free_port()
    port_file = tmp_path / "port"
    proxy = subprocess.Popen(
        [
            ELICITGUARD,
            "proxy",
            "http",
            "--upstream",
            f"http://127.0.0.1:{upstream_port}/mcp",
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            str(port_file),
            "--policy",
            "builtin:default",
            "--connect-timeout",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    upstream: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert proxy.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text().strip()}/mcp"
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        for _ in range(3):
            answer = httpx.post(url, json=ping, timeout=20)
            assert answer.status_code == 502
            assert answer.json()["error"]["data"]["elicitguard"]["reason"] == "upstream_unreachable"
        upstream = subprocess.Popen(
            [PY, "-m", "http.server", str(upstream_port), "--bind", "127.0.0.1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tmp_path,
        )
        while time.monotonic() < deadline:
            if httpx.post(url, json=ping, timeout=20).status_code != 502:
                break
            time.sleep(0.2)
    finally:
        proxy.terminate()
        proxy.wait(20)
        assert proxy.stderr is not None
        stderr = proxy.stderr.read().decode()
        proxy.stderr.close()
        if upstream is not None:
            upstream.terminate()
            upstream.wait(10)
    assert stderr.count("cannot reach the upstream") == 1, stderr
    assert "answers again" in stderr, stderr


def test_one_public_suffix_list_through_public_apis() -> None:
    """``is_known_tld`` answers from publicsuffixlist's public API; tldextract is gone."""
    from importlib.metadata import requires

    from elicitguard.checks.urls import is_known_tld

    assert is_known_tld("com")
    assert is_known_tld("xn--p1ai")
    assert is_known_tld("рф")
    assert not is_known_tld("example")
    assert not is_known_tld("internal")
    names = [
        r.split(";")[0].split(">")[0].split("=")[0].strip() for r in requires("elicitguard") or []
    ]
    assert "tldextract" not in names
    assert "publicsuffixlist" in names
