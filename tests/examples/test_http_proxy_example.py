"""``examples/http_proxy/``: the HTTP proxy with JWT verification and Redis, as its README runs it.

A real redis-server on 127.0.0.1, the demo server from ``examples/protect_server`` as the
unguarded upstream (Streamable HTTP), two ``elicitguard proxy http`` replicas with the
example policy (sealed ``requestState``, markers in Redis, one key file), and the example's
``call.py`` with the token from ``demo_auth.py``: without a token the proxy answers 401 with
an RFC 9728 challenge; with it, both eras pass the harmless requests and block the others.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from tests.examples.support import ELICITGUARD, EXAMPLES, PY, clean_env, serving
from tests.identity.conftest import redis_url  # noqa: F401  (the redis-server fixture)
from tests.integration_support import require_module

pytestmark = pytest.mark.integration

HERE = EXAMPLES / "http_proxy"
UPSTREAM = EXAMPLES / "protect_server" / "server.py"


def run(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def test_http_proxy_example_with_jwt_and_redis(tmp_path: Path, redis_url: str) -> None:  # noqa: F811
    """401 without a token; with one, both replicas enforce the policy in both eras."""
    require_module("mcp")
    require_module("uvicorn")
    require_module("httpx")
    import httpx

    shutil.copy(HERE / "policy.yaml", tmp_path / "policy.yaml")
    run(ELICITGUARD, "keys", "generate", "--output", "keys.json", cwd=tmp_path)
    token = run(PY, str(HERE / "demo_auth.py"), ".", cwd=tmp_path).strip()
    assert (tmp_path / "jwks.json").is_file()

    proxy = [ELICITGUARD, "proxy", "http", "--listen", "127.0.0.1:0", "--policy", "policy.yaml"]
    with serving([PY, str(UPSTREAM), "--http", "--no-guard", "--port", "0"]) as upstream:
        store = ["--upstream", upstream, "--state-store", redis_url]
        with (
            serving([*proxy, *store], cwd=tmp_path) as a,
            serving([*proxy, *store], cwd=tmp_path) as b,
        ):
            refused = httpx.post(a, json={}, headers={"Accept": "application/json"})
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"].startswith(
                'Bearer resource_metadata="https://mcp.example.com/.well-known/'
            )
            outputs = [
                run(PY, str(HERE / "call.py"), a, token, "--era", "legacy", cwd=tmp_path),
                run(PY, str(HERE / "call.py"), b, token, "--era", "2026-07-28", cwd=tmp_path),
            ]
    for era, out in zip(("legacy", "2026-07-28"), outputs, strict=True):
        assert out.splitlines() == [
            f'{era} book_table: book:accept:{{"guests": 4}}',
            f"{era} unlock: error -31001 EG201 EG206",
            f"{era} connect: connect:accept:null",
            f"{era} connect: error -31001 EG301",
        ]
