"""The gateway's storage client (services/gateway/storageclient.py) against real storage servers over real etcd.

Every call through the Call stream must fail exactly as the unary RPC does
(code, details, ``kapi-status-bin`` trailers, hence the same Status), time
out as a deadline does, fail 503 when its stream breaks, fall back to the
unary RPC while no stream is up, and spread over the replicas.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import grpc
import pytest

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.gateway import storageclient
from services.storage import server
from tests.conftest import Etcd, free_port
from tests.storage.conftest import start_storage
from tests.storage.helpers import configmap, key, unique

pytestmark = pytest.mark.timeout(60)


class CountingStub:
    """The real Storage stub, counting the unary calls made through it (the fallback path)."""

    def __init__(self, stub: storage_pb2_grpc.StorageStub) -> None:
        self.stub = stub
        self.unary: list[str] = []

    def __getattr__(self, name: str) -> Any:
        rpc = getattr(self.stub, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.unary.append(name)
            return rpc(*args, **kwargs)
        return counted


async def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


async def connected(address: str, channel: grpc.aio.Channel) -> tuple[storageclient.StorageClient, CountingStub]:
    """A started client with its stream(s) up, its unary fallback counted."""
    client = storageclient.open_client(channel, address, None, streams=True)
    counting = CountingStub(client._stub)
    client._stub = counting
    client.start()
    await wait_until(lambda: client.streams_up == len(client.streams))
    return client, counting


@pytest.fixture
async def storage(etcd: Any) -> AsyncIterator[server.StorageService]:
    service = await start_storage(etcd.endpoint, f"/{unique('sc')}/registry")
    yield service
    await service.stop(0)


@pytest.fixture(scope="module")
def paused_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Etcd]:
    """An etcd of this module's own, which tests pause (SIGSTOP) to make storage calls hang."""
    etcd = Etcd(tmp_path_factory.mktemp("etcd"))
    yield etcd
    os.kill(etcd.proc.pid, signal.SIGCONT)
    etcd.stop()


class Paused:
    """``async with Paused(etcd):`` etcd takes no requests inside (SIGSTOP), and is resumed after."""

    def __init__(self, etcd: Etcd) -> None:
        self.etcd = etcd

    async def __aenter__(self) -> None:
        os.kill(self.etcd.proc.pid, signal.SIGSTOP)

    async def __aexit__(self, *exc: object) -> None:
        os.kill(self.etcd.proc.pid, signal.SIGCONT)


async def failure(call: Any) -> grpc.aio.AioRpcError:
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return exc
    raise AssertionError("the call succeeded")


def shape(exc: grpc.aio.AioRpcError) -> tuple[Any, ...]:
    return exc.code(), exc.details(), tuple(exc.trailing_metadata() or ())


async def test_answers_and_failures_are_the_unary_ones(storage: server.StorageService) -> None:
    address = f"127.0.0.1:{storage.port}"
    async with grpc.aio.insecure_channel(address) as channel:
        unary = storage_pb2_grpc.StorageStub(channel)
        client, counting = await connected(address, channel)
        try:
            ns, name = unique("ns"), unique("cm")
            created = await client.Create(storage_pb2.CreateRequest(
                key=key(ns, name), object=jsonutil.dumps(configmap(ns, name, a="1"))), timeout=10)
            assert isinstance(created, storage_pb2.ObjectResponse) and created.resource_version > 0
            assert jsonutil.loads(created.object)["metadata"]["resourceVersion"] == str(created.resource_version)
            get = storage_pb2.GetRequest(key=key(ns, name))
            assert await client.Get(get, timeout=10) == await unary.Get(get, timeout=10)
            listed = storage_pb2.ListRequest(key=key(ns))
            assert await client.List(listed, timeout=10) == await unary.List(listed, timeout=10)

            absent = storage_pb2.GetRequest(key=key(ns, "absent"))
            again = storage_pb2.CreateRequest(key=key(ns, name), object=jsonutil.dumps(configmap(ns, name)))
            stale = storage_pb2.UpdateRequest(key=key(ns, name), object=jsonutil.dumps(configmap(ns, name, a="2")),
                                              expected_resource_version=created.resource_version - 1)
            exact = storage_pb2.ListRequest(key=key(ns), resource_version_match="Exact")  # no resourceVersion: 422
            garbage = storage_pb2.CreateRequest(key=key(ns, unique("cm")), object=b"{not json")
            gone = storage_pb2.DeleteRequest(key=key(ns, "absent"))
            cases = [("Get", absent, 404, "NotFound"), ("Create", again, 409, "AlreadyExists"),
                     ("Update", stale, 409, "Conflict"), ("List", exact, 422, "Invalid"),
                     ("Create", garbage, 400, "BadRequest"), ("Delete", gone, 404, "NotFound")]
            for verb, request, code, reason in cases:
                want = await failure(getattr(unary, verb)(request, timeout=10))
                got = await failure(getattr(client, verb)(request, timeout=10))
                assert shape(got) == shape(want), verb
                status = errors.from_rpc_error(got, "storage")
                assert (status.code, status.reason) == (code, reason), verb
                assert status.status() == errors.from_rpc_error(want, "storage").status()
                with pytest.raises(errors.StatusError) as raised:  # through the gateway's one call helper
                    await grpcutil.call("storage", getattr(client, verb), request, timeout=10)
                assert raised.value.status() == status.status()
            causes = errors.from_rpc_error(await failure(client.List(exact, timeout=10)), "storage").details["causes"]
            assert causes and causes[0]["field"] == "resourceVersionMatch"

            updated = await client.Update(storage_pb2.UpdateRequest(
                key=key(ns, name), object=jsonutil.dumps(configmap(ns, name, a="3")),
                expected_resource_version=created.resource_version), timeout=10)
            assert updated.resource_version > created.resource_version
            deleted = await client.Delete(storage_pb2.DeleteRequest(key=key(ns, name)), timeout=10)
            assert jsonutil.loads(deleted.object)["data"] == {"a": "3"}
            assert counting.unary == []  # all of it rode the stream
            # create, get, list; each case twice; the 422 again; update, delete
            assert client.streams[0].calls == 3 + 2 * len(cases) + 1 + 2
        finally:
            await client.close()


