"""The admission service through real gRPC, over a real storage service and the session's real etcd."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any

import grpc
import pytest

from kapi import errors, flags, grpcutil, jsonutil, strategy
from kapi.attributes import Attributes, UserInfo
from kapi.resources import REGISTRY
from kapi_proto.kapi.admission.v1 import admission_pb2, admission_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.admission import server as admission_server
from services.admission.namespaces import NamespaceCache
from services.storage import server as storage_server

USER = UserInfo("alice", groups=("system:authenticated",))
NAMESPACES = REGISTRY.get("", "v1", "namespaces")


class Stack:
    """storage + admission, with stubs for both."""

    def __init__(self, storage: storage_server.StorageService, admission: admission_server.Running,
                 channel: grpc.aio.Channel):
        self.storage_service, self.admission = storage, admission
        self.storage = storage_pb2_grpc.StorageStub(channel)
        self.admit_stub = admission_pb2_grpc.AdmissionStub(channel_to(admission.port))

    async def create_namespace(self, name: str, phase: str = "Active") -> int:
        obj = strategy.prepare_for_create({"metadata": {"name": name}}, NAMESPACES, "", datetime.now())
        obj["status"]["phase"] = phase
        reply: Any = await self.storage.Create(storage_pb2.CreateRequest(
            key=storage_pb2.ResourceKey(resource="namespaces", name=name), object=jsonutil.dumps(obj)))
        return int(reply.resource_version)

    async def admit(self, operation: str, resource: str, namespace: str, obj: dict[str, Any] | None, *,
                    name: str = "", kind: str = "ConfigMap", old: dict[str, Any] | None = None,
                    field_validation: str = "") -> admission_pb2.AdmitResponse:
        attrs = Attributes(USER, operation.lower(), True, api_version="v1", resource=resource, namespace=namespace,
                           name=name)
        reply: Any = await grpcutil.call("admission", self.admit_stub.Admit, admission_pb2.AdmitRequest(
            operation=operation, attributes=attrs.to_proto(), kind=kind,
            object=jsonutil.dumps(obj) if obj is not None else b"",
            old_object=jsonutil.dumps(old) if old is not None else b"", field_validation=field_validation),
            timeout=10)
        return reply

    async def refusal(self, *args: Any, **kwargs: Any) -> errors.StatusError:
        with pytest.raises(errors.StatusError) as exc:
            await self.admit(*args, **kwargs)
        return exc.value


def channel_to(port: int) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(f"127.0.0.1:{port}")


@pytest.fixture(scope="module")
async def stack(etcd: Any) -> AsyncIterator[Stack]:
    storage_args = flags.parse("storage", ["--etcd-servers", etcd.endpoint,
                                           "--etcd-prefix", f"/kapi-admission-{uuid.uuid4().hex[:8]}/registry"])
    storage = await storage_server.start(storage_args, bookmark_interval=0.5)
    args = flags.parse("admission", ["--storage-address", f"127.0.0.1:{storage.port}"])
    admission = await admission_server.start(args, admission_server.plugin_names(args))
    channel = channel_to(storage.port)
    stack = Stack(storage, admission, channel)
    await stack.create_namespace("demo")
    await stack.create_namespace("going", "Terminating")
    await stack.create_namespace("kube-system")
    yield stack
    await admission.stop(0)
    await channel.close()
    await storage.stop(0)


async def _until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


def _cm(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}, **extra}


async def test_create_in_existing_namespace(stack: Stack) -> None:
    reply = await stack.admit("CREATE", "configmaps", "demo", _cm("app"))
    obj = jsonutil.loads(reply.object)
    assert obj["metadata"]["namespace"] == "demo"
    assert obj["metadata"]["uid"] and obj["metadata"]["creationTimestamp"].endswith("Z")
    assert list(reply.warnings) == []


async def test_create_served_from_the_cache(stack: Stack) -> None:
    cache = stack.admission.namespaces
    await _until(lambda: cache.cached("demo") is not None)
    before = cache.live_lookups
    for i in range(5):
        await stack.admit("CREATE", "configmaps", "demo", _cm(f"c{i}"))
    assert cache.live_lookups == before  # no storage round trip per create


async def test_create_in_missing_namespace_is_404(stack: Stack) -> None:
    err = await stack.refusal("CREATE", "configmaps", "nowhere", _cm("app"))
    assert (err.code, err.reason, err.message) == (404, "NotFound", 'namespaces "nowhere" not found')


async def test_create_in_terminating_namespace_is_403(stack: Stack) -> None:
    err = await stack.refusal("CREATE", "configmaps", "going", _cm("app"))
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == ('configmaps "app" is forbidden: unable to create new content in namespace going because '
                           "it is being terminated")


async def test_delete_kube_system_is_403(stack: Stack) -> None:
    old = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}
    err = await stack.refusal("DELETE", "namespaces", "", None, name="kube-system", kind="Namespace", old=old)
    assert (err.code, err.message) == (403, 'namespaces "kube-system" is forbidden: this namespace may not be deleted')


async def test_invalid_name_is_422(stack: Stack) -> None:
    err = await stack.refusal("CREATE", "configmaps", "demo", _cm("Bad_Name"))
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message.startswith('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a '
                                  "lowercase RFC 1123 subdomain")
    assert err.details["causes"][0]["field"] == "metadata.name"


async def test_unknown_fields(stack: Stack) -> None:
    reply = await stack.admit("CREATE", "configmaps", "demo", _cm("extra", spec={"x": 1}))
    assert list(reply.warnings) == ['unknown field "spec"'] and "spec" not in jsonutil.loads(reply.object)
    err = await stack.refusal("CREATE", "configmaps", "demo", _cm("extra", spec={"x": 1}), field_validation="Strict")
    assert (err.code, err.message) == (400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict '
                                            'decoding error: unknown field "spec"')


async def test_new_namespace_is_admitted_at_once(stack: Stack) -> None:
    await stack.create_namespace("fresh")
    await stack.admit("CREATE", "configmaps", "fresh", _cm("app"))  # cache or live lookup: never a false 404
    await _until(lambda: stack.admission.namespaces.cached("fresh") is not None)


async def test_watch_follows_phase_changes(stack: Stack) -> None:
    await stack.create_namespace("soon-gone")
    cache = stack.admission.namespaces
    await _until(lambda: cache.cached("soon-gone") is not None)
    current: Any = await stack.storage.Get(storage_pb2.GetRequest(
        key=storage_pb2.ResourceKey(resource="namespaces", name="soon-gone")))
    obj = jsonutil.loads(current.object)
    obj["status"]["phase"] = "Terminating"
    await stack.storage.Update(storage_pb2.UpdateRequest(
        key=storage_pb2.ResourceKey(resource="namespaces", name="soon-gone"), object=jsonutil.dumps(obj)))
    await _until(lambda: (cache.cached("soon-gone") or {}).get("status", {}).get("phase") == "Terminating")
    err = await stack.refusal("CREATE", "configmaps", "soon-gone", _cm("app"))
    assert err.code == 403
    await stack.storage.Delete(storage_pb2.DeleteRequest(
        key=storage_pb2.ResourceKey(resource="namespaces", name="soon-gone")))
    await _until(lambda: cache.cached("soon-gone") is None)
    assert (await stack.refusal("CREATE", "configmaps", "soon-gone", _cm("app"))).code == 404


async def test_cache_relists_after_compaction(stack: Stack) -> None:
    channel = channel_to(stack.storage_service.port)
    cache = NamespaceCache(storage_pb2_grpc.StorageStub(channel), retry_delay=0.05)
    try:
        await cache.list()
        assert cache.cached("demo") is not None and cache.lists == 1
        await stack.create_namespace("after-list")
        revision = await stack.create_namespace("after-list-2")
        await stack.storage_service.etcd.compact(revision)
        cache.start()  # watches from the listed revision, which is compacted: 410 -> re-list
        await _until(lambda: cache.lists == 2)
        assert cache.cached("after-list") is not None and cache.cached("after-list-2") is not None
    finally:
        await cache.stop()
        await channel.close()
