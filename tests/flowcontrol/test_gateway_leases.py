"""Seat leases end to end between the gateway's FlowControlClient and a real flowcontrol service.

The flowcontrol service runs API Priority and Fairness over a real storage
service and etcd (its FlowSchemas and PriorityLevelConfigurations synced
from storage as in production); the gateway's client is the production one.
Messages on the Dispatch stream are counted by the client (``sent``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from kapi import errors, flags, grpcutil, jsonutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.flowcontrol import defaults
from services.flowcontrol import server as flowcontrol_server
from services.flowcontrol.apf import Controller
from services.flowcontrol.apfdispatch import APFDispatcher
from services.flowcontrol.sync import key
from services.gateway.flowcontrol import FlowControlClient, LocalLimiter, Seat
from tests.storage.conftest import start_storage

GD = "global-default"
ALICE = UserInfo("alice", groups=("system:authenticated",))
BOB = UserInfo("bob", groups=("system:authenticated",))
ADMIN = UserInfo("admin", groups=("system:masters", "system:authenticated"))


def get(user: UserInfo, name: str = "x") -> Attributes:
    return Attributes(user, "get", True, path=f"/api/v1/namespaces/ns/configmaps/{name}", api_version="v1",
                      resource="configmaps", namespace="ns", name=name)


class Flow:
    """A flowcontrol service with APF (synced from a real storage) and what tests reach in it."""

    def __init__(self, service: flowcontrol_server.FlowControlService, controller: Controller,
                 storage: storage_pb2_grpc.StorageStub):
        self.service, self.controller, self.storage = service, controller, storage
        self.address = f"127.0.0.1:{service.port}"

    def dispatched(self, schema: str = GD, level: str = GD) -> int:
        return self.controller.counters["dispatched"].get((level, schema), 0)


async def _flow(etcd: Any, *limits: str) -> AsyncIterator[Flow]:
    storage = await start_storage(etcd.endpoint, f"/kapi-leases-{uuid.uuid4().hex[:8]}/registry")
    args = flags.parse(flags.FLOWCONTROL, ["--listen-address", "127.0.0.1:0",
                                           "--storage-address", f"127.0.0.1:{storage.port}", *limits])
    dispatcher = flowcontrol_server.build_dispatcher(args)
    assert isinstance(dispatcher, APFDispatcher)
    service = await flowcontrol_server.start(args, dispatcher)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{storage.port}")
    try:
        assert service.sync is not None
        await asyncio.wait_for(service.sync.synced.wait(), 10)
        yield Flow(service, dispatcher.controller, storage_pb2_grpc.StorageStub(channel))
    finally:
        await channel.close()
        await service.stop(0)
        await storage.stop(0)


@pytest.fixture
async def flow(etcd: Any) -> AsyncIterator[Flow]:
    async for f in _flow(etcd):
        yield f


@pytest.fixture
async def tiny(etcd: Any) -> AsyncIterator[Flow]:
    """bench/apf.py's limits: 6 seats for the whole cluster."""
    async for f in _flow(etcd, "--max-requests-inflight=4", "--max-mutating-requests-inflight=2"):
        yield f


async def _client(flow: Flow, leases: bool = True) -> tuple[FlowControlClient, grpc.aio.Channel]:
    channel = grpcutil.channel(flow.address, None)
    client = FlowControlClient(channel, LocalLimiter(0, 0), leases)
    client.start()
    await _until(lambda: client.connected)
    return client, channel


