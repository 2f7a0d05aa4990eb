"""Storage metrics and tracing: etcd_request_duration_seconds{operation,type}, apiserver_storage_objects{resource},
and etcd call spans (only with a tracer), against the session's real etcd."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client import REGISTRY, generate_latest

from kapi import jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.storage.etcd import EtcdClient, FutureRevisionError, parse_endpoints
from services.storage.keys import KeySpace
from services.storage.server import StorageService
from tests.storage.helpers import configmap, create, key, unique


def sample(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def count(operation: str, type_: str) -> float:
    return sample("etcd_request_duration_seconds_count", {"operation": operation, "type": type_})


@pytest.mark.parametrize("etcd_key,expected", [
    (b"/registry/pods/demo/web", "pods"),
    (b"/registry/pods/", "pods"),
    (b"/registry/namespaces/demo", "namespaces"),
    (b"/registry/apps/deployments/demo/web", "deployments.apps"),
    (b"/registry/rbac.authorization.k8s.io/clusterroles/admin", "clusterroles.rbac.authorization.k8s.io"),
    (b"/registry/stable.example.com/crontabs/demo/x", "crontabs.stable.example.com"),
    (b"/registry/widgets/demo/x", "widgets"),  # unknown core resource stays core
    (b"/other/pods/demo/web", ""),
    (b"compact_rev_key", ""),
])
def test_type_of(etcd_key: bytes, expected: str):
    assert KeySpace("/registry").type_of(etcd_key) == expected


@pytest.fixture
async def client(etcd: Any) -> AsyncIterator[EtcdClient]:
    c = EtcdClient(parse_endpoints(etcd.endpoint))
    c.request_type = KeySpace(f"/kapi-metrics-{uuid.uuid4().hex[:8]}").type_of
    yield c
    await c.close()


async def test_etcd_request_duration_by_operation_and_type(client: EtcdClient):
    assert client.tracer is None  # tracing off: no spans
    prefix = client.request_type.__self__.prefix.encode()  # type: ignore[attr-defined]
    obj = prefix + b"/apps/deployments/demo/web"
    calls = {"create": 0.0, "get": 0.0, "list": 0.0, "update": 0.0, "delete": 0.0}
    before = {op: count(op, "deployments.apps") for op in calls}
    created = await client.create(obj, b"{}")
    await client.range(obj)
    await client.range(prefix + b"/apps/deployments/", prefix + b"/apps/deployments0")
    await client.update(obj, b'{"a":1}', created.header.revision)
    await client.delete(obj)
    after = {op: count(op, "deployments.apps") for op in calls}
    assert {op: after[op] - before[op] for op in calls} == {op: 1.0 for op in calls}
    assert sample("etcd_requests_total", {"operation": "get", "type": "deployments.apps"}) >= 1
    text = generate_latest(REGISTRY).decode()
    assert 'etcd_request_duration_seconds_bucket{le="0.005",operation="create",type="deployments.apps"}' in text


async def test_storage_service_metrics(storage: StorageService, stub: storage_pb2_grpc.StorageStub):
    """Through the storage service: the etcd type is the resource, and the watch cache's count is exported."""
    ns = unique("metrics")
    before = count("create", "configmaps")
    for i in range(3):
        await create(stub, configmap(ns, f"cm-{i}"))
    assert count("create", "configmaps") - before == 3
    # A list at resourceVersion 0 starts (and is served by) the configmaps watch cache.
    await stub.List(storage_pb2.ListRequest(key=key(ns), resource_version="0"), timeout=10)
    total = len((await stub.List(storage_pb2.ListRequest(key=key()), timeout=10)).items)
    for _ in range(100):
        if sample("apiserver_storage_objects", {"resource": "configmaps"}) == total:
            break
        await asyncio.sleep(0.05)
    assert sample("apiserver_storage_objects", {"resource": "configmaps"}) == total >= 3
    await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "cm-0")), timeout=10)
    for _ in range(100):
        if sample("apiserver_storage_objects", {"resource": "configmaps"}) == total - 1:
            break
        await asyncio.sleep(0.05)
    assert sample("apiserver_storage_objects", {"resource": "configmaps"}) == total - 1
    assert "# TYPE apiserver_storage_objects gauge" in generate_latest(REGISTRY).decode()


async def test_etcd_spans_with_a_tracer(client: EtcdClient):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client.tracer = provider.get_tracer("test")
    prefix = client.request_type.__self__.prefix.encode()  # type: ignore[attr-defined]
    obj = prefix + b"/pods/demo/web"
    with client.tracer.start_as_current_span("request") as parent:
        created = await client.create(obj, jsonutil.dumps({"kind": "Pod"}))
        await client.range(prefix + b"/pods/", prefix + b"/pods0")
    with pytest.raises(FutureRevisionError):
        await client.range(obj, revision=created.header.revision + 1000)  # a future revision
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"request", "etcd create", "etcd list", "etcd get"}
    create_span = spans["etcd create"]
    assert create_span.kind == SpanKind.CLIENT
    assert create_span.parent is not None and create_span.parent.span_id == parent.get_span_context().span_id
    assert dict(create_span.attributes or {}) == {
        "db.system.name": "etcd", "db.operation.name": "create", "k8s.resource": "pods",
        "etcd.key": obj.decode(), "etcd.revision": created.header.revision}
    assert spans["etcd list"].attributes["etcd.range_end"] == (prefix + b"/pods0").decode()  # type: ignore[index]
    assert spans["etcd get"].status.status_code == StatusCode.ERROR
    await client.delete(obj)


async def test_a_stopped_storage_reports_no_objects(etcd: Any) -> None:
    """apiserver_storage_objects takes the largest count of the watch-cache sets alive in the process; a stopped
    server's set must drop out at once (it lingered until garbage collection and outvoted the live server)."""
    from tests.storage.conftest import start_storage

    service = await start_storage(etcd.endpoint, f"/kapi-stopped-{uuid.uuid4().hex[:8]}/registry")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    channel_stub = storage_pb2_grpc.StorageStub(channel)
    ns = unique("stopped")
    for i in range(2):
        await create(channel_stub, configmap(ns, f"cm-{i}"))
    await channel_stub.List(storage_pb2.ListRequest(key=key(ns), resource_version="0"), timeout=10)
    caches = service.store.caches
    assert caches is not None
    for _ in range(100):
        if dict(caches.object_counts()).get("configmaps", 0) >= 2:
            break
        await asyncio.sleep(0.05)
    assert dict(caches.object_counts())["configmaps"] >= 2
    await channel.close()
    await service.stop(0)
    assert caches.object_counts() == []
