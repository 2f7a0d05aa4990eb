"""Concurrency against the real etcd: writers with conflict retries, watchers, replicas, etcd restarts."""

from __future__ import annotations

import asyncio
import random
import subprocess
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest

from kapi import errors, jsonutil
from kapi.local import binaries
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from tests.conftest import Etcd, _wait_port

from .conftest import start_storage
from .helpers import configmap, create, key, status_of, unique
from .test_watch import Watcher, rv_of

pytestmark = pytest.mark.timeout(90)

Stub = storage_pb2_grpc.StorageStub
WRITERS, WATCHERS, OBJECTS, UPDATES = 6, 4, 3, 10  # each writer bumps each object's counter UPDATES times


async def _increment(stub: Stub, ns: str, name: str, writer: int, rng: random.Random) -> int:
    """Read-modify-write with retry on 409 Conflict (guaranteed update); returns the committed revision."""
    while True:
        current = await stub.Get(storage_pb2.GetRequest(key=key(ns, name)), timeout=10)
        obj = jsonutil.loads(current.object)
        obj["data"]["count"] = str(int(obj["data"]["count"]) + 1)
        obj["data"][f"w{writer}"] = str(int(obj["data"].get(f"w{writer}", "0")) + 1)
        try:
            reply = await stub.Update(storage_pb2.UpdateRequest(
                key=key(ns, name), object=jsonutil.dumps(obj), expected_resource_version=current.resource_version),
                timeout=10)
            return reply.resource_version
        except grpc.aio.AioRpcError as exc:
            if errors.from_rpc_error(exc, "storage").code != 409:
                raise
            await asyncio.sleep(rng.random() * 0.005)


async def test_writers_with_conflict_retries_and_watchers_see_every_change_once_in_order(stub: Stub) -> None:
    ns = unique("cc")
    for i in range(OBJECTS):
        await create(stub, configmap(ns, f"o{i}", count="0"))
    start = await rv_of(stub, ns)
    watchers = [Watcher(stub, key(ns), resource_version=str(start)) for _ in range(WATCHERS)]
    rng = random.Random(7)

    async def writer(w: int) -> list[tuple[str, int]]:
        done = []
        for _ in range(UPDATES):
            for i in range(OBJECTS):
                done.append((f"o{i}", await _increment(stub, ns, f"o{i}", w, rng)))
        return done

    acknowledged = [rv for results in await asyncio.gather(*(writer(w) for w in range(WRITERS))) for _, rv in results]
    total = WRITERS * OBJECTS * UPDATES
    assert len(set(acknowledged)) == total  # every acknowledged write is its own revision
    for watcher in watchers:
        events = await watcher.events(total, timeout=10)
        assert [t for t, _, _ in events] == ["MODIFIED"] * total
        revisions = [rv for _, _, rv in events]
        assert revisions == sorted(revisions) and sorted(revisions) == sorted(acknowledged)  # each once, in order
        await watcher.quiet(0.2)
        watcher.cancel()
    final = await stub.List(storage_pb2.ListRequest(key=key(ns)), timeout=10)
    for raw in final.items:
        data = jsonutil.loads(raw)["data"]
        assert data["count"] == str(WRITERS * UPDATES)
        assert all(data[f"w{w}"] == str(UPDATES) for w in range(WRITERS))


async def test_two_replicas_answer_the_same(etcd: Any) -> None:
    prefix = f"/kapi-replicas-{uuid.uuid4().hex[:8]}/registry"
    replicas = [await start_storage(etcd.endpoint, prefix) for _ in range(2)]
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{r.port}") for r in replicas]
    stubs = [storage_pb2_grpc.StorageStub(c) for c in channels]
    try:
        ns = unique("rep")
        watches = [Watcher(s, key(ns), resource_version=str(await rv_of(s, ns))) for s in stubs]
        for i in range(4):  # writes alternate between replicas
            await create(stubs[i % 2], configmap(ns, f"cm{i}"))
        await stubs[1].Delete(storage_pb2.DeleteRequest(key=key(ns, "cm0")), timeout=10)
        lists = [await s.List(storage_pb2.ListRequest(key=key(ns)), timeout=10) for s in stubs]
        assert lists[0].resource_version == lists[1].resource_version
        assert list(lists[0].items) == list(lists[1].items)
        for s in stubs:  # rv=0 from each replica's own cache converges on the same answer
            for _ in range(50):
                cached = await s.List(storage_pb2.ListRequest(key=key(ns), resource_version="0"), timeout=10)
                if list(cached.items) == list(lists[0].items):
                    break
                await asyncio.sleep(0.05)
            assert list(cached.items) == list(lists[0].items)
        seen = [await w.events(5) for w in watches]
        assert seen[0] == seen[1]
        err = [await status_of(s.Get(storage_pb2.GetRequest(key=key(ns, "cm0")), timeout=10)) for s in stubs]
        assert [e.code for e in err] == [404, 404]
        for w in watches:
            w.cancel()
    finally:
        for c in channels:
            await c.close()
        for r in replicas:
            await r.stop(0)


async def test_etcd_restart_ends_watches_with_503_and_the_cache_resynchronises(tmp_path: Path) -> None:
    etcd = Etcd(tmp_path)
    service = await start_storage(etcd.endpoint, "/registry")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
            stub = storage_pb2_grpc.StorageStub(channel)
            acknowledged = await create(stub, configmap("ns", "before"))
            watcher = Watcher(stub, key("ns"), resource_version="0")
            await watcher.events(1)
            etcd.stop()
            err = await status_of(asyncio.wait_for(watcher.call.read(), 15))
            assert (err.code, err.reason) == (503, "ServiceUnavailable")
            down = await status_of(stub.Get(storage_pb2.GetRequest(key=key("ns", "before")), timeout=15))
            assert down.code in (503, 504)
            etcd = _restart(tmp_path, service.etcd.targets[0])  # same data and port: everything acknowledged
            for _ in range(100):
                try:
                    got = await stub.Get(storage_pb2.GetRequest(key=key("ns", "before")), timeout=5)
                    break
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(0.1)
            assert jsonutil.loads(got.object) == acknowledged
            later = await create(stub, configmap("ns", "after"))
            for _ in range(100):  # the cache follows etcd again: rv=0 sees the new object
                cached = await stub.List(storage_pb2.ListRequest(key=key("ns"), resource_version="0"), timeout=5)
                if len(cached.items) == 2:
                    break
                await asyncio.sleep(0.1)
            assert [jsonutil.loads(i) for i in cached.items] == [later, acknowledged]  # key order
    finally:
        await service.stop(0)
        etcd.stop()


def _restart(data_dir: Path, client: str) -> Etcd:
    """etcd again on the stopped instance's data dir and client address (``host:port``)."""
    etcd = Etcd.__new__(Etcd)
    port = int(client.rsplit(":", 1)[1])
    etcd.client_port = port
    etcd.address = client
    etcd.endpoint = f"http://{client}"
    etcd.log = open(data_dir / "etcd2.log", "wb")  # noqa: SIM115 - closed by stop()
    etcd.proc = subprocess.Popen(
        [str(binaries.etcd()), "--data-dir", str(data_dir / "data"), "--name", "test",
         "--listen-client-urls", etcd.endpoint, "--advertise-client-urls", etcd.endpoint,
         "--listen-peer-urls", "http://127.0.0.1:0", "--initial-cluster-state", "existing"],
        stdout=etcd.log, stderr=subprocess.STDOUT)
    _wait_port(port)
    return etcd