async def _until(predicate: Any, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def _close(*clients: tuple[FlowControlClient, grpc.aio.Channel]) -> None:
    for client, channel in clients:
        await client.close()
        await channel.close()


@pytest.mark.parametrize("leases", [True, False])
async def test_repeated_gets_send_no_start_after_the_first(flow: Flow, leases: bool) -> None:
    client, channel = await _client(flow, leases)
    try:
        before = flow.dispatched()
        uids = set()
        for i in range(50):
            seat = Seat()
            async with client.seat(get(ALICE, f"o{i}"), False, 5.0, seat):
                uids.add((seat.flow_schema_uid, seat.priority_level_uid))
        assert len(uids) == 1 and "" not in next(iter(uids))  # PF headers from the remembered classification
        await client.flush()
        assert flow.dispatched() - before == 50  # reported: the metrics count every request
        if leases:
            assert client.sent["start"] == 1 and client.sent["finish"] == 1
        else:
            assert client.sent["start"] == 50 and client.sent["finish"] == 50
        level = flow.controller.levels[GD]
        await _until(lambda: level.seats_in_use == level.leased)  # the last Finish (without leases) arrived
        assert level.leased == (1 if leases else 0)
    finally:
        await _close((client, channel))
    await _until(lambda: flow.controller.levels[GD].seats_in_use == 0)  # the stream's end freed the lease


async def test_exempt_requests_run_without_a_start_once_classified(flow: Flow) -> None:
    client, channel = await _client(flow)
    try:
        for _ in range(10):
            async with client.seat(get(ADMIN), False, 5.0):
                pass
        watch = Attributes(ADMIN, "watch", True, resource="configmaps", namespace="ns")
        for _ in range(3):  # long-running, and still exempt
            async with client.seat(watch, True, 5.0):
                pass
        assert client.sent["start"] == 2  # one per distinct classification key
        async with client.seat(get(ADMIN), False, 5.0):
            await client.flush()
            executing = {(r["priority_level"], r["flow_schema"]): r["value"]
                         for r in flow.controller.metrics()["current_executing_requests"]}
            assert executing[("exempt", "exempt")] == 1  # this request, reported before the dump
        assert flow.dispatched("exempt", "exempt") >= 14
    finally:
        await _close((client, channel))


async def test_a_configuration_change_voids_remembered_classifications(flow: Flow) -> None:
    client, channel = await _client(flow)
    try:
        for _ in range(3):
            async with client.seat(get(ALICE), False, 5.0):
                pass
        assert client.sent["start"] == 1
        generation = flow.controller.generation
        schema = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                  "metadata": {"name": "alice-low"},
                  "spec": {"priorityLevelConfiguration": {"name": "workload-low"}, "matchingPrecedence": 100,
                           "distinguisherMethod": {"type": "ByUser"},
                           "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                                      "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                                         "namespaces": ["*"]}]}]}}
        await flow.storage.Create(storage_pb2.CreateRequest(key=key(defaults.FLOW_SCHEMAS, "alice-low"),
                                                            object=jsonutil.dumps(schema)))
        await _until(lambda: flow.controller.generation > generation)
        session = client.session
        assert session is not None
        await _until(lambda: session.generation == flow.controller.generation and not session.classified)
        await _until(lambda: flow.controller.levels[GD].leased == 0)  # revoked, the idle seat returned
        seat = Seat()
        async with client.seat(get(ALICE), False, 5.0, seat):
            pass
        assert client.sent["start"] == 2  # classified again: the new schema applies
        assert seat.flow_schema_uid == flow.controller.schemas["alice-low"].uid
    finally:
        await _close((client, channel))


async def test_a_broken_stream_frees_leased_seats(flow: Flow) -> None:
    client, channel = await _client(flow)
    level = flow.controller.levels[GD]
    try:
        started, finish = asyncio.Event(), asyncio.Event()

        async def hold(i: int) -> None:
            async with client.seat(get(ALICE, f"h{i}"), False, 5.0):
                started.set()
                await finish.wait()

        async with client.seat(get(ALICE), False, 5.0):
            pass
        task = asyncio.create_task(hold(0))
        await started.wait()
        assert level.leased >= 1 and client.sent["start"] == 1  # the held request runs on the leased seat
    finally:
        await client.close()  # the stream ends with a request still on a leased seat
    await _until(lambda: level.leased == 0 and level.seats_in_use == 0)
    finish.set()
    await task
    await channel.close()


