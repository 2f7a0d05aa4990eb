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

from kapi import errors
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.storage.server import StorageService
from tests.conftest import Etcd  # the session fixture's etcd launcher

from .conftest import start_storage
from .helpers import configmap, create, key, status_of, unique

pytestmark = pytest.mark.timeout(60)

INCONSISTENT = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue value from the response to retrieve the remainder of the "
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
    await service.etcd.compact(revision)
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


async def test_exact_list_at_compacted_revision_is_expired(compacting: Any) -> None:
    service, stub = compacting
    ns = unique("c")
    old = int((await create(stub, configmap(ns, "a")))["metadata"]["resourceVersion"])
    await create(stub, configmap(ns, "b"))
    compacted = await _compact_now(service)
    err = await status_of(stub.List(storage_pb2.ListRequest(
        key=key(ns), resource_version=str(old), resource_version_match="Exact"), timeout=10))
    assert (err.code, err.reason) == (410, "Expired")
    assert err.message == f"too old resource version: {old} ({compacted})"


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
