"""The FlowControl Dispatch stream through a real in-process gRPC server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from kapi import flags
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc
from services.flowcontrol import server as flowcontrol_server
from services.flowcontrol.maxinflight import MaxInFlight

ALICE = UserInfo("alice", groups=("system:authenticated",))


class Flow:
    """A running flowcontrol server and its limiter."""

    def __init__(self, server: grpc.aio.Server, limiter: MaxInFlight, port: int):
        self.server, self.limiter, self.port = server, limiter, port


@pytest.fixture
async def flow() -> AsyncIterator[Flow]:
    args = flags.parse("flowcontrol", ["--max-requests-inflight=1", "--max-mutating-requests-inflight=1"])
    limiter = flowcontrol_server.build_dispatcher(args)
    assert isinstance(limiter, MaxInFlight)
    service = await flowcontrol_server.start(args, limiter)
    yield Flow(service.server, limiter, service.port)
    await service.stop(0)


def _start(request_id: int, mutating: bool = False, user: UserInfo = ALICE) -> flowcontrol_pb2.DispatchRequest:
    attrs = Attributes(user, "create" if mutating else "list", True, resource="configmaps", namespace="d")
    return flowcontrol_pb2.DispatchRequest(start=flowcontrol_pb2.Start(
        request_id=request_id, attributes=attrs.to_proto(), mutating=mutating))


def _finish(request_id: int) -> flowcontrol_pb2.DispatchRequest:
    return flowcontrol_pb2.DispatchRequest(finish=flowcontrol_pb2.Finish(request_id=request_id))


class Client:
    """One Dispatch stream driven from a queue."""

    def __init__(self, port: int):
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.outbox: asyncio.Queue[flowcontrol_pb2.DispatchRequests | None] = asyncio.Queue()
        self.call = flowcontrol_pb2_grpc.FlowControlStub(self.channel).Dispatch(self._requests())
        self._received: list[flowcontrol_pb2.DispatchResponse] = []

    async def _requests(self) -> AsyncIterator[flowcontrol_pb2.DispatchRequests]:
        while (message := await self.outbox.get()) is not None:
            yield message

    def send(self, *messages: flowcontrol_pb2.DispatchRequest | None) -> None:
        """One batch (one stream message) holding ``messages`` in order; ``send(None)`` half-closes."""
        if messages == (None,):
            self.outbox.put_nowait(None)
            return
        self.outbox.put_nowait(flowcontrol_pb2.DispatchRequests(requests=messages))

    async def replies(self, n: int) -> list[flowcontrol_pb2.DispatchResponse]:
        while len(self._received) < n:
            self._received.extend((await asyncio.wait_for(self.call.read(), 5)).responses)
        out, self._received = self._received[:n], self._received[n:]
        return out

    async def close(self) -> None:
        await self.channel.close()


async def _until(predicate, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def test_two_concurrent_starts_over_a_limit_of_one(flow: Flow) -> None:
    client = Client(flow.port)
    try:
        client.send(_start(1), _start(2))
        replies = {r.request_id: r for r in await client.replies(2)}
        assert replies[1].execute and not replies[2].execute
        assert replies[2].reason == "Too many requests, please try again later."
        assert replies[2].retry_after_seconds == 1
        assert replies[1].priority_level == "global-default"
        client.send(_finish(1), _start(3))
        (third,) = await client.replies(1)
        assert third.request_id == 3 and third.execute  # a batch is handled in order: Finish released the seat
    finally:
        await client.close()


async def test_broken_stream_releases_its_seats(flow: Flow) -> None:
    client = Client(flow.port)
    client.send(_start(1), _start(2, mutating=True))
    assert all(r.execute for r in await client.replies(2))
    assert flow.limiter.in_flight(False) == 1 and flow.limiter.in_flight(True) == 1
    client.call.cancel()
    await client.close()
    await _until(lambda: flow.limiter.in_flight(False) == 0 and flow.limiter.in_flight(True) == 0)
    other = Client(flow.port)
    try:
        other.send(_start(1))
        assert (await other.replies(1))[0].execute
    finally:
        await other.close()


async def test_half_close_releases_seats(flow: Flow) -> None:
    client = Client(flow.port)
    try:
        client.send(_start(7))
        assert (await client.replies(1))[0].execute
        client.send(None)  # the gateway closes its side: nothing can Finish any more
        assert await asyncio.wait_for(client.call.read(), 5) == grpc.aio.EOF
        await _until(lambda: flow.limiter.in_flight(False) == 0)
    finally:
        await client.close()


async def test_exempt_and_duplicate_ids(flow: Flow) -> None:
    client = Client(flow.port)
    admin = UserInfo("admin", groups=("system:masters",))
    try:
        client.send(_start(1), _start(2, user=admin), _start(1))
        replies = await client.replies(3)
        by_id = [(r.request_id, r.execute, r.priority_level) for r in replies]
        assert (1, True, "global-default") in by_id
        assert (2, True, "exempt") in by_id
        assert (1, False, "") in by_id  # a duplicate request_id is refused, not double-counted
        assert flow.limiter.in_flight(False) == 1
    finally:
        await client.close()


def test_negative_limit_refuses_to_start() -> None:
    assert flowcontrol_server.main(["--max-requests-inflight=-1"]) == 1
