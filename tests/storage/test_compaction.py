"""410 Expired after etcd compaction: continue tokens, Exact lists, watches.

Compaction is global to an etcd, so these tests run against their own etcd
(started like the session fixture) rather than compacting the shared one
under other suites' watches.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from kapi import errors, jsonutil
from kapi.duration import parse_duration
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.storage.compactor import COMPACT_REV_KEY, Compactor
from services.storage.etcd import CompactedError
from services.storage.keys import ObjectKey, decode_continue
from services.storage.server import StorageService
from tests.conftest import Etcd  # the session fixture's etcd launcher

from .conftest import start_storage
from .helpers import configmap, create, key, status_of, unique

pytestmark = pytest.mark.timeout(60)

INCONSISTENT = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")


@pytest.fixture(scope="module")
async def compacting() -> AsyncIterator[tuple[StorageService, storage_pb2_grpc.StorageStub]]:
    """A private etcd + storage server + stub."""
    with tempfile.TemporaryDirectory(prefix="kapi-etcd-compact-") as tmp:
        etcd = Etcd(Path(tmp))
        try:
            service = await start_storage(etcd.endpoint, "/registry")
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
            yield service, storage_pb2_grpc.StorageStub(channel)
            await channel.close()
            await service.stop(0)
        finally:
            etcd.stop()


async def _compact_now(service: StorageService) -> int:
    revision = (await service.etcd.range(b"/")).header.revision
    await service.store.compact(revision)
    return revision


async def test_compacted_continue_token_is_expired(compacting: Any) -> None:
    service, stub = compacting
    ns = unique("c")
    for i in range(3):
        await create(stub, configmap(ns, f"cm{i}"))
    first = await stub.List(storage_pb2.ListRequest(key=key(ns), limit=1), timeout=10)
    await create(stub, configmap(ns, "later"))
    await _compact_now(service)
    request = storage_pb2.ListRequest(key=key(ns), limit=1)
    setattr(request, "continue", getattr(first, "continue"))  # noqa: B010
    err = await status_of(stub.List(request, timeout=10))
    assert (err.code, err.reason, err.message) == (410, "Expired", INCONSISTENT)
    # the Status carries a token from the same key at revision -1 (handleCompactedErrorForPaging): it resumes the
    # list at the latest revision, inconsistently
    token = err.status()["metadata"]["continue"]
    assert decode_continue(token, service.store.keys.collection(ObjectKey("", "configmaps", ns)))[1] == -1
    resumed = storage_pb2.ListRequest(key=key(ns), limit=10)
    setattr(resumed, "continue", token)  # noqa: B010
    rest = await stub.List(resumed, timeout=10)
    assert [jsonutil.loads(i)["metadata"]["name"] for i in rest.items] == ["cm1", "cm2", "later"]


async def test_exact_list_at_compacted_revision_is_expired(compacting: Any) -> None:
    service, stub = compacting
    ns = unique("c")
    old = int((await create(stub, configmap(ns, "a")))["metadata"]["resourceVersion"])
    await create(stub, configmap(ns, "b"))
    compacted = await _compact_now(service)
    err = await status_of(stub.List(storage_pb2.ListRequest(
        key=key(ns), resource_version=str(old), resource_version_match="Exact"), timeout=10))
    assert (err.code, err.reason) == (410, "Expired")
    assert err.message == "The resourceVersion for the provided list is too old."  # etcd3's interpretListError
    assert compacted > old


async def test_watch_from_compacted_revision_ends_with_expired_status(compacting: Any) -> None:
    service, stub = compacting
    ns = unique("c")
    old = int((await create(stub, configmap(ns, "a")))["metadata"]["resourceVersion"])
    await create(stub, configmap(ns, "b"))
    await create(stub, configmap(ns, "c"))
    compacted = await _compact_now(service)  # revision old + 1 (the first one the watch needs) is gone
    call = stub.Watch(storage_pb2.WatchRequest(key=key(ns), resource_version=str(old)))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await asyncio.wait_for(call.read(), 10)
    assert info.value.code() == grpc.StatusCode.OUT_OF_RANGE
    assert any(k == errors.STATUS_METADATA_KEY for k, _ in info.value.trailing_metadata())
    err = errors.from_rpc_error(info.value, "storage")
    assert (err.code, err.reason) == (410, "Expired")
    assert err.message == f"too old resource version: {old} ({compacted})"


async def test_compaction_expires_cached_watches_older_than_the_compacted_revision(compacting: Any) -> None:
    service, stub = compacting
    ns = unique("c")
    start = (await stub.List(storage_pb2.ListRequest(key=key(ns)), timeout=10)).resource_version
    await create(stub, configmap(ns, "a"))
    compacted = await _compact_now(service)
    err = await status_of(stub.Watch(storage_pb2.WatchRequest(key=key(ns), resource_version=str(start))).read())
    assert (err.code, err.reason, err.message) == (410, "Expired", f"too old resource version: {start} ({compacted})")
    live = stub.Watch(storage_pb2.WatchRequest(key=key(ns), resource_version=str(compacted)))  # still servable
    await stub.Update(storage_pb2.UpdateRequest(key=key(ns, "a"), object=jsonutil.dumps(configmap(ns, "a", x="1"))),
                      timeout=10)
    message = await asyncio.wait_for(live.read(), 10)
    assert [e.type for e in message.events] == ["MODIFIED"]
    live.cancel()


async def test_one_replica_compacts_per_interval_and_the_other_learns_the_revision(compacting: Any) -> None:
    service, stub = compacting
    seen: dict[str, list[int]] = {"a": [], "b": []}
    a = Compactor(service.etcd, 1.0, seen["a"].append)
    b = Compactor(service.etcd, 1.0, seen["b"].append)
    assert await a.run_once() == 0  # bootstrap: records the revision, compacts nothing
    first = (await service.etcd.range(COMPACT_REV_KEY)).kvs[0]
    assert await b.run_once() == int(first.value)  # lost the race; learns the last compacted revision
    await create(stub, configmap(unique("c"), "x"))
    target = a._revision
    assert await a.run_once() == target  # compacts to the revision it saw one interval ago
    assert await b.run_once() == target
    assert seen["a"][-1] == target and seen["b"][-1] == target
    with pytest.raises(CompactedError):
        await service.etcd.range(b"/", revision=target - 1)


@pytest.mark.parametrize("text, seconds", [("5m", 300.0), ("90s", 90.0), ("1h30m", 5400.0), ("0", 0.0),
                                           ("250ms", 0.25), ("12", 12.0)])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "-1", "m5", "5m junk"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)
