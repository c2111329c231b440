"""The HTTP proxy's SDK matrix through Envoy's protocol: real mcp SDK client and server.

The same {form, url} x {benign, violating} calls (and a 2026-07-28 round with two entries)
the HTTP proxy tests run, with the Envoy stand-in asking two ext_proc replicas in turn
(one redis): consecutive messages of one elicitation land on different replicas.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.gateway.conftest import replica
from tests.gateway.envoy_emulator import serve_emulator
from tests.integration_support import require_module
from tests.integrations.support import ERAS, assert_matrix, sdk_http_server
from tests.integrations.test_http_proxy import run_sdk_matrix

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sdk_gateway(redis_url: str, key_file: Path) -> Iterator[str]:
    require_module("mcp")
    with sdk_http_server() as upstream:
        base = upstream.removesuffix("/mcp")
        with (
            replica("ext-proc", redis_url, key_file, "--upstream", upstream) as one,
            replica("ext-proc", redis_url, key_file, "--upstream", upstream) as two,
            serve_emulator(base, [one[0], two[0]]) as front,
        ):
            yield front + "/mcp"


@pytest.mark.parametrize("era", ERAS)
def test_sdk_client_and_server_through_ext_proc(sdk_gateway: str, era: str) -> None:
    assert_matrix(run_sdk_matrix(sdk_gateway, era), era)
