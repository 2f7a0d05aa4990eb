"""Watch through the real gRPC server against the real etcd: initial state, replay, selectors, bookmarks."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from kapi import jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

from .helpers import configmap, create, key, unique

pytestmark = pytest.mark.timeout(60)

Stub = storage_pb2_grpc.StorageStub


class Watcher:
    """Reads a Watch stream; ``events()`` returns (type, name, resourceVersion) tuples."""

    def __init__(self, stub: Stub, request_key: storage_pb2.ResourceKey, **options: Any):
        self.call = stub.Watch(storage_pb2.WatchRequest(key=request_key, **options))
        self.messages = 0
        self.raw: list[storage_pb2.WatchEvent] = []

    async def next_message(self, timeout: float = 5.0) -> list[storage_pb2.WatchEvent]:
        message = await asyncio.wait_for(self.call.read(), timeout)
        assert message is not grpc.aio.EOF, "the watch ended"
        self.messages += 1
        self.raw += message.events
        return list(message.events)

    async def events(self, count: int, *, bookmarks: bool = False, timeout: float = 5.0) -> list[tuple[str, str, int]]:
        out: list[tuple[str, str, int]] = []
        while len(out) < count:
            for event in await self.next_message(timeout):
                if event.type == "BOOKMARK" and not bookmarks:
                    continue
                obj = jsonutil.loads(event.object)
                assert obj["metadata"]["resourceVersion"] == str(event.resource_version)
                out.append((event.type, obj["metadata"].get("name", ""), event.resource_version))
        assert len(out) == count, out
        return out

    async def quiet(self, seconds: float = 0.3) -> None:
        """Assert nothing but bookmarks arrives for ``seconds``."""
        try:
            while True:
                events = await self.next_message(seconds)
                assert all(e.type == "BOOKMARK" for e in events), events
        except TimeoutError:
            pass

    def cancel(self) -> None:
        self.call.cancel()


async def update(stub: Stub, obj: dict[str, Any]) -> int:
    meta = obj["metadata"]
    response = await stub.Update(storage_pb2.UpdateRequest(key=key(meta["namespace"], meta["name"]),
                                                           object=jsonutil.dumps(obj)), timeout=10)
    return response.resource_version


async def delete(stub: Stub, namespace: str, name: str) -> int:
    response = await stub.Delete(storage_pb2.DeleteRequest(key=key(namespace, name)), timeout=10)
    return response.resource_version


async def rv_of(stub: Stub, namespace: str) -> int:
    return (await stub.List(storage_pb2.ListRequest(key=key(namespace)), timeout=10)).resource_version


@pytest.mark.parametrize("start", ["0", ""])
async def test_watch_from_now_sends_initial_state_then_changes(stub: Stub, start: str) -> None:
    ns = unique("w")
    a = await create(stub, configmap(ns, "a"))
    b = await create(stub, configmap(ns, "b"))
    await rv_of(stub, ns)  # a consistent list: the cache has caught up, so "0" (any) includes a and b
    watcher = Watcher(stub, key(ns), resource_version=start)
    initial = await watcher.events(2)
    assert initial == [("ADDED", "a", int(a["metadata"]["resourceVersion"])),
                       ("ADDED", "b", int(b["metadata"]["resourceVersion"]))]
    assert watcher.messages == 1  # batched
    rv_mod = await update(stub, configmap(ns, "a", x="1"))
    rv_del = await delete(stub, ns, "b")
    rv_add = int((await create(stub, configmap(ns, "c")))["metadata"]["resourceVersion"])
    assert await watcher.events(3) == [("MODIFIED", "a", rv_mod), ("DELETED", "b", rv_del), ("ADDED", "c", rv_add)]
    deleted = jsonutil.loads(next(e for e in watcher.raw if e.type == "DELETED").object)
    assert deleted["metadata"]["uid"] == "uid-b" and deleted["metadata"]["resourceVersion"] == str(rv_del)
    watcher.cancel()


async def test_watch_from_revision_replays_exactly_later_events(stub: Stub) -> None:
    ns = unique("w")
    await create(stub, configmap(ns, "a"))
    start = await rv_of(stub, ns)
    b = int((await create(stub, configmap(ns, "b")))["metadata"]["resourceVersion"])
    m = await update(stub, configmap(ns, "a", v="2"))
    d = await delete(stub, ns, "b")
    watcher = Watcher(stub, key(ns), resource_version=str(start))
    assert await watcher.events(3) == [("ADDED", "b", b), ("MODIFIED", "a", m), ("DELETED", "b", d)]
    await watcher.quiet()
    watcher.cancel()


async def test_replay_is_batched(stub: Stub) -> None:
    ns = unique("w")
    start = await rv_of(stub, ns)
    await asyncio.gather(*(create(stub, configmap(ns, f"cm{i:02d}")) for i in range(40)))
    watcher = Watcher(stub, key(ns), resource_version=str(start))
    events = await watcher.events(40)
    assert sorted(name for _, name, _ in events) == [f"cm{i:02d}" for i in range(40)]
    assert [rv for _, _, rv in events] == sorted(rv for _, _, rv in events)
    assert watcher.messages < 40
    watcher.cancel()


async def test_watch_namespace_and_name_isolation(stub: Stub) -> None:
    ns = unique("w")
    start = await rv_of(stub, ns)
    in_ns = Watcher(stub, key(ns), resource_version=str(start))
    one = Watcher(stub, key(ns, "b"), resource_version=str(start))
    await create(stub, configmap(ns + "2", "a"))  # prefix "ns2/" is not "ns/"
    await create(stub, configmap(ns, "a"))
    await create(stub, configmap(ns, "b"))
    assert [(t, n) for t, n, _ in await in_ns.events(2)] == [("ADDED", "a"), ("ADDED", "b")]
    assert [(t, n) for t, n, _ in await one.events(1)] == [("ADDED", "b")]
    await one.quiet()
    in_ns.cancel()
    one.cancel()


async def test_label_selector_turns_transitions_into_added_and_deleted(stub: Stub) -> None:
    ns = unique("w")
    await create(stub, configmap(ns, "a", {"app": "web"}))
    await create(stub, configmap(ns, "b", {"app": "db"}))
    await rv_of(stub, ns)
    watcher = Watcher(stub, key(ns), resource_version="0", label_selector="app=web")
    assert [(t, n) for t, n, _ in await watcher.events(1)] == [("ADDED", "a")]
    await update(stub, configmap(ns, "b", {"app": "web"}))       # starts matching
    await update(stub, configmap(ns, "a", {"app": "web"}, x="1"))  # still matches
    gone = await update(stub, configmap(ns, "a", {"app": "db"}))   # stops matching
    await update(stub, configmap(ns, "a", {"app": "db"}, x="2"))   # never matched
    await delete(stub, ns, "b")
    events = await watcher.events(4)
    assert [(t, n) for t, n, _ in events] == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "a"), ("DELETED", "b")]
    assert events[2][2] == gone
    left = jsonutil.loads([e for e in watcher.raw if e.type == "DELETED"][0].object)
    assert left["metadata"]["labels"] == {"app": "web"}  # the last state that matched
    await watcher.quiet()
    watcher.cancel()


async def test_field_selector_filters_watch(stub: Stub) -> None:
    ns = unique("w")
    start = await rv_of(stub, ns)
    watcher = Watcher(stub, key(ns), resource_version=str(start), field_selector="metadata.name=b")
    await create(stub, configmap(ns, "a"))
    await create(stub, configmap(ns, "b"))
    assert [(t, n) for t, n, _ in await watcher.events(1)] == [("ADDED", "b")]
    watcher.cancel()


async def test_bookmarks(stub: Stub) -> None:
    ns = unique("w")
    start = await rv_of(stub, ns)
    watcher = Watcher(stub, key(ns), resource_version=str(start), allow_bookmarks=True)
    await create(stub, configmap(ns + "-other", "noise"))  # moves the revision, not this watch
    bookmark = None
    for _ in range(20):
        events = await watcher.next_message(timeout=5)
        bookmark = next((e for e in events if e.type == "BOOKMARK"), None)
        if bookmark is not None and bookmark.resource_version > start:
            break
    assert bookmark is not None and bookmark.resource_version > start
    assert jsonutil.loads(bookmark.object) == {"metadata": {"resourceVersion": str(bookmark.resource_version)}}
    watcher.cancel()


async def test_no_bookmarks_unless_asked(stub: Stub) -> None:
    ns = unique("w")
    watcher = Watcher(stub, key(ns), resource_version=str(await rv_of(stub, ns)))
    with pytest.raises(TimeoutError):
        await watcher.next_message(timeout=1.5)  # several bookmark intervals
    watcher.cancel()


async def test_send_initial_events_ends_with_annotated_bookmark(stub: Stub) -> None:
    ns = unique("w")
    await create(stub, configmap(ns, "a"))
    watcher = Watcher(stub, key(ns), resource_version="", send_initial_events=True, allow_bookmarks=True)
    events = await watcher.events(2, bookmarks=True)
    assert [(t, n) for t, n, _ in events] == [("ADDED", "a"), ("BOOKMARK", "")]
    end = jsonutil.loads(watcher.raw[-1].object)
    assert end["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert events[1][2] >= events[0][2]
    watcher.cancel()


async def test_watchers_share_the_cache_and_cancel_releases_them(stub: Stub, storage: Any) -> None:
    ns = unique("w")
    mine = f"/configmaps/{ns}/".encode()
    await create(stub, configmap(ns, "a"))
    watchers = [Watcher(stub, key(ns), resource_version="0") for _ in range(5)]
    for watcher in watchers:
        await watcher.events(1)
    cache = next(c for c in storage.store.caches if c.prefix.endswith(b"/configmaps/"))

    def open_here() -> int:
        return sum(1 for w in cache._watchers if w.keys.start.endswith(mine))

    def etcd_watches_of_configmaps() -> int:
        return sum(1 for s in storage.watches._subs.values() if b"/configmaps/" in s.key)

    assert open_here() == 5
    assert etcd_watches_of_configmaps() == 1  # the cache's: watchers never open their own
    for watcher in watchers:
        watcher.cancel()
    for _ in range(50):
        if not open_here():
            break
        await asyncio.sleep(0.05)
    assert not open_here()


async def test_bad_resource_version_is_bad_request(stub: Stub) -> None:
    call = stub.Watch(storage_pb2.WatchRequest(key=key("x"), resource_version="abc"))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call.read()
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_cancel_that_meets_the_watch_confirmation_is_not_lost(storage: Any) -> None:
    """A task cancelled in the same loop turn as etcd confirms its watch must end cancelled (Python 3.11's
    asyncio.wait_for returned the confirmation and dropped the cancel: a stopping watch cache then waited for
    events forever and the storage server's stop hung)."""
    prefix = f"/kapi-cancel-{unique('c')}/".encode()
    task = asyncio.ensure_future(storage.watches.subscribe(prefix, prefix + b"\xff", 1))
    for _ in range(100):
        sub = next((s for s in storage.watches._subs.values() if s.key == prefix), None)
        if sub is not None:
            break
        await asyncio.sleep(0)
    assert sub is not None
    sub.created.set_result(1)  # the confirmation and the cancel arrive together
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sub.watch_id not in storage.watches._subs  # and the etcd watch is cancelled too
