"""kapi.informer: the shared List+Watch informer, against the real storage service over a real etcd,
plus its retry rules (backoff, short watches, resync) against a scripted ListerWatcher."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
import pytest

from kapi import errors, jsonutil
from kapi.informer import (
    Event,
    IndexSync,
    Informer,
    ListResult,
    StorageListerWatcher,
    meta_namespace_key,
    namespace_key,
    split_meta_namespace_key,
)
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.storage.server import StorageService
from tests.storage.conftest import start_storage
from tests.storage.helpers import configmap, create, key, unique


@pytest.fixture(scope="module")
async def service(etcd: Any) -> AsyncIterator[StorageService]:
    """A storage service of its own (own etcd prefix), so compacting it disturbs no other test."""
    service = await start_storage(etcd.endpoint, f"/kapi-informer-{uuid.uuid4().hex[:8]}/registry")
    yield service
    await service.stop(0)


@pytest.fixture(scope="module")
async def stub(service: StorageService) -> AsyncIterator[storage_pb2_grpc.StorageStub]:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    yield storage_pb2_grpc.StorageStub(channel)
    await channel.close()


async def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def running(informer: Informer) -> AsyncIterator[Informer]:
    informer.start()
    try:
        yield informer
    finally:
        await informer.stop()


class Recorder:
    """Every callback an informer makes, in order, as tuples."""

    def __init__(self, informer: Informer, store: bool = True):
        self.calls: list[tuple[Any, ...]] = []
        if store:
            informer.on(add=lambda o: self.calls.append(("add", name(o))),
                        update=lambda old, new: self.calls.append(("update", name(old), name(new))),
                        delete=lambda o: self.calls.append(("delete", name(o))))
        informer.on(replace=lambda objs, rev: self.calls.append(("replace", sorted(name(o) for o in objs), rev)),
                    event=lambda kind, o, rev: self.calls.append(("event", kind, name(o), rev)),
                    change=lambda: self.calls.append(("change",)))

    def of(self, kind: str) -> list[tuple[Any, ...]]:
        return [c for c in self.calls if c[0] == kind]


def name(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])


@pytest.mark.parametrize(("obj", "expected"), [
    ({"metadata": {"namespace": "ns", "name": "a"}}, "ns/a"),
    ({"metadata": {"name": "node-1"}}, "node-1"),
    ({"metadata": {"namespace": "ns"}}, ""),
    ({}, ""),
])
def test_meta_namespace_key(obj: dict[str, Any], expected: str) -> None:
    assert meta_namespace_key(obj) == expected
    if expected:
        assert namespace_key(*split_meta_namespace_key(expected)) == expected


async def test_lists_every_page_at_one_revision(stub: storage_pb2_grpc.StorageStub) -> None:
    ns = unique("page")
    names = sorted(unique("cm") for _ in range(5))
    for n in names:
        await create(stub, configmap(ns, n))
    source = StorageListerWatcher(stub, "", "configmaps", ns, page_size=2)
    result = await source.list()
    assert sorted(name(o) for o in result.items) == names
    direct: Any = await stub.List(storage_pb2.ListRequest(key=key(ns)))
    assert result.resource_version >= max(int(o["metadata"]["resourceVersion"]) for o in result.items)
    assert result.resource_version <= direct.resource_version


async def test_list_then_watch_delivers_handlers(stub: storage_pb2_grpc.StorageStub) -> None:
    ns = unique("watch")
    await create(stub, configmap(ns, "a"))
    informer = Informer(StorageListerWatcher(stub, "", "configmaps", ns), name="configmaps")
    calls = Recorder(informer)
    async with running(informer):
        assert await informer.wait_synced(5)
        assert informer.get(f"{ns}/a") is not None and informer.lists == 1
        assert [c[:2] for c in calls.calls[:3]] == [("add", "a"), ("replace", ["a"]), ("change",)]
        created = await create(stub, configmap(ns, "b"))
        await eventually(lambda: informer.get(f"{ns}/b") is not None)
        assert informer.revision >= int(created["metadata"]["resourceVersion"])
        stored = dict(informer.get(f"{ns}/a") or {})
        stored["data"] = {"k": "v"}
        await stub.Update(storage_pb2.UpdateRequest(key=key(ns, "a"), object=jsonutil.dumps(stored)))
        await eventually(lambda: (informer.get(f"{ns}/a") or {}).get("data") == {"k": "v"})
        await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "b")))
        await eventually(lambda: informer.get(f"{ns}/b") is None)
        assert informer.lists == 1  # no re-list: one watch carried every change
    assert calls.of("add") == [("add", "a"), ("add", "b")]
    assert calls.of("update") == [("update", "a", "a")]
    assert calls.of("delete") == [("delete", "b")]
    assert [c[1:3] for c in calls.of("event")] == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]
    assert len(calls.of("change")) == 4


async def test_compacted_revision_relists_and_delivers_the_difference(
        stub: storage_pb2_grpc.StorageStub, service: StorageService) -> None:
    ns = unique("expired")
    for n in ("keep", "gone"):
        await create(stub, configmap(ns, n))
    informer = Informer(StorageListerWatcher(stub, "", "configmaps", ns), name="configmaps", min_backoff=0.01)
    await informer.relist()
    calls = Recorder(informer)
    listed = informer.revision
    await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "gone")))
    created = await create(stub, configmap(ns, "new"))
    await service.etcd.compact(int(created["metadata"]["resourceVersion"]))
    async with running(informer):  # watches from the listed (now compacted) revision: 410 -> re-list
        await eventually(lambda: informer.lists == 2)
    assert informer.revision > listed
    assert sorted(informer.store) == [f"{ns}/keep", f"{ns}/new"]
    assert [c[:2] for c in calls.calls[:4]] == [("delete", "gone"), ("add", "new"), ("replace", ["keep", "new"]),
                                                ("change",)]


async def test_store_less_informer_refuses_object_handlers(stub: storage_pb2_grpc.StorageStub) -> None:
    informer = Informer(StorageListerWatcher(stub, "", "configmaps"), name="configmaps", keep_store=False)
    with pytest.raises(ValueError, match="keep_store"):
        informer.on(add=lambda o: None)


class Index:
    """A minimal kapi.informer.Index: names per resource."""

    def __init__(self, resources: Sequence[str]):
        self.resources = resources
        self.names: dict[str, set[str]] = {}
        self.revision = 0

    @property
    def synced(self) -> bool:
        return set(self.names) >= set(self.resources)

    def replace(self, resource: str, objects: Sequence[Any], revision: int) -> None:
        self.names[resource] = {name(o) for o in objects}
        self.revision = max(self.revision, revision)

    def apply(self, resource: str, event_type: str, obj: Any, revision: int) -> None:
        (self.names[resource].discard if event_type == "DELETED" else self.names[resource].add)(name(obj))
        self.revision = max(self.revision, revision)


async def test_index_sync_feeds_every_resource(stub: storage_pb2_grpc.StorageStub) -> None:
    ns = unique("index")
    await create(stub, configmap(ns, "cm"))
    await create(stub, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": ns}},
                 "secrets")
    index = Index(("configmaps", "secrets"))
    sync = IndexSync(stub, index, group="", resources=("configmaps", "secrets"), what="test index")
    task = asyncio.create_task(sync.run())
    try:
        await asyncio.wait_for(sync.synced.wait(), 5)
        assert "cm" in index.names["configmaps"] and "s" in index.names["secrets"]
        await stub.Delete(storage_pb2.DeleteRequest(key=key(ns, "cm")))
        await eventually(lambda: "cm" not in index.names["configmaps"])
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


# ---------------------------------------------------------------- retry rules, with a scripted source


class Scripted:
    """A ListerWatcher answering from scripts: each list/watch pops the next step (an exception is raised)."""

    def __init__(self, lists: list[Any], watches: list[Any]):
        self.lists, self.watches = lists, watches
        self.watched_from: list[int] = []

    async def list(self) -> ListResult:
        step = self.lists.pop(0)
        if isinstance(step, Exception):
            raise step
        return ListResult([{"metadata": {"name": n, "resourceVersion": str(rv)}} for n, rv in step[0]], step[1])

    async def watch(self, resource_version: int) -> AsyncIterator[Sequence[Event]]:
        self.watched_from.append(resource_version)
        step = self.watches.pop(0) if self.watches else None
        if step is None:
            await asyncio.Event().wait()  # a quiet healthy watch, until the test cancels
        elif isinstance(step, Exception):
            raise step
        for batch in step:
            yield batch


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def bookmark(rv: int) -> Event:
    return Event("BOOKMARK", {"metadata": {"resourceVersion": str(rv)}}, rv)


@pytest.mark.parametrize(("lists", "watches", "sleeps", "lists_done", "watched_from"), [
    # storage down for three lists: backoff doubles up to max_backoff
    ([errors.unavailable("down")] * 3 + [([], 5)], [], [0.1, 0.2, 0.3], 1, [5]),
    # 410 re-lists at once, without sleeping
    ([([], 5), ([], 9)], [errors.expired("too old"), None], [], 2, [5, 9]),
    # a watch ending at once without events is a failure: backoff, then a re-list
    ([([], 5), ([], 6)], [[], None], [0.1], 2, [5, 6]),
    # a watch that delivered a bookmark and ended is resumed from the bookmark, no re-list
    ([([], 5)], [[[bookmark(7)]], None], [], 1, [5, 7]),
    # failures in a row keep doubling the backoff, even with a successful list between them
    ([errors.unavailable("down"), ([], 5), ([], 8)], [errors.unavailable("cut"), None], [0.1, 0.2], 2, [5, 8]),
])
async def test_retry_rules(lists: list[Any], watches: list[Any], sleeps: list[float], lists_done: int,
                           watched_from: list[int]) -> None:
    clock = Clock()
    source = Scripted(list(lists), list(watches))
    informer = Informer(source, name="scripted", min_backoff=0.1, max_backoff=0.3, sleep=clock.sleep, clock=clock)
    async with running(informer):
        await eventually(lambda: len(source.watched_from) == len(watched_from), timeout=2)
        await asyncio.sleep(0.01)
    assert clock.sleeps == sleeps
    assert informer.lists == lists_done
    assert source.watched_from == watched_from


class _FailAfter(list):  # type: ignore[type-arg]
    """Watch batches followed by an exception (iterated by Scripted.watch)."""

    def __init__(self, batches: list[list[Event]], error: Exception):
        super().__init__(batches)
        self.error = error

    def __iter__(self) -> Any:
        yield from super().__iter__()
        raise self.error


async def test_backoff_starts_over_after_a_watch_that_worked() -> None:
    clock = Clock()
    events = [[Event("ADDED", {"metadata": {"name": "a"}}, 6)]]
    source = Scripted([errors.unavailable("down"), ([], 5), ([], 8)],
                      [_FailAfter(events, errors.unavailable("cut")), None])
    informer = Informer(source, name="scripted", min_backoff=0.1, max_backoff=1.0, sleep=clock.sleep, clock=clock)
    async with running(informer):
        await eventually(lambda: len(source.watched_from) == 2, timeout=2)
    assert clock.sleeps == [0.1, 0.1]  # the second failure came after an event: the backoff was reset
    assert informer.get("a") is None  # the re-list (no objects) replaced the watched state


async def test_resync_redelivers_stored_objects_as_updates() -> None:
    clock = Clock()
    source = Scripted([([("a", 1), ("b", 2)], 2)], [])
    informer = Informer(source, name="scripted", resync=30.0, sleep=clock.sleep, clock=clock)
    updates: list[tuple[str, str]] = []
    informer.on(update=lambda old, new: updates.append((name(old), name(new))))
    async with running(informer):
        await eventually(lambda: len(updates) >= 4, timeout=2)
    assert updates[:4] == [("a", "a"), ("b", "b"), ("a", "a"), ("b", "b")]
    assert 30.0 in clock.sleeps


async def test_wait_synced_once_synced_answers_without_a_timer(stub: storage_pb2_grpc.StorageStub,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Admission plugins ask on every request: once listed, the answer needs no asyncio.wait_for (a task and a
    timer each time); before, it waits (and a too-short wait says False)."""
    ns = unique("synced")
    informer = Informer(StorageListerWatcher(stub, "", "configmaps", ns), name="configmaps")
    assert await informer.wait_synced(0.01) is False  # not started: waits, then says not synced
    async with running(informer):
        assert await informer.wait_synced(5)

        def no_wait_for(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("waited although synced")

        monkeypatch.setattr(asyncio, "wait_for", no_wait_for)
        for _ in range(3):
            assert await informer.wait_synced(5) is True
