"""kapi.grpcutil: the start/serve/stop helpers every service's server.py uses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
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



async def test_keep_stream_retries_with_a_doubling_capped_backoff_reset_once_up() -> None:
    loop = asyncio.get_running_loop()
    starts: list[float] = []
    outcomes = iter(["fail", "fail", "fail", "up-then-break", "fail", "up-then-stay"])
    stay = asyncio.Event()

    async def session(connected: Callable[[], None]) -> None:
        starts.append(loop.time())
        outcome = next(outcomes)
        if outcome == "fail":
            raise ConnectionError("refused")
        connected()
        if outcome == "up-then-break":
            raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata())
        stay.set()
        await asyncio.Event().wait()

    task = asyncio.create_task(grpcutil.keep_stream("test", None, session, retry=0.1, retry_max=0.4))
    try:
        await asyncio.wait_for(stay.wait(), 5)
        gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
        # 0.1, 0.2, then capped at 0.4 (not 0.8); being up resets it: 0.1 after the break, then 0.2
        for gap, want in zip(gaps, [0.1, 0.2, 0.4, 0.1, 0.2], strict=True):
            assert want - 0.01 <= gap < want + 0.09, (gaps, want)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_keep_stream_lets_other_errors_through() -> None:
    async def session(connected: Callable[[], None]) -> None:
        raise ValueError("a bug, not a broken stream")

    with pytest.raises(ValueError, match="a bug"):
        await grpcutil.keep_stream("test", None, session, retry=0.01)


_PEER = """
import asyncio, sys
from kapi import grpcutil

async def main():
    server, _, port = grpcutil.make_server("127.0.0.1:" + sys.argv[1], None)
    await grpcutil.start_serving(server, port, sys.argv[2])
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _start_peer(port: int, port_file: Path) -> asyncio.subprocess.Process:
    import sys

    port_file.unlink(missing_ok=True)
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", _PEER, str(port), str(port_file))
    for _ in range(1000):
        if port_file.exists() and port_file.read_text():
            return proc
        await asyncio.sleep(0.01)
    proc.kill()
    raise AssertionError("peer did not start in 10 s")


async def test_channel_reaches_a_restarted_peer_within_200ms_without_a_reconnect_storm(tmp_path: Path) -> None:
    """A real peer process, SIGKILLed and started again on its port: the first call succeeds within 200 ms of
    the peer listening again, and while it is away it sees a bounded number of connection attempts per second.

    gRPC's default backoff (1 s, x1.6, up to 120 s) took 1.4-2.6 s here (issue 18); RECONNECT_BACKOFF_MS caps it.
    """
    import time

    port, port_file = _free_port(), tmp_path / "port"
    proc = await _start_peer(port, port_file)
    channel = grpcutil.channel(f"127.0.0.1:{port}", None)
    stub = health_pb2_grpc.HealthStub(channel)
    delays: list[float] = []
    try:
        await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        for _ in range(3):
            proc.kill()
            await proc.wait()
            # Away for a while, as a restarting service is: attempts keep failing and the backoff grows to its cap.
            # A listener that accepts and drops each connection counts the attempts a dead peer sees.
            attempts = 0

            def count(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                nonlocal attempts
                attempts += 1
                writer.close()

            await asyncio.sleep(0.3)
            listener = await asyncio.start_server(count, "127.0.0.1", port, reuse_address=True)
            for _ in range(20):  # requests keep arriving meanwhile (each fails fast with UNAVAILABLE)
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                assert info.value.code() == grpc.StatusCode.UNAVAILABLE
                await asyncio.sleep(0.1)
            listener.close()
            await listener.wait_closed()
            assert 2 <= attempts / 2.0 <= 12, f"{attempts / 2.0:.1f} connection attempts/s at a dead peer"
            proc = await _start_peer(port, port_file)
            back = time.monotonic()
            while True:
                try:
                    await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    break
                except grpc.aio.AioRpcError:
                    assert time.monotonic() - back < 5
                    await asyncio.sleep(0.005)
            delays.append(time.monotonic() - back)
        # The median against the 200 ms goal; the worst against a looser bound, as the 2-core test machine may be
        # busy with other work (the backoff alone is at most 180 ms; gRPC's default 1.4-2.6 s fails both).
        shown = [round(d * 1000) for d in delays]
        print(f"first call after the peer was back: {shown} ms; attempts/s at a dead peer: {attempts / 2.0:.1f}")
        assert sorted(delays)[1] < 0.2 and max(delays) < 0.5, f"first call succeeded {shown} ms after the peer was back"
    finally:
        proc.kill()
        await proc.wait()
        await channel.close()


_TERMINATED_PEER = """
import sys
from kapi import grpcutil

async def main(stop):
    server, health, port = grpcutil.make_server("127.0.0.1:0", None)
    await grpcutil.start_serving(server, port, sys.argv[1])
    await grpcutil.serve_until(stop, server, 0.5)

grpcutil.run(main)
"""


async def test_health_watch_follows_changes_and_sigterm_ends_it(tmp_path: Path) -> None:
    """A client's health Watch sees each change; SIGTERM still stops the server process at once (the library's
    thread-based Watch kept it alive until the client went away)."""
    import signal
    import sys

    server, health_servicer, port = grpcutil.make_server("127.0.0.1:0", None)
    await grpcutil.start_serving(server, port)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=SERVICE))
            replies = stream.__aiter__()
            assert (await anext(replies)).status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
            grpcutil.set_serving(health_servicer, [SERVICE])
            assert (await anext(replies)).status == health_pb2.HealthCheckResponse.SERVING
            grpcutil.set_serving(health_servicer, [SERVICE], serving=False)
            assert (await anext(replies)).status == health_pb2.HealthCheckResponse.NOT_SERVING
            stream.cancel()
    finally:
        await server.stop(None)

    port_file = tmp_path / "port"
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", _TERMINATED_PEER, str(port_file))
    try:
        for _ in range(1000):
            if port_file.exists() and port_file.read_text():
                break
            await asyncio.sleep(0.01)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port_file.read_text()}") as channel:
            stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
            assert (await anext(stream.__aiter__())).status == health_pb2.HealthCheckResponse.SERVING
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 5) == 0  # the open Watch does not keep it alive
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
