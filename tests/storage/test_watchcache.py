"""The watch cache against the real etcd: window and 410, rv=0 / consistent lists, pagination, WatchList."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from kapi import jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.storage.server import StorageService
from services.storage.watchcache import LOWER_BOUND_CAPACITY, parse_watch_cache_sizes

from .conftest import start_storage
from .helpers import configmap, create, key, status_of, unique
from .test_watch import Watcher, rv_of, update

pytestmark = pytest.mark.timeout(60)

Stub = storage_pb2_grpc.StorageStub
WINDOW = LOWER_BOUND_CAPACITY  # the configmaps window on the ``small`` server (it never grows there)


@pytest.mark.parametrize("text, expected", [
    ("", {}),
    ("pods#1000", {("", "pods"): 1000}),
    ("deployments.apps#500, configmaps#0", {("apps", "deployments"): 500, ("", "configmaps"): 0}),
    ("ingresses.networking.k8s.io#7", {("networking.k8s.io", "ingresses"): 7}),
])
def test_parse_watch_cache_sizes(text: str, expected: dict[tuple[str, str], int]) -> None:
    assert parse_watch_cache_sizes(text) == expected


@pytest.mark.parametrize("text", ["pods", "pods#", "#5", "pods#-1", "pods#x"])
def test_parse_watch_cache_sizes_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_watch_cache_sizes(text)


@pytest.fixture(scope="module")
async def small(etcd: Any) -> AsyncIterator[tuple[StorageService, Stub]]:
    """A storage server whose configmaps cache holds WINDOW events and whose secrets are not cached (a size
    other than 0 means "cached", as in kube; the window stays at its lower bound because no change counts as
    fresh)."""
    service = await start_storage(etcd.endpoint, f"/kapi-wc-{uuid.uuid4().hex[:8]}/registry",
                                  "--watch-cache-sizes", "configmaps#4,secrets#0")
    assert service.store.caches is not None
    service.store.caches.fresh_seconds = 0.0
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    yield service, storage_pb2_grpc.StorageStub(channel)
    await channel.close()
    await service.stop(0)


def _counter(name: str) -> float:
    return REGISTRY.get_sample_value(name, {"group": "", "resource": "configmaps"}) or 0.0


def _cache(service: StorageService, resource: str = "configmaps") -> Any:
    assert service.store.caches is not None
    return next(c for c in service.store.caches if c.prefix.endswith(f"/{resource}/".encode()))


async def test_watch_within_window_replays_and_older_is_expired(small: Any) -> None:
    service, stub = small
    ns = unique("wc")
    start = await rv_of(stub, ns)
    revisions = [int((await create(stub, configmap(ns, f"cm{i}")))["metadata"]["resourceVersion"])
                 for i in range(WINDOW + 2)]
    await rv_of(stub, ns)  # caught up
    cache = _cache(service)
    assert cache.oldest == revisions[1]  # two events evicted: the window starts after the second-oldest evicted
    inside = Watcher(stub, key(ns), resource_version=str(revisions[1]))
    assert [n for _, n, _ in await inside.events(WINDOW)] == [f"cm{i}" for i in range(2, WINDOW + 2)]
    inside.cancel()
    err = await status_of(stub.Watch(storage_pb2.WatchRequest(key=key(ns), resource_version=str(start))).read())
    assert (err.code, err.reason) == (410, "Expired")
    assert err.message == f"too old resource version: {start} ({revisions[1]})"


async def test_window_grows_to_keep_fresh_history_and_shrinks_when_stale(etcd: Any) -> None:
    # watch_cache.go resizeCacheLocked: full and the oldest change fresh (75 s) -> doubled; full and the newest
    # quarter stale -> halved, dropping the oldest changes (never below 100).
    service = await start_storage(etcd.endpoint, f"/kapi-wc-{uuid.uuid4().hex[:8]}/registry")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    stub = storage_pb2_grpc.StorageStub(channel)
    try:
        ns = unique("grow")
        labels = {"group": "", "resource": "configmaps"}
        increases, decreases = (_counter(f"watch_cache_capacity_{kind}_total") for kind in ("increase", "decrease"))
        start = await rv_of(stub, ns)
        names = [f"cm{i}" for i in range(250)]
        for name in names:
            await create(stub, configmap(ns, name))
        await rv_of(stub, ns)
        cache = _cache(service)
        assert cache.capacity == 4 * LOWER_BOUND_CAPACITY  # 100 -> 200 -> 400
        assert REGISTRY.get_sample_value("watch_cache_capacity", labels) == 4 * LOWER_BOUND_CAPACITY
        assert _counter("watch_cache_capacity_increase_total") - increases == 2
        replay = Watcher(stub, key(ns), resource_version=str(start))
        assert [n for _, n, _ in await replay.events(len(names))] == names  # all 250, no 410
        replay.cancel()
        cache.fresh_seconds = 0.0  # from now on every change is stale
        for i in range(cache.capacity - len(names) + 1):  # fill the 400, then one more
            await create(stub, configmap(ns, f"more{i}"))
        await rv_of(stub, ns)
        assert cache.capacity == 2 * LOWER_BOUND_CAPACITY
        assert _counter("watch_cache_capacity_decrease_total") - decreases == 1
        err = await status_of(stub.Watch(storage_pb2.WatchRequest(key=key(ns), resource_version=str(start))).read())
        assert (err.code, err.message) == (410, f"too old resource version: {start} ({cache.oldest})")
    finally:
        await channel.close()
        await service.stop(0)


async def test_uncached_resource_is_served_by_etcd(small: Any) -> None:
    service, stub = small
    ns = unique("wc")
    await create(stub, configmap(ns, "s"), resource="secrets")
    listed = await stub.List(storage_pb2.ListRequest(key=key(ns, resource="secrets"), resource_version="0"))
    assert len(listed.items) == 1
    assert not any(c.prefix.endswith(b"/secrets/") for c in service.store.caches)


async def test_resource_version_zero_list_pages_from_the_cache(small: Any) -> None:
    service, stub = small
    ns = unique("wc")
    for i in range(5):
        await create(stub, configmap(ns, f"cm{i}", {"odd": str(i % 2)}))
    await rv_of(stub, ns)
    cache = _cache(service)
    page = await stub.List(storage_pb2.ListRequest(key=key(ns), resource_version="0", limit=2))
    assert [jsonutil.loads(i)["metadata"]["name"] for i in page.items] == ["cm0", "cm1"]
    assert page.resource_version == cache.revision
    assert page.has_remaining_item_count and page.remaining_item_count == 3
    names = []
    token = getattr(page, "continue")
    while token:
        request = storage_pb2.ListRequest(key=key(ns), limit=2)
        setattr(request, "continue", token)  # noqa: B010
        page = await stub.List(request)
        names += [jsonutil.loads(i)["metadata"]["name"] for i in page.items]
        token = getattr(page, "continue")
    assert names == ["cm2", "cm3", "cm4"]
    odd = await stub.List(storage_pb2.ListRequest(key=key(ns), resource_version="0", label_selector="odd=1"))
    assert [jsonutil.loads(i)["metadata"]["name"] for i in odd.items] == ["cm1", "cm3"]


async def test_continue_after_later_writes_reads_etcd_at_the_token_revision(small: Any) -> None:
    _, stub = small
    ns = unique("wc")
    for i in range(3):
        await create(stub, configmap(ns, f"cm{i}"))
    await rv_of(stub, ns)
    first = await stub.List(storage_pb2.ListRequest(key=key(ns), resource_version="0", limit=1))
    await update(stub, configmap(ns, "cm2", changed="yes"))
    await create(stub, configmap(ns, "cm3"))
    request = storage_pb2.ListRequest(key=key(ns), limit=10)
    setattr(request, "continue", getattr(first, "continue"))  # noqa: B010
    rest = await stub.List(request)
    objects = [jsonutil.loads(i) for i in rest.items]
    assert [o["metadata"]["name"] for o in objects] == ["cm1", "cm2"]  # the state at the first page's revision
    assert "changed" not in objects[1]["data"]
    assert rest.resource_version == first.resource_version


async def test_consistent_list_from_the_cache_once_caught_up(small: Any) -> None:
    service, stub = small
    ns = unique("wc")
    await create(stub, configmap(ns, "a"))
    await rv_of(stub, ns)
    # A write to another resource moves etcd's revision; the configmaps cache sees it only via progress notify.
    other = (await stub.Create(storage_pb2.CreateRequest(
        key=key(ns, "x", resource="endpoints"), object=jsonutil.dumps(configmap(ns, "x"))))).resource_version
    listed = await stub.List(storage_pb2.ListRequest(key=key(ns)))  # etcd, or the cache if it caught up
    assert listed.resource_version >= other
    assert [jsonutil.loads(i)["metadata"]["name"] for i in listed.items] == ["a"]
    assert await _cache(service).wait_fresh(other, 5.0)  # RequestProgress brings the cache to etcd's revision
    assert _cache(service).revision >= other
    again = await stub.List(storage_pb2.ListRequest(key=key(ns)))
    assert again.resource_version == _cache(service).revision  # now served from the cache
    assert [jsonutil.loads(i)["metadata"]["name"] for i in again.items] == ["a"]


async def test_not_older_than_beyond_etcd_is_too_large(small: Any) -> None:
    _, stub = small
    err = await status_of(stub.List(storage_pb2.ListRequest(key=key("x"), resource_version="999999999",
                                                            resource_version_match="NotOlderThan")))
    assert (err.code, err.reason) == (504, "Timeout")
    assert err.message.startswith("Timeout: Too large resource version: 999999999, current: ")


async def test_get_resource_version_zero_from_the_cache(small: Any) -> None:
    _, stub = small
    ns = unique("wc")
    created = await create(stub, configmap(ns, "a"))
    await rv_of(stub, ns)
    got = await stub.Get(storage_pb2.GetRequest(key=key(ns, "a"), resource_version="0"))
    assert jsonutil.loads(got.object) == created
    err = await status_of(stub.Get(storage_pb2.GetRequest(key=key(ns, "absent"), resource_version="0")))
    assert err.code == 404


@pytest.mark.parametrize("resource_version", ["", "0"])
async def test_watch_list_sends_initial_state_then_annotated_bookmark(small: Any, resource_version: str) -> None:
    _, stub = small
    ns = unique("wc")
    await create(stub, configmap(ns, "a"))
    await create(stub, configmap(ns, "b"))
    if resource_version == "0":
        await rv_of(stub, ns)
    current = await rv_of(stub, ns)
    watcher = Watcher(stub, key(ns), resource_version=resource_version, send_initial_events=True,
                      allow_bookmarks=True)
    events = await watcher.events(3, bookmarks=True)
    assert [(t, n) for t, n, _ in events] == [("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", "")]
    end = next(e for e in watcher.raw if e.type == "BOOKMARK")
    assert jsonutil.loads(end.object)["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert end.resource_version >= current
    changed = await update(stub, configmap(ns, "a", x="1"))
    assert await watcher.events(1) == [("MODIFIED", "a", changed)]
    watcher.cancel()


async def test_watch_from_future_revision_waits_then_too_large(small: Any) -> None:
    _, stub = small
    err = await status_of(stub.Watch(storage_pb2.WatchRequest(key=key("x"), resource_version="999999999")).read())
    assert (err.code, err.reason) == (504, "Timeout")


async def test_bookmarks_reach_idle_watchers(small: Any) -> None:
    _, stub = small
    ns = unique("wc")
    start = await rv_of(stub, ns)
    watchers = [Watcher(stub, key(ns), resource_version=str(start), allow_bookmarks=True) for _ in range(3)]
    await create(stub, configmap(ns + "-other", "noise"))
    for watcher in watchers:
        events = await watcher.next_message(timeout=5)
        assert [e.type for e in events] == ["BOOKMARK"] and events[0].resource_version > start
        watcher.cancel()


async def test_watch_from_before_the_cache_began_is_served_by_etcd(etcd: Any) -> None:
    """A cache starts on first use on each replica: a client that listed on another replica (or before a relist)
    watches from a revision older than this cache, and gets the changes from etcd, not a spurious 410."""
    service = await start_storage(etcd.endpoint, f"/kapi-wc-{uuid.uuid4().hex[:8]}/registry")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    stub = storage_pb2_grpc.StorageStub(channel)
    try:
        ns = unique("wc")
        listed = int((await create(stub, configmap(ns, "before")))["metadata"]["resourceVersion"])  # the "list"
        await create(stub, configmap(ns, "after"))  # a write between the list and the watch
        watcher = Watcher(stub, key(ns), resource_version=str(listed))  # this replica's cache starts now
        assert [(t, n) for t, n, _ in await watcher.events(1)] == [("ADDED", "after")]
        cache = _cache(service)
        assert cache.listed > listed and cache.oldest == cache.listed  # the cache did begin after the list
        watcher.cancel()
    finally:
        await channel.close()
        await service.stop(0)
