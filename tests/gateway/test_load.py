"""A CI-sized share of the gateway load test: 64 streams, two replicas, one redis.

The full run (100,000 messages) is ``python benchmarks/gateway_load.py``.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from tests.gateway.load import prepare, run_load

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MESSAGES = int(os.environ.get("ELICITGUARD_GATEWAY_LOAD", "2000"))


def test_load_64_streams_nothing_lost_decisions_match_the_http_proxy(
    upstream: str, reference: str, replicas: list[str]
) -> None:
    cases = prepare(upstream, reference)
    assert {c.expected[0] for c in cases} >= {200, 400}
    result = asyncio.run(run_load(replicas, cases, messages=MESSAGES, streams=64))
    assert result.errors == []
    assert result.sent == result.answered == MESSAGES
    assert result.mismatches == []
