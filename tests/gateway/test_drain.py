"""The gateway's shutdown drain (services/gateway/filters/health.py): how long /readyz fails before it closes."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

from services.gateway.filters import health


def _backends() -> health.Backends:
    return SimpleNamespace(shutting_down=True)  # type: ignore[return-value]


async def _busy(state: health.Drain, stop: asyncio.Event) -> None:
    while not stop.is_set():
        state.last_request = time.monotonic()
        await asyncio.sleep(0.05)


async def test_waits_the_whole_delay_while_requests_keep_coming_and_nobody_reads_readyz() -> None:
    state, stop = health.Drain(), asyncio.Event()
    busy = asyncio.create_task(_busy(state, stop))
    waited = await health.drain(_backends(), 1.0, state)
    stop.set()
    await busy
    assert waited >= 1.0, waited  # the whole delay: requests kept coming and nobody read /readyz
    assert waited < 2.0, waited  # and not much more (loose: a loaded 2-core machine)


async def test_ends_soon_after_the_proxy_read_a_failing_readyz() -> None:
    state, stop = health.Drain(), asyncio.Event()
    busy = asyncio.create_task(_busy(state, stop))

    async def health_check() -> None:
        await asyncio.sleep(0.3)
        state.readyz_failed = time.monotonic()

    checker = asyncio.create_task(health_check())
    waited = await health.drain(_backends(), 5.0, state)
    stop.set()
    await busy
    await checker
    assert 0.3 + health.DRAIN_MARGIN_SECONDS <= waited < 0.3 + health.DRAIN_MARGIN_SECONDS + 0.3


async def test_ends_when_no_request_arrives_at_all() -> None:
    waited = await health.drain(_backends(), 5.0, health.Drain())
    assert health.QUIET_SECONDS <= waited < health.QUIET_SECONDS + 0.3


async def test_zero_delay_does_not_wait() -> None:
    assert await health.drain(_backends(), 0.0, health.Drain()) < 0.05