async def test_under_contention_requests_queue_centrally_and_429_as_before(tiny: Flow) -> None:
    """Gateway 1 holds leases; gateway 2's flood queues at the same level: the leases are revoked, gateway 1's
    requests go through Starts and queue fairly, and a flow past its queues' length gets 429s."""
    gateway1, gateway2 = await _client(tiny), await _client(tiny)
    client1, client2 = gateway1[0], gateway2[0]
    level = tiny.controller.levels[GD]
    try:
        for _ in range(5):
            async with client1.seat(get(ALICE), False, 5.0):
                pass
        assert level.leased >= 1 and client1.sent["start"] == 1
        limit = tiny.controller.current_limit(level)
        release = asyncio.Event()
        outcomes: list[str] = []
        peak = 0

        async def request(client: FlowControlClient, user: UserInfo) -> None:
            nonlocal peak
            try:
                async with client.seat(get(user), False, 20.0):
                    executing = len(level.executing) + level.leased
                    peak = max(peak, len(level.executing))
                    assert executing <= limit
                    outcomes.append("ran")
                    await release.wait()
            except errors.StatusError as err:
                outcomes.append(str(err.code))

        queue_length = tiny.controller.levels[GD].config.queue_length_limit
        hand = tiny.controller.levels[GD].config.hand_size
        flood = [asyncio.create_task(request(client2, BOB)) for _ in range(queue_length * hand + limit + 20)]
        await _until(lambda: level.waiting > 0)
        session1 = client1.session
        assert session1 is not None
        await _until(lambda: session1.leases[GD].limit == 0)  # revoked on gateway 1
        await _until(lambda: "429" in outcomes)  # bob's queues are full
        starts = client1.sent["start"]
        alice = asyncio.create_task(request(client1, ALICE))
        await _until(lambda: client1.sent["start"] == starts + 1)  # a Start, not the revoked lease
        await asyncio.sleep(0.1)
        assert not alice.done() and level.waiting > 0  # alice waits in the central queues
        release.set()
        await asyncio.wait_for(asyncio.gather(alice, *flood), 30)
        assert outcomes.count("ran") >= limit and "429" in outcomes and peak <= limit
        rejected = tiny.controller.counters["rejected:queue-full"]
        assert rejected.get((GD, GD), 0) >= 1
    finally:
        release.set()
        await _close(gateway1, gateway2)


@pytest.mark.parametrize("leases", [True, False])
async def test_a_queued_request_waits_a_fourth_of_its_deadline(tiny: Flow, leases: bool) -> None:
    """kube's getRequestWaitContext: a request that cannot get a seat waits in its queue for a fourth of its
    deadline and is then rejected with 429 (time-out), not held until the deadline itself (504)."""
    gateway = await _client(tiny, leases)
    client = gateway[0]
    level = tiny.controller.levels[GD]
    release = asyncio.Event()
    try:
        limit = tiny.controller.current_limit(level)

        async def hold(i: int) -> None:
            async with client.seat(get(BOB, f"h{i}"), False, 30.0):
                await release.wait()

        holders = [asyncio.create_task(hold(i)) for i in range(limit)]
        await _until(lambda: len(level.executing) + level.leased >= limit and not any(h.done() for h in holders))
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(errors.StatusError) as info:
            async with client.seat(get(ALICE), False, 2.0):
                raise AssertionError("ran without a seat")
        waited = loop.time() - started
        assert info.value.code == 429 and info.value.retry_after is not None
        assert 0.4 <= waited < 1.5, waited  # 2 s / 4 = 0.5 s, far from the 2 s deadline
        assert tiny.controller.counters["rejected:time-out"].get((GD, GD), 0) >= 1
        release.set()
        await asyncio.gather(*holders)
    finally:
        release.set()
        await _close(gateway)
