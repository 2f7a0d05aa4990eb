"""Create/Get/Update/Delete/List through the real gRPC server against the real etcd."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kapi import jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

from .helpers import configmap, create, key, status_of, unique

pytestmark = pytest.mark.timeout(60)

Stub = storage_pb2_grpc.StorageStub


async def get(stub: Stub, namespace: str, name: str, rv: str = "") -> tuple[dict[str, Any], int]:
    response = await stub.Get(storage_pb2.GetRequest(key=key(namespace, name), resource_version=rv), timeout=10)
    return jsonutil.loads(response.object), response.resource_version


async def list_(stub: Stub, namespace: str = "", **options: Any) -> storage_pb2.ListResponse:
    cont = options.pop("continue_", "")
    request = storage_pb2.ListRequest(key=key(namespace), **options)
    setattr(request, "continue", cont)  # noqa: B010 - keyword
    return await stub.List(request, timeout=10)


def names(response: storage_pb2.ListResponse) -> list[str]:
    return [jsonutil.loads(item)["metadata"]["name"] for item in response.items]


async def test_create_get_update_delete_round_trip(stub: Stub) -> None:
    ns, name = unique("ns"), "app"
    obj = configmap(ns, name, {"app": "web"}, a="1")
    obj["metadata"]["resourceVersion"] = "999"  # ignored and never stored
    created = await create(stub, obj)
    rv = int(created["metadata"]["resourceVersion"])
    assert created["data"] == {"a": "1"} and rv > 0

    got, got_rv = await get(stub, ns, name)
    assert got == created and got_rv == rv

    changed = configmap(ns, name, {"app": "web"}, a="2")
    response = await stub.Update(storage_pb2.UpdateRequest(key=key(ns, name), object=jsonutil.dumps(changed),
                                                           expected_resource_version=rv), timeout=10)
    updated = jsonutil.loads(response.object)
    assert response.resource_version > rv
    assert updated["metadata"]["resourceVersion"] == str(response.resource_version)
    assert (await get(stub, ns, name))[0]["data"] == {"a": "2"}

    response = await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, name)), timeout=10)
    deleted = jsonutil.loads(response.object)
    assert deleted["data"] == {"a": "2"}
    assert response.resource_version > int(updated["metadata"]["resourceVersion"])
    assert deleted["metadata"]["resourceVersion"] == str(response.resource_version)
    err = await status_of(get(stub, ns, name))
    assert (err.code, err.reason, err.message) == (404, "NotFound", f'configmaps "{name}" not found')


async def test_stored_value_has_no_resource_version(stub: Stub, storage: Any) -> None:
    ns = unique("ns")
    obj = configmap(ns, "x")
    obj["metadata"]["resourceVersion"] = "12"
    await create(stub, obj)
    raw = await storage.etcd.range(f"{storage.store.keys.prefix}/configmaps/{ns}/x".encode())
    assert "resourceVersion" not in jsonutil.loads(raw.kvs[0].value)["metadata"]


async def test_create_existing_is_already_exists(stub: Stub) -> None:
    ns = unique("ns")
    await create(stub, configmap(ns, "dup"))
    err = await status_of(create(stub, configmap(ns, "dup")))
    assert (err.code, err.reason) == (409, "AlreadyExists")
    assert err.message == 'configmaps "dup" already exists'
    assert err.details == {"name": "dup", "kind": "configmaps"}


async def test_group_resource_in_messages_and_cluster_scoped_keys(stub: Stub, storage: Any) -> None:
    name = unique("cr")
    group = "rbac.authorization.k8s.io"
    obj = {"apiVersion": f"{group}/v1", "kind": "ClusterRole", "metadata": {"name": name}}
    await create(stub, obj, "clusterroles", group)
    raw = await storage.etcd.range(f"{storage.store.keys.prefix}/{group}/clusterroles/{name}".encode())
    assert len(raw.kvs) == 1
    err = await status_of(create(stub, obj, "clusterroles", group))
    assert err.message == f'clusterroles.{group} "{name}" already exists'


async def test_update_with_stale_resource_version_is_conflict(stub: Stub) -> None:
    ns = unique("ns")
    first = await create(stub, configmap(ns, "c", a="1"))
    rv = int(first["metadata"]["resourceVersion"])
    await stub.Update(storage_pb2.UpdateRequest(key=key(ns, "c"), object=jsonutil.dumps(configmap(ns, "c", a="2")),
                                                expected_resource_version=rv), timeout=10)
    err = await status_of(stub.Update(storage_pb2.UpdateRequest(
        key=key(ns, "c"), object=jsonutil.dumps(configmap(ns, "c", a="3")), expected_resource_version=rv),
        timeout=10))
    assert (err.code, err.reason) == (409, "Conflict")
    assert err.message == ('Operation cannot be fulfilled on configmaps "c": the object has been modified; '
                           'please apply your changes to the latest version and try again')


async def test_update_absent_is_not_found(stub: Stub) -> None:
    ns = unique("ns")
    for expected in (0, 5):
        err = await status_of(stub.Update(storage_pb2.UpdateRequest(
            key=key(ns, "ghost"), object=jsonutil.dumps(configmap(ns, "ghost")), expected_resource_version=expected),
            timeout=10))
        assert (err.code, err.reason) == (404, "NotFound")


async def test_unchanged_update_keeps_resource_version(stub: Stub) -> None:
    ns = unique("ns")
    created = await create(stub, configmap(ns, "same", a="1"))
    response = await stub.Update(storage_pb2.UpdateRequest(key=key(ns, "same"),
                                                           object=jsonutil.dumps(configmap(ns, "same", a="1"))),
                                 timeout=10)
    assert str(response.resource_version) == created["metadata"]["resourceVersion"]
    assert jsonutil.loads(response.object)["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_objects_near_a_mebibyte_update_and_no_op_update(stub: Stub) -> None:
    """A ~1 MiB object: the update carries it once (etcd refuses requests over 1.5 MiB), a no-op writes nothing."""
    ns = unique("ns")
    big = "x" * (1000 * 1024)
    created = await create(stub, configmap(ns, "big", a=big))
    rv = int(created["metadata"]["resourceVersion"])
    changed = await stub.Update(storage_pb2.UpdateRequest(
        key=key(ns, "big"), object=jsonutil.dumps(configmap(ns, "big", a=big, b="1")), expected_resource_version=rv),
        timeout=10)
    assert changed.resource_version > rv
    same = await stub.Update(storage_pb2.UpdateRequest(
        key=key(ns, "big"), object=jsonutil.dumps(configmap(ns, "big", a=big, b="1")),
        expected_resource_version=changed.resource_version), timeout=10)
    assert same.resource_version == changed.resource_version  # unchanged: nothing written
    err = await status_of(stub.Update(storage_pb2.UpdateRequest(
        key=key(ns, "big"), object=jsonutil.dumps(configmap(ns, "big", a=big, b="2")), expected_resource_version=rv),
        timeout=10))
    assert (err.code, err.reason) == (409, "Conflict")  # the stale precondition still holds for large values


@pytest.mark.parametrize(("uid", "rv_offset", "message"), [
    ("wrong", 0, "Precondition failed: UID in precondition: wrong, UID in object meta: uid-d"),
    ("", -1, "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {cur}"),
    ("uid-d", -1, "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {cur}"),
])
async def test_delete_preconditions(stub: Stub, storage: Any, uid: str, rv_offset: int, message: str) -> None:
    ns = unique("ns")
    created = await create(stub, configmap(ns, "d"))
    cur = int(created["metadata"]["resourceVersion"])
    rv = cur + rv_offset if rv_offset else 0
    err = await status_of(stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "d"), expected_uid=uid,
                                                                expected_resource_version=rv), timeout=10))
    assert (err.code, err.reason) == (409, "Conflict")
    assert err.message.startswith('Operation cannot be fulfilled on configmaps "d": StorageError: invalid object')
    assert err.message.endswith(message.format(rv=rv, cur=cur))
    assert f"Key: {storage.store.keys.prefix}/configmaps/{ns}/d" in err.message
    await get(stub, ns, "d")  # still there


async def test_delete_with_matching_preconditions_and_absent(stub: Stub) -> None:
    ns = unique("ns")
    created = await create(stub, configmap(ns, "d"))
    response = await stub.Delete(storage_pb2.DeleteRequest(
        key=key(ns, "d"), expected_uid="uid-d", expected_resource_version=int(created["metadata"]["resourceVersion"])),
        timeout=10)
    assert jsonutil.loads(response.object)["metadata"]["uid"] == "uid-d"
    err = await status_of(stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "d")), timeout=10))
    assert (err.code, err.reason) == (404, "NotFound")


@pytest.mark.parametrize(("request_key", "body", "fragment"), [
    (key("ns", ""), b"{}", "name may not be empty"),
    (key("ns", "a/b"), b"{}", "invalid name"),
    (key("ns", "x", resource=""), b"{}", "a resource is required"),
    (key("ns", "x"), b"[1]", "must be a JSON object"),
    (key("ns", "x"), b"{nope", "not valid JSON"),
    (key("ns", "x"), b'{"metadata": 3}', "metadata must be a JSON object"),
])
async def test_bad_create_requests_are_bad_request(stub: Stub, request_key: storage_pb2.ResourceKey, body: bytes,
                                                   fragment: str) -> None:
    err = await status_of(stub.Create(storage_pb2.CreateRequest(key=request_key, object=body), timeout=10))
    assert (err.code, err.reason) == (400, "BadRequest")
    assert fragment in err.message


async def test_get_resource_version_semantics(stub: Stub) -> None:
    ns = unique("ns")
    created = await create(stub, configmap(ns, "g"))
    rv = int(created["metadata"]["resourceVersion"])
    for text in ("", "0", str(rv)):
        assert (await get(stub, ns, "g", text))[1] == rv
    err = await status_of(get(stub, ns, "g", str(rv + 1000)))
    assert (err.code, err.reason) == (504, "Timeout")
    assert err.message.startswith(f"Timeout: Too large resource version: {rv + 1000}, current: ")
    assert err.details["causes"][0]["reason"] == "ResourceVersionTooLarge"
    err = await status_of(get(stub, ns, "g", "abc"))
    assert (err.code, err.reason) == (400, "BadRequest")


async def test_namespace_prefix_isolation(stub: Stub) -> None:
    base = unique("iso")
    await create(stub, configmap(base, "one"))
    await create(stub, configmap(base + "2", "two"))
    assert names(await list_(stub, base)) == ["one"]
    assert names(await list_(stub, base + "2")) == ["two"]
    everything = await list_(stub, "")
    assert {"one", "two"} <= set(names(everything))


async def test_list_sorted_with_revision_and_stamped_items(stub: Stub) -> None:
    ns = unique("ns")
    for name in ("c", "a", "b"):
        await create(stub, configmap(ns, name))
    response = await list_(stub, ns)
    assert names(response) == ["a", "b", "c"]
    items = [jsonutil.loads(i) for i in response.items]
    assert all(int(i["metadata"]["resourceVersion"]) <= response.resource_version for i in items)
    assert not getattr(response, "continue") and not response.has_remaining_item_count


@pytest.mark.parametrize(("label_selector", "field_selector", "expected"), [
    ("app=web", "", ["a", "b"]),
    ("app==web,tier!=db", "", ["a"]),
    ("app in (web, api)", "", ["a", "b", "c"]),
    ("app notin (web)", "", ["c", "d"]),
    ("tier", "", ["b", "c"]),
    ("!tier", "", ["a", "d"]),
    ("", "metadata.name=b", ["b"]),
    ("", "metadata.name!=b", ["a", "c", "d"]),
    ("app=web", "metadata.name==a", ["a"]),
    ("", "metadata.namespace=elsewhere", []),
])
async def test_list_selectors(stub: Stub, label_selector: str, field_selector: str, expected: list[str]) -> None:
    ns = unique("sel")
    await create(stub, configmap(ns, "a", {"app": "web"}))
    await create(stub, configmap(ns, "b", {"app": "web", "tier": "db"}))
    await create(stub, configmap(ns, "c", {"app": "api", "tier": "db"}))
    await create(stub, configmap(ns, "d"))
    response = await list_(stub, ns, label_selector=label_selector, field_selector=field_selector)
    assert names(response) == expected


async def test_field_selector_on_resource_specific_field(stub: Stub) -> None:
    ns = unique("pods")
    for name, phase in (("p1", "Running"), ("p2", "Pending")):
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
               "status": {"phase": phase}}
        await create(stub, obj, "pods")
    request = storage_pb2.ListRequest(key=key(ns, resource="pods"), field_selector="status.phase=Running")
    assert names(await stub.List(request, timeout=10)) == ["p1"]


@pytest.mark.parametrize(("label_selector", "field_selector", "message"), [
    ("a in", "", "unable to parse requirement: found '' expected: '('"),
    ("a b", "", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("a=b c", "", "found 'c', expected: ',' or 'end of string'"),
    ("-x=y", "", "unable to parse requirement: <nil>: Invalid value: \"-x\""),
    ("", "spec.foo=bar", "\"spec.foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""),
    ("", "metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
])
async def test_bad_selectors_are_bad_request(stub: Stub, label_selector: str, field_selector: str,
                                             message: str) -> None:
    for call in (lambda: list_(stub, "x", label_selector=label_selector, field_selector=field_selector),
                 lambda: _first_watch_message(stub, label_selector, field_selector)):
        err = await status_of(call())
        assert (err.code, err.reason) == (400, "BadRequest")
        assert err.message.startswith(message)


async def _first_watch_message(stub: Stub, label_selector: str, field_selector: str) -> None:
    call = stub.Watch(storage_pb2.WatchRequest(key=key("x"), label_selector=label_selector,
                                               field_selector=field_selector), timeout=10)
    async for _ in call:
        break


async def test_pagination_with_limit_and_continue(stub: Stub) -> None:
    ns = unique("page")
    for i in range(7):
        await create(stub, configmap(ns, f"cm{i}"))
    first = await list_(stub, ns, limit=3)
    assert names(first) == ["cm0", "cm1", "cm2"]
    assert first.has_remaining_item_count and first.remaining_item_count == 4
    token = getattr(first, "continue")
    body = jsonutil.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    assert body == {"v": "meta.k8s.io/v1", "rv": first.resource_version, "start": "cm2\x00"}

    await create(stub, configmap(ns, "cm3a"))  # after the first page: not in this consistent list
    second = await list_(stub, ns, limit=3, continue_=token)
    assert names(second) == ["cm3", "cm4", "cm5"]
    assert second.resource_version == first.resource_version
    assert second.remaining_item_count == 1
    third = await list_(stub, ns, limit=3, continue_=getattr(second, "continue"))
    assert names(third) == ["cm6"]
    assert not getattr(third, "continue") and not third.has_remaining_item_count


async def test_pagination_with_selector_fills_pages_without_remaining_count(stub: Stub) -> None:
    ns = unique("page")
    for i in range(9):
        await create(stub, configmap(ns, f"cm{i}", {"even": str(i % 2 == 0).lower()}))
    seen: list[str] = []
    token = ""
    while True:
        page = await list_(stub, ns, limit=2, label_selector="even=true", continue_=token)
        assert not page.has_remaining_item_count
        assert len(page.items) <= 2
        seen += names(page)
        token = getattr(page, "continue")
        if not token:
            break
    assert seen == ["cm0", "cm2", "cm4", "cm6", "cm8"]


async def test_limit_exactly_at_end_has_no_continue(stub: Stub) -> None:
    ns = unique("page")
    for i in range(2):
        await create(stub, configmap(ns, f"cm{i}"))
    page = await list_(stub, ns, limit=2)
    assert names(page) == ["cm0", "cm1"] and not getattr(page, "continue")


@pytest.mark.parametrize("token", ["not-base64!!", base64.urlsafe_b64encode(b'{"v":"x","rv":1,"start":"a"}').decode(),
                                   base64.urlsafe_b64encode(b'{"v":"meta.k8s.io/v1","rv":0,"start":"a"}').decode(),
                                   base64.urlsafe_b64encode(b'{"v":"meta.k8s.io/v1","rv":5,"start":""}').decode(),
                                   base64.urlsafe_b64encode(b'{"v":"meta.k8s.io/v1","rv":5,"start":"../x"}').decode()])
async def test_malformed_continue_is_bad_request(stub: Stub, token: str) -> None:
    err = await status_of(list_(stub, "ns", limit=1, continue_=token))
    assert (err.code, err.reason) == (400, "BadRequest")
    assert err.message.startswith("invalid continue token")


async def test_exact_list_at_old_revision(stub: Stub) -> None:
    ns = unique("exact")
    await create(stub, configmap(ns, "a"))
    before = (await list_(stub, ns)).resource_version
    await create(stub, configmap(ns, "b"))
    old = await list_(stub, ns, resource_version=str(before), resource_version_match="Exact")
    assert names(old) == ["a"] and old.resource_version == before
    legacy = await list_(stub, ns, resource_version=str(before), limit=10)  # limit + RV = Exact
    assert names(legacy) == ["a"]
    newest = await list_(stub, ns, resource_version=str(before), resource_version_match="NotOlderThan")
    assert names(newest) == ["a", "b"] and newest.resource_version > before
    assert names(await list_(stub, ns, resource_version=str(before))) == ["a", "b"]


@pytest.mark.parametrize(("options", "code", "reason", "fragment"), [
    ({"resource_version": "abc"}, 400, "BadRequest", 'Invalid value: "abc"'),
    ({"resource_version_match": "Exact"}, 422, "Invalid",
     "resourceVersionMatch is forbidden unless resourceVersion is provided"),
    ({"resource_version": "0", "resource_version_match": "Exact"}, 422, "Invalid",
     'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ({"resource_version": "1", "resource_version_match": "Sometimes"}, 422, "Invalid",
     'Unsupported value: "Sometimes"'),
    ({"resource_version": "999999999", "resource_version_match": "NotOlderThan"}, 504, "Timeout",
     "Too large resource version: 999999999"),
    ({"resource_version": "999999999", "resource_version_match": "Exact"}, 504, "Timeout",
     "Too large resource version: 999999999"),
    ({"resource_version": "abc"}, 400, "BadRequest", 'invalid resource version: resourceVersion: Invalid value: '
     '"abc": strconv.ParseUint: parsing "abc": invalid syntax'),
    ({"resource_version": "99999999999999999999", "limit": 1}, 400, "BadRequest",
     'Invalid value: "99999999999999999999": strconv.ParseUint: parsing "99999999999999999999": value out of range'),
    # the continue token is decoded before the resourceVersion is looked at (storage.ValidateListOptions)
    ({"resource_version": "abc", "continue_": "%%"}, 400, "BadRequest",
     "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"),
])
async def test_list_resource_version_errors(stub: Stub, options: dict[str, Any], code: int, reason: str,
                                            fragment: str) -> None:
    err = await status_of(list_(stub, "ns", **options))
    assert (err.code, err.reason) == (code, reason)
    assert fragment in err.message


async def test_continue_with_specific_resource_version_is_bad_request(stub: Stub) -> None:
    ns = unique("page")
    for i in range(3):
        await create(stub, configmap(ns, f"cm{i}"))
    first = await list_(stub, ns, limit=1)
    err = await status_of(list_(stub, ns, limit=1, continue_=getattr(first, "continue"),
                                resource_version=str(first.resource_version)))
    assert (err.code, err.message) == (400, "specifying resource version is not allowed when using continue")
    second = await list_(stub, ns, limit=1, continue_=getattr(first, "continue"), resource_version="0")
    assert len(second.items) == 1  # "0" is allowed with continue


@pytest.mark.parametrize("size", [1_600_000, 3_000_000])  # over etcd's 1.5 MiB request limit; over its gRPC limit
async def test_object_over_etcd_request_limit_is_request_entity_too_large(stub: Stub, size: int) -> None:
    ns = unique("big")
    err = await status_of(create(stub, configmap(ns, "big", blob="x" * size)))
    assert (err.code, err.reason) == (413, "RequestEntityTooLarge"), err
    assert "request is too large" in err.message or "larger than max" in err.message, err.message
