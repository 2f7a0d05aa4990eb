"""One shared etcd Watch stream per storage process, multiplexing every client watch.

etcd's Watch RPC is bidirectional: a client creates many watches on one
stream, each with its own ``watch_id``, and etcd tags every response with
it. :class:`WatchMux` owns that stream: :meth:`WatchMux.subscribe` creates a
watch (client-assigned ids, etcd >= 3.4) and returns a :class:`Subscription`
whose :meth:`Subscription.next` yields :class:`WatchBatch` es in revision
order; :meth:`Subscription.close` cancels the etcd watch. The stream is
opened lazily and, if it breaks, every subscription fails with 503 so the
client re-watches from its last resourceVersion (docs/architecture.md, "Failure policy").

Progress (for bookmarks). Each watch asks for etcd's per-watch progress
notifications (delivered in order with its events, but only every
``--experimental-watch-progress-notify-interval``, 10 minutes by default), and
the mux sends a ``WatchProgressRequest`` every ``progress_interval`` seconds
while some subscription wants progress. etcd before 3.5.8 may deliver that
stream-wide answer (watch id -1) ahead of events still queued for a watcher
(and a watch that started in the past is caught up only every 100 ms), so an
answer's revision is trusted only once a later answer arrived at least
SETTLE_SECONDS after it: then watches created before that answer arrived get
a progress batch at its revision.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import grpc

from kapi import errors
from kapi_proto.etcd import rpc_pb2
from services.storage.etcd import CompactedError, EtcdClient

log = logging.getLogger(__name__)

CREATE_TIMEOUT = 10.0  # seconds to wait for etcd to confirm a new watch
MAX_PENDING = 10_000  # queued batches per subscription before it is closed as too slow
_PROGRESS_ALL = -1  # watch_id of an answer to WatchProgressRequest
# Seconds before a stream-wide progress answer is trusted: etcd < 3.5.13 may send it ahead of events still queued
# for a watcher, and a watcher that started in the past ("unsynced") is caught up by etcd every 100 ms.
SETTLE_SECONDS = 0.25


class WatchOverflow(Exception):
    """The subscriber fell more than MAX_PENDING batches behind; the watch was closed."""


@dataclass(frozen=True)
class WatchBatch:
    """Events of one etcd WatchResponse, or a progress notification.

    ``revision`` is the etcd header revision. With ``progress`` True there
    are no events and every event of this watch up to ``revision`` has been
    delivered (the basis of BOOKMARK events).
    """

    events: Sequence[rpc_pb2.Event]
    revision: int
    progress: bool = False


@dataclass(eq=False)
class Subscription:
    """One etcd watch on the shared stream. Consume with :meth:`next`; always :meth:`close`."""

    mux: WatchMux
    watch_id: int
    key: bytes
    start_revision: int
    wants_progress: bool
    created: asyncio.Future[int] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    created_epoch: int | None = None
    _pending: deque[WatchBatch | BaseException] = field(default_factory=deque)
    _wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    _closed: bool = False

    def _push(self, item: WatchBatch | BaseException) -> None:
        if self._closed:
            return
        if isinstance(item, WatchBatch) and len(self._pending) >= MAX_PENDING:
            log.warning("etcd watch %d: consumer too slow, closing", self.watch_id)
            item = WatchOverflow()
        self._pending.append(item)
        self._wakeup.set()
        if isinstance(item, BaseException):
            self.mux._forget(self)

    async def next(self) -> WatchBatch:
        """The next batch.

        Raises CompactedError (start revision compacted), StatusError (stream lost) or WatchOverflow.
        """
        while not self._pending:
            self._wakeup.clear()
            await self._wakeup.wait()
        item = self._pending.popleft()
        if isinstance(item, BaseException):
            self._pending.appendleft(item)  # stays terminal
            raise item
        return item

    def close(self) -> None:
        """Cancel the etcd watch (idempotent, never blocks)."""
        if not self._closed:
            self._closed = True
            self.mux._cancel(self)


class WatchMux:
    """The shared etcd Watch stream. ``progress_interval`` is in seconds (stream-wide progress requests)."""

    def __init__(self, client: EtcdClient, progress_interval: float = 30.0):
        self._client = client
        self._progress_interval = progress_interval
        self._ids = itertools.count(1)
        self._subs: dict[int, Subscription] = {}
        self._outbox: asyncio.Queue[rpc_pb2.WatchRequest | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._progress_task: asyncio.Task[None] | None = None
        self._epoch = 0
        # Stream-wide progress answers not yet trusted: (monotonic time received, epoch, revision).
        self._answers: deque[tuple[float, int, int]] = deque()
        self._progress_answer: asyncio.Future[int] | None = None  # the next answer, while one is requested

    async def subscribe(self, key: bytes, range_end: bytes, start_revision: int, *,
                        wants_progress: bool = False) -> Subscription:
        """Watch ``[key, range_end)`` (or just ``key``) from ``start_revision`` (0 = now), with prev_kv.

        Returns once etcd confirmed the watch. Raises StatusError 503/504 if
        the stream cannot be opened or etcd does not confirm within
        CREATE_TIMEOUT. A compacted start revision surfaces as CompactedError
        from the first :meth:`Subscription.next`.
        """
        self._ensure_stream()
        assert self._outbox is not None
        sub = Subscription(self, next(self._ids), key, start_revision, wants_progress)
        self._subs[sub.watch_id] = sub
        self._outbox.put_nowait(rpc_pb2.WatchRequest(create_request=rpc_pb2.WatchCreateRequest(
            key=key, range_end=range_end, start_revision=start_revision, prev_kv=True, progress_notify=True,
            watch_id=sub.watch_id)))
        try:
            async with asyncio.timeout(CREATE_TIMEOUT):
                await asyncio.shield(sub.created)
        except TimeoutError:
            sub.close()
            raise errors.timeout(f"etcd did not confirm a watch within {CREATE_TIMEOUT:g}s") from None
        except BaseException:
            sub.close()
            raise
        return sub

    async def progress_round(self) -> int:
        """Ask etcd for a stream-wide progress notification now (RequestProgress) and wait for the answer;
        returns its revision. Concurrent callers share one request. Subscriptions that want progress get a
        progress batch per answer (at the previous answer's revision, see the module docstring), so two rounds
        bring every such watch up to the revision etcd had when the first was asked. Raises StatusError 503
        if the stream fails."""
        self._ensure_stream()
        if self._progress_answer is None or self._progress_answer.done():
            assert self._outbox is not None
            self._progress_answer = asyncio.get_running_loop().create_future()
            self._outbox.put_nowait(rpc_pb2.WatchRequest(progress_request=rpc_pb2.WatchProgressRequest()))
        return await asyncio.shield(self._progress_answer)

    async def close(self) -> None:
        """Stop the stream; every open subscription fails with 503."""
        for task in (self._progress_task, self._task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._fail_all(errors.unavailable("the storage service is shutting down"))

    # ------------------------------------------------------------ internals

    def _ensure_stream(self) -> None:
        if self._task is not None and not self._task.done():
            return
        self._outbox = asyncio.Queue()
        self._answers.clear()
        self._task = asyncio.get_running_loop().create_task(self._run(self._outbox), name="etcd-watch-stream")
        if self._progress_task is None or self._progress_task.done():
            self._progress_task = asyncio.get_running_loop().create_task(self._request_progress(),
                                                                         name="etcd-watch-progress")

    def _cancel(self, sub: Subscription) -> None:
        if self._subs.pop(sub.watch_id, None) is not None and self._outbox is not None:
            self._outbox.put_nowait(rpc_pb2.WatchRequest(
                cancel_request=rpc_pb2.WatchCancelRequest(watch_id=sub.watch_id)))
        if not sub.created.done():
            sub.created.cancel()

    def _forget(self, sub: Subscription) -> None:
        """A subscription ended on etcd's side (canceled) or locally (overflow): drop it, cancel if still open."""
        if self._subs.get(sub.watch_id) is sub:
            self._cancel(sub)

    def _fail_all(self, err: BaseException) -> None:
        answer, self._progress_answer = self._progress_answer, None
        if answer is not None and not answer.done():
            answer.set_exception(err)
            answer.exception()
        subs, self._subs = list(self._subs.values()), {}
        for sub in subs:
            _fail_created(sub, err)
            sub._push(err)

    async def _requests(self, outbox: asyncio.Queue[rpc_pb2.WatchRequest | None]) -> AsyncIterator[
            rpc_pb2.WatchRequest]:
        while True:
            request = await outbox.get()
            if request is None:
                return
            yield request

    async def _run(self, outbox: asyncio.Queue[rpc_pb2.WatchRequest | None]) -> None:
        ep = self._client.endpoint()
        call = ep.watch.Watch(self._requests(outbox))
        try:
            async for response in call:
                self._dispatch(response)
            err: errors.StatusError = errors.unavailable("the etcd watch stream ended")
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                self._client.rotate()
            log.warning("etcd watch stream to %s failed: %s %s", ep.target, exc.code(), exc.details())
            err = errors.unavailable(f"the etcd watch stream failed: {exc.details()}")
        except asyncio.CancelledError:
            call.cancel()
            raise
        finally:
            outbox.put_nowait(None)
        if self._outbox is outbox:
            self._outbox = None
        self._fail_all(err)

    def _dispatch(self, response: rpc_pb2.WatchResponse) -> None:
        revision = response.header.revision
        if response.watch_id == _PROGRESS_ALL and not response.created and not response.canceled:
            self._on_progress_all(revision)
            return
        sub = self._subs.get(response.watch_id)
        if sub is None:
            return  # a watch we already canceled
        if response.created:
            sub.created_epoch = self._epoch
            if not sub.created.done():
                sub.created.set_result(revision)
            if not response.canceled:
                return
        if response.canceled:
            if response.compact_revision:
                sub._push(CompactedError(sub.start_revision - 1, response.compact_revision))
            else:
                err = errors.internal(f"etcd canceled the watch: {response.cancel_reason or 'no reason given'}")
                _fail_created(sub, err)
                sub._push(err)
            return
        if response.events:
            sub._push(WatchBatch(tuple(response.events), revision))
        elif sub.wants_progress:
            sub._push(WatchBatch((), revision, progress=True))  # per-watch progress notify: ordered

    def _on_progress_all(self, revision: int) -> None:
        self._epoch += 1
        now = time.monotonic()
        self._answers.append((now, self._epoch, revision))
        confirmed: tuple[float, int, int] | None = None
        while len(self._answers) > 1 and self._answers[0][0] <= now - SETTLE_SECONDS:
            confirmed = self._answers.popleft()
        if confirmed is not None:
            _, epoch, at = confirmed
            for sub in list(self._subs.values()):
                if (sub.wants_progress and sub.created_epoch is not None and sub.created_epoch < epoch
                        and at >= sub.start_revision - 1):
                    sub._push(WatchBatch((), at, progress=True))
        answer, self._progress_answer = self._progress_answer, None
        if answer is not None and not answer.done():
            answer.set_result(revision)

    async def _request_progress(self) -> None:
        while True:
            await asyncio.sleep(self._progress_interval)
            if self._outbox is not None and any(s.wants_progress for s in self._subs.values()):
                self._outbox.put_nowait(rpc_pb2.WatchRequest(progress_request=rpc_pb2.WatchProgressRequest()))


def _fail_created(sub: Subscription, err: BaseException) -> None:
    if not sub.created.done():
        sub.created.set_exception(err)
        sub.created.exception()  # retrieved: no "never retrieved" warning if nobody waits any more
