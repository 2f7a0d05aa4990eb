"""Custom resources read back with their CRD version's schema defaults (services/gateway/crddefaults.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kapi import jsonutil
from kapi.crd import defaults as crddefaults
from kapi.resources import Resource
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import conversion
from services.gateway.crddefaults import DefaultingStorage, schema_with_defaults

STATUS_DEFAULT = {"conditions": [{"type": "Accepted", "status": "Unknown", "reason": "Pending",
                                  "message": "Waiting for controller", "lastTransitionTime": "1970-01-01T00:00:00Z"}]}


def _crd(spec_props: dict[str, Any], versions: tuple[str, ...] = ("v1",)) -> dict[str, Any]:
    sch = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": spec_props},
        "status": {"type": "object", "default": STATUS_DEFAULT,
                   "x-kubernetes-preserve-unknown-fields": True}}}
    return {"metadata": {"name": "widgets.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [{"name": v, "served": True, "storage": i == 0, "subresources": {"status": {}},
                      "schema": {"openAPIV3Schema": sch}} for i, v in enumerate(versions)]}}


WITHOUT_DEFAULT = _crd({"size": {"type": "integer"}})
WITH_DEFAULT = _crd({"size": {"type": "integer"}, "color": {"type": "string", "default": "blue"}})
STORED = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"},
          "spec": {"size": 3}}


class FakeStorage:
    """The storage stub's shape, answering every read with the stored bytes (no etcd: the wrapper is pure)."""

    def __init__(self, stored: bytes):
        self.stored = stored

    async def Get(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        return storage_pb2.ObjectResponse(object=self.stored)

    async def Create(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        return storage_pb2.ObjectResponse(object=request.object)

    async def List(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        return storage_pb2.ListResponse(items=[self.stored, self.stored])

    def Watch(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        stored = self.stored

        class Call:
            def __aiter__(self) -> Any:
                return self._gen()

            async def _gen(self) -> Any:
                yield storage_pb2.WatchResponse(events=[
                    storage_pb2.WatchEvent(type="ADDED", object=stored),
                    storage_pb2.WatchEvent(type="BOOKMARK", object=b'{"kind":"Widget"}')])

            def cancel(self) -> bool:
                return True
        return Call()


@dataclasses.dataclass
class FakeBackends:
    storage: Any
    custom_resources: Any = None


class FakeCustomResources:
    def __init__(self, definition: dict[str, Any]):
        self.definition = definition

    def crd_of(self, resource: Resource) -> dict[str, Any] | None:
        return self.definition if resource.group == "example.com" else None


def _backends(definition: dict[str, Any], stored: dict[str, Any] = STORED) -> Any:
    return FakeBackends(FakeStorage(jsonutil.dumps(stored)), FakeCustomResources(definition))


RESOURCE = Resource("example.com", "v1", "widgets", "Widget", True, subresources=("status",))
KEY = storage_pb2.ResourceKey(group="example.com", resource="widgets", namespace="ns", name="w")


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "object"}, False),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, False),
    ({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}, True),
    ({"properties": {"a": {"properties": {"b": {"default": 1}}}}}, True),
    ({"properties": {"a": {"items": {"properties": {"b": {"default": 1}}}}}}, True),
    ({"properties": {"a": {"additionalProperties": {"properties": {"b": {"default": 1}}}}}}, True),
    ({"properties": {"a": {"allOf": [{"properties": {"b": {"default": 1}}}]}}}, False),
])
def test_has_defaults(schema: dict[str, Any], expected: bool) -> None:
    assert crddefaults.has_defaults(schema) is expected


async def test_status_default_applied_on_get() -> None:
    backends = conversion.backends_for(_backends(WITHOUT_DEFAULT), RESOURCE)
    assert isinstance(backends.storage, DefaultingStorage)
    got = jsonutil.loads((await backends.storage.Get(storage_pb2.GetRequest(key=KEY))).object)
    assert got["status"] == STATUS_DEFAULT
    assert got["spec"] == {"size": 3}
    created = await backends.storage.Create(storage_pb2.CreateRequest(key=KEY, object=jsonutil.dumps(STORED)))
    assert jsonutil.loads(created.object)["status"] == STATUS_DEFAULT


async def test_default_added_later_shows_on_get_list_watch() -> None:
    stored = {**STORED, "status": {"conditions": []}}  # status present: its default does not apply
    before = conversion.backends_for(_backends(WITHOUT_DEFAULT, stored), RESOURCE)
    assert jsonutil.loads((await before.storage.Get(storage_pb2.GetRequest(key=KEY))).object)["spec"] == {"size": 3}
    after = conversion.backends_for(_backends(WITH_DEFAULT, stored), RESOURCE)
    got = jsonutil.loads((await after.storage.Get(storage_pb2.GetRequest(key=KEY))).object)
    assert got["spec"] == {"size": 3, "color": "blue"}
    assert got["status"] == {"conditions": []}
    listed = await after.storage.List(storage_pb2.ListRequest(key=KEY))
    assert [jsonutil.loads(i)["spec"]["color"] for i in listed.items] == ["blue", "blue"]
    batches = [b async for b in after.storage.Watch(storage_pb2.WatchRequest(key=KEY))]
    events = batches[0].events
    assert jsonutil.loads(events[0].object)["spec"] == {"size": 3, "color": "blue"}
    assert events[1].object == b'{"kind":"Widget"}'  # bookmarks untouched


async def test_served_version_defaults_after_conversion() -> None:
    definition = _crd({"color": {"type": "string", "default": "blue"}}, versions=("v1", "v2"))
    definition["spec"]["versions"][1]["schema"] = {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"shade": {"type": "string", "default": "dark"}}}}}}
    v2 = dataclasses.replace(RESOURCE, version="v2")
    backends = conversion.backends_for(_backends(definition), v2)
    got = jsonutil.loads((await backends.storage.Get(storage_pb2.GetRequest(key=KEY))).object)
    assert got["apiVersion"] == "example.com/v2"
    assert got["spec"] == {"size": 3, "color": "blue", "shade": "dark"}  # the storage version's, then v2's
    assert got["status"] == STATUS_DEFAULT  # v1's (the storage version's), applied before conversion, as kube


def test_unchanged_without_defaults_and_for_builtins() -> None:
    plain = _crd({"size": {"type": "integer"}})
    plain["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"].pop("default")
    assert schema_with_defaults(plain, "v1") is None
    backends = _backends(plain)
    assert conversion.backends_for(backends, RESOURCE) is backends
    pods = Resource("", "v1", "pods", "Pod", True)
    assert conversion.backends_for(backends, pods) is backends


async def test_other_resources_read_through_the_wrapper_untouched() -> None:
    backends = conversion.backends_for(_backends(WITH_DEFAULT), RESOURCE)
    service = storage_pb2.ResourceKey(group="", resource="services", namespace="ns", name="hook")
    got = await backends.storage.Get(storage_pb2.GetRequest(key=service))  # a conversion webhook's Service lookup
    assert jsonutil.loads(got.object) == STORED
