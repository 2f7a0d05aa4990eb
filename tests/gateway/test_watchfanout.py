"""Shared storage watches (services/gateway/watchfanout.py): who shares, ordering, history, bookmarks, failures.

A scripted storage stub stands in for the storage service's Watch RPC (the e2e suite runs the real one): each
call is an async iterator over the batches a test pushes, and records that it was cancelled.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from kapi import errors, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import watchfanout
from services.gateway.watchfanout import Fanout


class RpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, status: dict[str, Any] | None = None) -> None:
        self._code, self._status = code, status

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._code.name

    def trailing_metadata(self) -> Any:
        return [(errors.STATUS_METADATA_KEY, jsonutil.dumps(self._status))] if self._status else []


class Call:
    """One storage Watch call: yields what :meth:`push` queued; ``cancelled`` once cancelled."""

    def __init__(self, request: storage_pb2.WatchRequest) -> None:
        self.request = request
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.cancelled = False

    def push(self, *events: tuple[str, int]) -> None:
        self.queue.put_nowait(storage_pb2.WatchResponse(events=[
            storage_pb2.WatchEvent(type=t, object=b'{"metadata":{"resourceVersion":"%d"}}' % rv, resource_version=rv)
            for t, rv in events]))

    def fail(self, exc: BaseException) -> None:
        self.queue.put_nowait(exc)

    def cancel(self) -> None:
        self.cancelled = True

    def __aiter__(self) -> Call:
        return self

    async def __anext__(self) -> Any:
        item = await self.queue.get()
        if isinstance(item, BaseException):
            raise item
        return item


class Storage:
    def __init__(self) -> None:
        self.calls: list[Call] = []

    def Watch(self, request: storage_pb2.WatchRequest, timeout: float) -> Call:  # noqa: N802
        call = Call(request)
        self.calls.append(call)
        return call


def make(storage: Storage, resumed: list[int] | None = None) -> Fanout:
    async def resume(request: storage_pb2.WatchRequest, revision: int, deadline: float) -> Any:
        assert resumed is not None, "resume not expected"
        resumed.append(revision)
        call = storage.Watch(request, deadline)
        return call, call, await call.__anext__()

    return Fanout(lambda: storage, set(), lambda: False, resume)


def request(rv: str = "10", bookmarks: bool = False, selector: str = "", initial: bool = False
            ) -> storage_pb2.WatchRequest:
    return storage_pb2.WatchRequest(key=storage_pb2.ResourceKey(resource="configmaps", namespace="ns"),
                                    resource_version=rv, label_selector=selector, allow_bookmarks=bookmarks,
                                    send_initial_events=initial)


async def revisions(client: watchfanout.Client) -> list[tuple[str, int]]:
    batch = await asyncio.wait_for(client.next(), 2)
    assert batch is not None
    return [(e.type, e.resource_version) for e in batch]


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_only_watches_from_an_explicit_revision_share() -> None:
    assert watchfanout.shareable(request("10"))
    assert not watchfanout.shareable(request(""))
    assert not watchfanout.shareable(request("0"))
    assert not watchfanout.shareable(request("10", initial=True))


async def test_clients_of_the_same_watch_share_one_storage_stream() -> None:
    storage = Storage()
    fan = make(storage)
    a, b = fan.subscribe(request()), fan.subscribe(request())
    other = fan.subscribe(request(selector="app=x"))
    assert a and b and other
    await settle()
    assert len(storage.calls) == 2 and fan.upstreams == 2 and fan.clients() == 3
    assert storage.calls[0].request.allow_bookmarks  # the upstream always asks (clients get them if they did)
    storage.calls[0].push(("ADDED", 11), ("MODIFIED", 12))
    assert await revisions(a) == await revisions(b) == [("ADDED", 11), ("MODIFIED", 12)]


async def test_a_late_client_gets_the_remembered_events_after_its_revision_then_live_ones() -> None:
    storage = Storage()
    fan = make(storage)
    first = fan.subscribe(request("10"))
    assert first
    await settle()
    storage.calls[0].push(("ADDED", 11), ("ADDED", 12), ("ADDED", 13))
    await revisions(first)
    late = fan.subscribe(request("11"))
    assert late and len(storage.calls) == 1
    assert await revisions(late) == [("ADDED", 12), ("ADDED", 13)]
    storage.calls[0].push(("DELETED", 14))
    assert await revisions(late) == [("DELETED", 14)]
    assert await revisions(first) == [("DELETED", 14)]


async def test_a_revision_the_upstream_cannot_serve_gets_a_stream_of_its_own(monkeypatch: pytest.MonkeyPatch
                                                                             ) -> None:
    monkeypatch.setattr(watchfanout, "HISTORY", 2)
    storage = Storage()
    fan = make(storage)
    first = fan.subscribe(request("10"))
    assert first
    await settle()
    storage.calls[0].push(("ADDED", 11), ("ADDED", 12), ("ADDED", 13))
    await revisions(first)
    assert fan.subscribe(request("10")) is None  # event 11 is forgotten: only storage has it
    assert fan.subscribe(request("11")) is not None  # 12 and 13 are remembered
    assert fan.subscribe(request("20")) is None  # past the upstream's position: maybe "Too large", storage decides
    assert fan.subscribe(request("")) is None


async def test_bookmarks_go_only_to_clients_that_asked_and_only_after_their_revision() -> None:
    storage = Storage()
    fan = make(storage)
    plain, marked = fan.subscribe(request("10")), fan.subscribe(request("10", bookmarks=True))
    assert plain and marked
    await settle()
    storage.calls[0].push(("BOOKMARK", 15))
    storage.calls[0].push(("ADDED", 16))
    assert await revisions(marked) == [("BOOKMARK", 15)]
    assert await revisions(marked) == [("ADDED", 16)]
    assert await revisions(plain) == [("ADDED", 16)]
    late = fan.subscribe(request("16", bookmarks=True))
    assert late
    storage.calls[0].push(("BOOKMARK", 16), ("ADDED", 17))  # a bookmark at its own revision tells it nothing
    assert await revisions(late) == [("ADDED", 17)]
    assert await revisions(marked) == [("BOOKMARK", 16), ("ADDED", 17)]


async def test_an_error_ends_every_client_with_the_same_status_and_the_next_watch_starts_afresh() -> None:
    storage = Storage()
    fan = make(storage)
    a, b = fan.subscribe(request()), fan.subscribe(request())
    assert a and b
    await settle()
    expired = errors.expired("too old resource version: 10 (20)").status()
    storage.calls[0].fail(RpcError(grpc.StatusCode.OUT_OF_RANGE, expired))
    for client in (a, b):
        with pytest.raises(errors.StatusError) as err:
            await asyncio.wait_for(client.next(), 2)
        assert err.value.code == 410 and err.value.status()["message"] == expired["message"]
    assert fan.upstreams == 0
    again = fan.subscribe(request())
    assert again
    await settle()
    assert len(storage.calls) == 2


async def test_a_lost_replica_is_resumed_from_the_position_without_gap_or_duplicate() -> None:
    storage = Storage()
    resumed: list[int] = []
    fan = make(storage, resumed)
    client = fan.subscribe(request("10", bookmarks=True))
    assert client
    await settle()
    storage.calls[0].push(("ADDED", 11), ("BOOKMARK", 14))
    assert await revisions(client) == [("ADDED", 11), ("BOOKMARK", 14)]
    storage.calls[0].fail(RpcError(grpc.StatusCode.UNAVAILABLE))
    await settle()
    assert resumed == [14] and storage.calls[0].cancelled
    storage.calls[1].push(("ADDED", 15))
    assert await revisions(client) == [("ADDED", 15)]


async def test_storage_ending_the_stream_ends_the_clients_cleanly() -> None:
    storage = Storage()
    fan = make(storage)
    client = fan.subscribe(request())
    assert client
    await settle()
    storage.calls[0].fail(StopAsyncIteration())
    assert await asyncio.wait_for(client.next(), 2) is None
    assert fan.upstreams == 0


async def test_the_last_client_to_leave_cancels_the_storage_watch() -> None:
    storage = Storage()
    fan = make(storage)
    a, b = fan.subscribe(request()), fan.subscribe(request())
    assert a and b
    await settle()
    a.close()
    assert not storage.calls[0].cancelled and fan.upstreams == 1
    b.close()
    await settle()
    assert storage.calls[0].cancelled and fan.upstreams == 0


async def test_a_client_too_far_behind_is_ended_and_the_others_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watchfanout, "CLIENT_QUEUE", 3)
    storage = Storage()
    fan = make(storage)
    slow, fast = fan.subscribe(request()), fan.subscribe(request())
    assert slow and fast
    await settle()
    for rv in range(11, 16):
        storage.calls[0].push(("ADDED", rv))
        assert await revisions(fast) == [("ADDED", rv)]
    got = []
    while (batch := await asyncio.wait_for(slow.next(), 2)) is not None:
        got.extend(e.resource_version for e in batch)
    assert got == [11, 12, 13]  # what it had queued, then the end (it re-watches from 13)
    assert fan.clients() == 1
