"""kapi.grpcutil: the start/serve/stop helpers every service's server.py uses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kapi import grpcutil

SERVICE = "kapi.test.v1.Test"


async def _status(port: int, service: str) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        return int(response.status)


async def test_start_serving_writes_port_file_and_serve_until_stops(tmp_path: Path) -> None:
    server, health, port = grpcutil.make_server("127.0.0.1:0", None)
    grpcutil.set_serving(health, [SERVICE], serving=False)
    port_file = tmp_path / "port"
    await grpcutil.start_serving(server, port, str(port_file))
    assert port_file.read_text() == str(port) and port > 0
    assert await _status(port, "") == health_pb2.HealthCheckResponse.NOT_SERVING
    grpcutil.set_serving(health, [SERVICE])
    assert await _status(port, SERVICE) == health_pb2.HealthCheckResponse.SERVING

    stop = asyncio.Event()
    serving = asyncio.create_task(grpcutil.serve_until(stop, server, 0.1))
    await asyncio.sleep(0)
    assert not serving.done()  # serves until told to stop
    stop.set()
    await asyncio.wait_for(serving, 5)
    assert await server.wait_for_termination(0) is False  # False: terminated, not timed out
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _status(port, "")
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_start_serving_without_port_file(tmp_path: Path) -> None:
    server, health, port = grpcutil.make_server("127.0.0.1:0", None)
    await grpcutil.start_serving(server, port)
    try:
        assert list(tmp_path.iterdir()) == []
        assert await _status(port, "") == health_pb2.HealthCheckResponse.SERVING  # make_server's default
    finally:
        await server.stop(None)


async def test_batches_take_what_queued_up_and_stop_at_none() -> None:
    queue: asyncio.Queue[int | None] = asyncio.Queue()
    for item in (1, 2, 3):
        queue.put_nowait(item)
    stream = grpcutil.batches(queue, limit=2)
    assert await anext(stream) == [1, 2]  # capped at the limit
    assert await anext(stream) == [3]  # nothing else queued: no waiting for more
    later = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    assert not later.done()  # an empty queue: waits for the next item
    queue.put_nowait(4)
    queue.put_nowait(5)
    queue.put_nowait(None)
    queue.put_nowait(6)
    assert await later == [4, 5]  # items before the None still go out
    with pytest.raises(StopAsyncIteration):
        await anext(stream)
