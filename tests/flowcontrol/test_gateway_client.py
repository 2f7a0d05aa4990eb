"""The gateway's FlowControlClient: local fallback while flowcontrol is unreachable, readyz detail, early release."""

from __future__ import annotations

import asyncio

import pytest

from kapi import errors, flags, grpcutil
from kapi.attributes import Attributes, UserInfo
from services.flowcontrol import server as flowcontrol_server
from services.gateway.flowcontrol import FlowControlClient, LocalLimiter, Seat
from tests.conftest import free_port

ALICE = Attributes(UserInfo("alice", groups=("system:authenticated",)), "get", True, resource="pods", namespace="x")


async def _until(predicate, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


async def test_fallback_until_connected_then_remote_seats() -> None:
    port = free_port()
    channel = grpcutil.channel(f"127.0.0.1:{port}", None)
    client = FlowControlClient(channel, LocalLimiter(1, 1))
    client.start()
    try:
        await asyncio.sleep(0.2)
        assert not client.connected
        async with client.seat(ALICE, False, 1.0):  # local max-in-flight: one read-only seat
            with pytest.raises(errors.StatusError) as err:
                async with client.seat(ALICE, False, 1.0):
                    pass
            assert err.value.code == 429

        args = flags.parse(flags.FLOWCONTROL, ["--listen-address", f"127.0.0.1:{port}",
                                               "--max-requests-inflight=1", "--max-mutating-requests-inflight=1"])
        service = await flowcontrol_server.start(args, flowcontrol_server.build_dispatcher(args))
        try:
            await _until(lambda: client.connected)
            seat = Seat()
            async with client.seat(ALICE, False, 1.0, seat):
                seat.release()  # given back early: the next request gets the only seat
                async with client.seat(ALICE, False, 1.0):
                    pass
        finally:
            await service.stop(0)
        await _until(lambda: not client.connected)
    finally:
        await client.close()
        await channel.close()


def test_unconfigured_client_says_so() -> None:
    client = FlowControlClient(None, LocalLimiter(0, 0))
    assert not client.configured and not client.connected


async def test_outage_logs_once_backs_off_and_reconnects_fast(caplog: pytest.LogCaptureFixture) -> None:
    """While flowcontrol is away: one "broke" line, attempts on a capped exponential backoff (not every 100 ms),
    one line when it is back, reached within about 200 ms of listening again (issue 18)."""
    import logging
    import time

    port = free_port()
    args = flags.parse(flags.FLOWCONTROL, ["--listen-address", f"127.0.0.1:{port}"])
    service = await flowcontrol_server.start(args, flowcontrol_server.build_dispatcher(args))
    channel = grpcutil.channel(f"127.0.0.1:{port}", None)
    client = FlowControlClient(channel, LocalLimiter(0, 0))
    caplog.set_level(logging.DEBUG, logger="services.gateway.flowcontrol")
    client.start()
    try:
        await _until(lambda: client.connected)
        await service.stop(0)
        await _until(lambda: not client.connected)
        await asyncio.sleep(3.0)
        messages = [r.getMessage() for r in caplog.records]
        assert sum("broke" in m for m in messages) == 1, messages
        assert sum("stream connected" in m for m in messages) == 1, messages  # only the first, real connection
        attempts = sum("still down" in m for m in messages)
        assert 2 <= attempts <= 8, messages  # 0.1 + 0.2 + 0.4 + 0.8 + 1.6 s: about 5 attempts, not 30
        service = await flowcontrol_server.start(args, flowcontrol_server.build_dispatcher(args))
        back = time.monotonic()
        await _until(lambda: client.connected)
        elapsed = time.monotonic() - back
        assert elapsed < 0.5, f"reconnected {elapsed:.2f}s after flowcontrol was back"
        assert sum("back after" in r.getMessage() for r in caplog.records) == 1
        async with client.seat(ALICE, False, 1.0):  # decided over the stream again
            assert client.connected
    finally:
        await client.close()
        await service.stop(0)
        await channel.close()