async def test_unary_until_the_stream_is_up_and_with_metadata(storage: server.StorageService) -> None:
    address = f"127.0.0.1:{storage.port}"
    async with grpc.aio.insecure_channel(address) as channel:
        client = storageclient.open_client(channel, address, None, streams=True)
        counting = CountingStub(client._stub)
        client._stub = counting
        absent = storage_pb2.GetRequest(key=key("ns", "absent"))
        err = await failure(client.Get(absent, timeout=10))  # not started: no stream yet
        assert err.code() == grpc.StatusCode.NOT_FOUND and counting.unary == ["Get"]
        client.start()
        try:
            await wait_until(lambda: client.streams_up == 1)
            await failure(client.Get(absent, timeout=10, metadata=(("traceparent", "00-" + "1" * 32 + "-"
                                                                     + "2" * 16 + "-01"),)))
            assert counting.unary == ["Get", "Get"]  # metadata to carry: the unary RPC
            await failure(client.Get(absent, timeout=10))
            assert counting.unary == ["Get", "Get"] and client.streams[0].calls == 1
            watch = client.Watch(storage_pb2.WatchRequest(key=key("ns"), resource_version="0"))  # the stub's
            watch.cancel()
            assert counting.unary[-1] == "Watch"
        finally:
            await client.close()
        assert client.streams_up == 0
        await failure(client.Get(absent, timeout=10))
        assert counting.unary == ["Get", "Get", "Watch", "Get"]


async def test_interceptors_keep_every_call_unary() -> None:
    from kapi import observability

    saved = observability.STATE.log_format
    async with grpc.aio.insecure_channel("127.0.0.1:1") as channel:
        assert len(storageclient.open_client(channel, "127.0.0.1:1", None).streams) == 1
        observability.STATE.log_format = "json"  # x-audit-id on every call: only the unary RPC carries it per call
        try:
            assert storageclient.open_client(channel, "127.0.0.1:1", None).streams == []
        finally:
            observability.STATE.log_format = saved


async def test_timeout_is_a_deadline_and_cancels_the_call(paused_etcd: Etcd) -> None:
    service = await start_storage(paused_etcd.endpoint, f"/{unique('to')}/registry")
    address = f"127.0.0.1:{service.port}"
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            unary = storage_pb2_grpc.StorageStub(channel)
            client, counting = await connected(address, channel)
            try:
                request = storage_pb2.GetRequest(key=key("ns", "x"))
                async with Paused(paused_etcd):
                    want = await failure(unary.Get(request, timeout=0.3))
                    start = time.monotonic()
                    got = await failure(client.Get(request, timeout=0.3))
                    assert 0.25 < time.monotonic() - start < 2
                    assert shape(got) == shape(want)
                    status = errors.from_rpc_error(got, "storage")
                    assert (status.code, status.reason) == (504, "Timeout")
                    await wait_until(lambda: not service.servicer.stream_calls, 3)  # storage gave up on it too
                    # A call its caller cancels (the HTTP client went away) is withdrawn on the stream.
                    task = asyncio.create_task(client.Get(request, timeout=30))
                    await wait_until(lambda: len(service.servicer.stream_calls) == 1, 3)
                    task.cancel()
                    await wait_until(lambda: not service.servicer.stream_calls, 3)
                    assert client.streams[0].in_flight == 0
                assert counting.unary == []
                assert (await failure(client.Get(request, timeout=10))).code() == grpc.StatusCode.NOT_FOUND
            finally:
                await client.close()
    finally:
        await service.stop(0)


