"""Graceful deletion with finalizers (kube's generic registry: BeforeDelete, ShouldDeleteDuringUpdate)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kapi import jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

from .helpers import configmap, create, key, status_of, unique

pytestmark = pytest.mark.timeout(60)

Stub = storage_pb2_grpc.StorageStub
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def _with_finalizers(ns: str, name: str, *finalizers: str) -> dict[str, Any]:
    obj = configmap(ns, name)
    obj["metadata"]["finalizers"] = list(finalizers)
    return obj


async def _put(stub: Stub, obj: dict[str, Any]) -> storage_pb2.ObjectResponse:
    meta = obj["metadata"]
    return await stub.Update(storage_pb2.UpdateRequest(key=key(meta["namespace"], meta["name"]),
                                                       object=jsonutil.dumps(obj)), timeout=10)


async def test_delete_with_finalizers_marks_then_last_finalizer_removes(stub: Stub) -> None:
    ns = unique("del")
    await create(stub, _with_finalizers(ns, "a", "example.com/one", "example.com/two"))
    marked = await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "a")), timeout=10)
    assert marked.deletion_pending
    obj = jsonutil.loads(marked.object)
    assert RFC3339.match(obj["metadata"]["deletionTimestamp"])
    assert obj["metadata"]["deletionGracePeriodSeconds"] == 0
    assert obj["metadata"]["resourceVersion"] == str(marked.resource_version)
    stored = jsonutil.loads((await stub.Get(storage_pb2.GetRequest(key=key(ns, "a")), timeout=10)).object)
    assert stored == obj

    again = await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "a")), timeout=10)  # already deleting
    assert again.deletion_pending and again.resource_version == marked.resource_version

    obj["metadata"]["finalizers"] = ["example.com/two"]  # one left: still there
    await _put(stub, obj)
    still = jsonutil.loads((await stub.Get(storage_pb2.GetRequest(key=key(ns, "a")), timeout=10)).object)
    assert still["metadata"]["finalizers"] == ["example.com/two"]

    still["metadata"]["finalizers"] = []
    gone = await _put(stub, still)
    assert jsonutil.loads(gone.object)["metadata"]["resourceVersion"] == str(gone.resource_version)
    err = await status_of(stub.Get(storage_pb2.GetRequest(key=key(ns, "a")), timeout=10))
    assert err.code == 404


async def test_delete_without_finalizers_removes(stub: Stub) -> None:
    ns = unique("del")
    await create(stub, configmap(ns, "a"))
    reply = await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "a")), timeout=10)
    assert not reply.deletion_pending
    assert (await status_of(stub.Get(storage_pb2.GetRequest(key=key(ns, "a")), timeout=10))).code == 404


async def test_update_dropping_finalizers_of_a_live_object_keeps_it(stub: Stub) -> None:
    ns = unique("del")
    created = await create(stub, _with_finalizers(ns, "a", "example.com/one"))
    created["metadata"]["finalizers"] = []
    await _put(stub, created)
    got = jsonutil.loads((await stub.Get(storage_pb2.GetRequest(key=key(ns, "a")), timeout=10)).object)
    assert got["metadata"]["finalizers"] == []


async def test_finishing_a_deletion_honours_a_stale_resource_version(stub: Stub) -> None:
    ns = unique("del")
    await create(stub, _with_finalizers(ns, "a", "example.com/one"))
    marked = await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "a")), timeout=10)
    obj = jsonutil.loads(marked.object)
    obj["metadata"]["finalizers"] = []
    err = await status_of(stub.Update(storage_pb2.UpdateRequest(
        key=key(ns, "a"), object=jsonutil.dumps(obj), expected_resource_version=marked.resource_version - 1),
        timeout=10))
    assert err.code == 409
