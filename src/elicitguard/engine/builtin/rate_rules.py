"""EG123: the client-side elicitation rate limit (EL-23 of 2025-11-25 and earlier).

A server that elicits in a tight loop wears the user down until they accept without
reading. ``limits.elicitations_per_minute`` caps how many elicitations one server (the
operator's name for it) may put in front of the user in any sliding 60-second window; the
ones over the cap are the findings. Only elicitations under the cap are counted, so a
server that keeps hammering stays refused until its earlier requests age out of the
window, and a server that slows down is served again.

The windows live in the engine's services (one set per engine, shared by its sessions)
and use the envelope's timestamp when it has one (captures), else the clock.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import deque
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

from pydantic import Field

from elicitguard.base.decision import Hit
from elicitguard.engine.context import CheckContext, CheckParams, check
from elicitguard.protocol.items import Item

__all__: list[str] = []

WINDOW_S = 60.0
MAX_SERVERS = 4096


def _limit(ctx: CheckContext, params: Mapping[str, Any]) -> int | None:
    value = params.get("per_minute")
    if value is None:
        limits = ctx.services.get("limits")
        value = getattr(limits, "elicitations_per_minute", None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _now(ctx: CheckContext) -> float:
    stamp = ctx.envelope.ts
    if isinstance(stamp, str):
        try:
            return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return time.time()


class RateParams(CheckParams):
    """EG123: the window and, overriding ``limits.elicitations_per_minute``, the limit."""

    per_minute: Annotated[int, Field(gt=0, strict=True)] | None = None
    window_s: Annotated[float, Field(gt=0)] = WINDOW_S


@check("rate.elicitations_per_minute", params=RateParams)
def elicitations_per_minute(
    item: Item, ctx: CheckContext, params: Mapping[str, Any]
) -> Iterator[Hit]:
    """EG123: more elicitations from one server in a minute than the policy allows."""
    limit = _limit(ctx, params)
    rates = ctx.services.get("rates")
    if limit is None or not isinstance(rates, dict):
        return
    window = float(params.get("window_s", WINDOW_S))
    server = ctx.server or ""
    now = _now(ctx)
    times: deque[float] | None = rates.get(server)
    if times is None:
        if len(rates) >= MAX_SERVERS:
            rates.pop(next(iter(rates)))
        times = rates[server] = deque()
    while times and (now - times[0] >= window or times[0] > now):
        times.popleft()
    if len(times) >= limit:
        yield Hit(args={"limit": limit, "window": int(window)})
        return
    times.append(now)