async def test_broken_stream_fails_its_calls_503_and_reconnects(paused_etcd: Etcd) -> None:
    port = free_port()
    prefix = f"/{unique('br')}/registry"
    service = await start_storage(paused_etcd.endpoint, prefix, "--listen-address", f"127.0.0.1:{port}")
    address = f"127.0.0.1:{port}"
    async with grpc.aio.insecure_channel(address) as channel:
        client, counting = await connected(address, channel)
        try:
            ns, name = unique("ns"), unique("cm")
            async with Paused(paused_etcd):
                pending = asyncio.create_task(client.Create(storage_pb2.CreateRequest(
                    key=key(ns, name), object=jsonutil.dumps(configmap(ns, name))), timeout=30))
                await wait_until(lambda: client.streams[0].in_flight == 1)
                await service.stop(0)
                err = await failure(pending)
            assert err.code() == grpc.StatusCode.UNAVAILABLE
            status = errors.from_rpc_error(err, "storage")
            assert (status.code, status.reason) == (503, "ServiceUnavailable")
            await wait_until(lambda: client.streams_up == 0)
            down = await failure(client.Get(storage_pb2.GetRequest(key=key(ns, name)), timeout=5))
            assert down.code() == grpc.StatusCode.UNAVAILABLE and counting.unary == ["Get"]  # unary while down
            service = await start_storage(paused_etcd.endpoint, prefix, "--listen-address", address)
            await wait_until(lambda: client.streams_up == 1)
            # The broken write was not retried: the stream carried the Create once, in all its sessions. Whether it
            # happened is for the caller to find out, as after a unary call whose connection broke: the paused etcd
            # may hold the txn storage sent it and apply it when resumed, or see the cancellation first.
            assert client.streams[0].calls == 1
            try:
                await client.Get(storage_pb2.GetRequest(key=key(ns, name)), timeout=10)
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.NOT_FOUND
            assert client.streams[0].calls == 2 and counting.unary == ["Get"]
        finally:
            await client.close()
            await service.stop(0)


async def test_replicas_each_get_a_stream_and_share_the_calls(etcd: Any) -> None:
    prefix = f"/{unique('rep')}/registry"
    replicas = [await start_storage(etcd.endpoint, prefix) for _ in range(2)]
    addresses = ",".join(f"127.0.0.1:{r.port}" for r in replicas)
    channel = grpcutil.channel(addresses, None)
    client, counting = await connected(addresses, channel)
    try:
        assert [s.address for s in client.streams] == addresses.split(",")
        assert all(s.channel is not channel for s in client.streams)  # a channel of its own per replica
        ns = unique("ns")
        names = [f"cm-{i}" for i in range(20)]
        await asyncio.gather(*(client.Create(storage_pb2.CreateRequest(
            key=key(ns, n), object=jsonutil.dumps(configmap(ns, n))), timeout=10) for n in names))
        assert [s.calls for s in client.streams] == [10, 10]
        await replicas[0].stop(0)
        await wait_until(lambda: client.streams_up == 1)
        for n in names:  # every read now rides the replica that is up
            await client.Get(storage_pb2.GetRequest(key=key(ns, n)), timeout=10)
        assert [s.calls for s in client.streams] == [10, 30] and counting.unary == []
    finally:
        await client.close()
        await channel.close()
        for r in replicas[1:]:
            await r.stop(0)


async def test_call_stream_on_the_wire(storage: server.StorageService) -> None:
    """The servicer's side: answers by id in completion order, bad calls refused, half-close lets calls finish,
    a cancelled stream cancels its calls."""
    ns = unique("ns")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{storage.port}") as channel:
        stub = storage_pb2_grpc.StorageStub(channel)
        requests = [storage_pb2.CallRequest(id=7, get=storage_pb2.GetRequest(key=key(ns, "absent"))),
                    storage_pb2.CallRequest(id=8),  # no call
                    storage_pb2.CallRequest(id=9, list=storage_pb2.ListRequest(key=key(ns)))]
        call = stub.Call(iter([storage_pb2.CallRequests(requests=requests)]))  # then half-closed
        answers = {r.id: r async for batch in call for r in batch.responses}
        assert sorted(answers) == [7, 8, 9]
        assert answers[7].error.code == grpc.StatusCode.NOT_FOUND.value[0]
        assert jsonutil.loads(answers[7].error.status)["reason"] == "NotFound"
        assert answers[8].error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
        assert answers[8].error.message == "no call in the request"
        assert answers[9].WhichOneof("result") == "list" and list(answers[9].list.items) == []
        assert await call.code() == grpc.StatusCode.OK



async def test_cancelled_stream_cancels_its_calls(paused_etcd: Etcd) -> None:
    service = await start_storage(paused_etcd.endpoint, f"/{unique('cs')}/registry")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
            queue: asyncio.Queue[storage_pb2.CallRequests | None] = asyncio.Queue()

            async def feed() -> AsyncIterator[storage_pb2.CallRequests]:
                while (item := await queue.get()) is not None:
                    yield item
            call = storage_pb2_grpc.StorageStub(channel).Call(feed())
            await call.initial_metadata()
            async with Paused(paused_etcd):
                await queue.put(storage_pb2.CallRequests(requests=[
                    storage_pb2.CallRequest(id=i, get=storage_pb2.GetRequest(key=key("ns", f"x{i}")))
                    for i in range(3)]))
                await wait_until(lambda: len(service.servicer.stream_calls) == 3, 5)
                call.cancel()
                await wait_until(lambda: not service.servicer.stream_calls, 5)
    finally:
        await service.stop(0)
