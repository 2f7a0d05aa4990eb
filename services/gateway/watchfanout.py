"""Shared storage watches: one storage stream per distinct watch, its events handed to every client on it.

kube-apiserver's watch cache serves all watchers of a resource from one etcd
watch (staging/src/k8s.io/apiserver/pkg/storage/cacher, ``dispatchEvents``).
kapi's watch cache lives in storage, so each client watch was its own gRPC
stream from storage to a gateway: with 1,000 clients watching a namespace,
storage serialised and the gateway decoded 1,000 copies of every event
(write-to-delivery p99 10.6 s at 20 creates/s, docs/benchmarks.md). Here a
gateway opens one storage watch per distinct (key, label selector, field
selector) and gives each batch it receives to every client watch on it.

Who shares: a watch from an explicit resourceVersion N (what informers and
``kubectl get -w`` after a list send) with JSON output and no
``sendInitialEvents``. An upstream remembers the events it received since it
began (up to HISTORY), so a client joins it when every event after N is
either remembered or still to come: N at or after where the history begins
and not past the upstream's position (a newer N could be a "Too large
resource version", which only storage can tell). The client then gets the
remembered events after N followed by the live ones, in order, with no gap
and no duplicate. Any other watch (resourceVersion "" or "0",
``sendInitialEvents``, Table or metadata-only output, an N the upstream cannot
serve) has a storage stream of its own, as before (handlers/watch.py).

Bookmarks: the upstream always asks storage for them; a client gets those
after its N, and only if it asked (``allowWatchBookmarks``). Failures: the
upstream resumes on another storage replica from its position
(handlers/watch.py ``resume``); an error it cannot resume ends every client
on it with the same ERROR event, and storage ending the stream ends them
cleanly (they re-watch). A client more than CLIENT_QUEUE batches behind is
ended cleanly too (it re-watches from the last resourceVersion it read), as
kube's cacher terminates a watcher that blocks its dispatch. Every client
watch still passed authentication, APF and authorization on its own request
(the chain runs before the handler); sharing is below all of that.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from kapi import errors
from kapi.watchbookmarks import next_bookmark_time
from kapi_proto.kapi.storage.v1 import storage_pb2

log = logging.getLogger(__name__)

HISTORY = 10_000  # events an upstream remembers for clients that join behind its position
CLIENT_QUEUE = 1_000  # batches a client may fall behind before its watch ends (it re-watches)
FOREVER = 1e9  # seconds: an upstream has no timeout of its own; it ends when its last client leaves

Key = tuple[bytes, str, str, tuple[str, ...]]
# (request, from revision, deadline in loop time) -> (call, stream iterator, first batch), None to end cleanly;
# raises errors.StatusError when it cannot resume (handlers/watch.py's resume).
Resume = Callable[[storage_pb2.WatchRequest, int, float], Awaitable[tuple[Any, Any, Any] | None]]

_END = object()  # a client's queue item: the watch ends cleanly


def shareable(request: storage_pb2.WatchRequest) -> bool:
    """True for a watch that may join an upstream: from an explicit resourceVersion, no initial events."""
    return request.resource_version not in ("", "0") and not request.send_initial_events


def key_of(request: storage_pb2.WatchRequest) -> Key:
    """What two watches must agree on to share an upstream (everything that filters events)."""
    return (request.key.SerializeToString(deterministic=True), request.label_selector, request.field_selector,
            tuple(request.selectable_fields))


class Client:
    """One client watch on an upstream: a queue of event batches (lists of storage WatchEvents) after ``after``."""

    def __init__(self, upstream: Upstream, after: int, bookmarks: bool) -> None:
        self.upstream = upstream
        self.after = after
        self.bookmarks = bookmarks
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._timer: asyncio.TimerHandle | None = None  # the next periodic / pre-timeout bookmark

    def schedule_bookmarks(self, deadline: float) -> None:
        """Give this (bookmarking) client kube's periodic bookmarks: about every minute and 2 s before its
        ``deadline`` (loop time), each at the upstream's position when that is past ``after``, the resourceVersion
        the watch started from (:func:`kapi.watchbookmarks.next_bookmark_time`; the upstream, shared and without
        a deadline, cannot time them). One timer per client, nothing per event."""
        loop = asyncio.get_running_loop()

        def fire() -> None:
            position = self.upstream.position
            if position > self.after and self._queue.qsize() < CLIENT_QUEUE:
                self._queue.put_nowait([storage_pb2.WatchEvent(type="BOOKMARK", resource_version=position)])
            arm()

        def arm() -> None:
            at = next_bookmark_time(loop.time(), deadline)
            self._timer = None if at is None else loop.call_at(at, fire)

        arm()

    def offer(self, events: list[Any], plain: bool = False) -> bool:
        """Queue the events of ``events`` (in revision order) this client gets; False when it is too far behind
        (then it is ended). ``plain``: the batch has no bookmark (so a client past none of it takes it whole)."""
        if events and events[0].resource_version > self.after and (plain or self.bookmarks):
            wanted = events  # the common case: the same list for every client, no copy
        else:
            wanted = [e for e in events if e.resource_version > self.after and (self.bookmarks or e.type != "BOOKMARK")]
        if not wanted:
            return True
        if self._queue.qsize() >= CLIENT_QUEUE:
            self._queue.put_nowait(_END)
            return False
        self._queue.put_nowait(wanted)
        return True

    def end(self, item: Any = _END) -> None:
        """End this client: cleanly (default) or with a StatusError, after what is already queued."""
        self._queue.put_nowait(item)

    async def next(self) -> list[Any] | None:
        """The next batch (non-empty list of WatchEvents); None when the watch ends cleanly.

        Raises errors.StatusError when the upstream failed (send it as the ERROR event).
        """
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # stays ended
            return None
        if isinstance(item, errors.StatusError):
            self._queue.put_nowait(item)
            raise item
        assert isinstance(item, list)
        return item

    def close(self) -> None:
        """Leave the upstream (the client's request ended); the last client to leave stops it."""
        if self._timer is not None:
            self._timer.cancel()
        self.upstream.leave(self)


class Upstream:
    """One storage watch shared by every client watch of the same :data:`Key` on this gateway.

    ``start`` is the revision it watches from; ``position`` the highest revision it has received
    (events and bookmarks); ``covered_from`` the revision after which every event is remembered.
    """

    def __init__(self, fanout: Fanout, key: Key, request: storage_pb2.WatchRequest) -> None:
        self.fanout = fanout
        self.key = key
        self.request = storage_pb2.WatchRequest()
        self.request.CopyFrom(request)
        self.request.allow_bookmarks = True
        self.start = int(request.resource_version)
        self.position = self.start
        self.covered_from = self.start
        self.history: collections.deque[Any] = collections.deque()
        self.clients: set[Client] = set()
        self.failed: errors.StatusError | None = None
        self._task: asyncio.Task[None] | None = None
        self._call: Any = None

    def serves(self, after: int) -> bool:
        """True when a client from revision ``after`` can get every event after it from here."""
        return self.failed is None and self.covered_from <= after <= self.position

    def join(self, after: int, bookmarks: bool) -> Client:
        """A client from revision ``after`` (``serves(after)`` holds): remembered events queued, live ones follow."""
        client = Client(self, after, bookmarks)
        backlog = [e for e in self.history if e.resource_version > after]
        if backlog:
            client.offer(backlog)
        self.clients.add(client)
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"watch-upstream-{self.start}")
        return client

    def leave(self, client: Client) -> None:
        """Remove ``client``; with none left the storage watch is cancelled and the upstream forgotten."""
        self.clients.discard(client)
        if not self.clients:
            self._stop()

    def _stop(self) -> None:
        self.fanout.forget(self)
        if self._call is not None:
            self.fanout.watches.discard(self._call)
            self._call.cancel()
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()

    def _deliver(self, events: list[Any]) -> None:
        for event in events:
            self.position = max(self.position, event.resource_version)
            if event.type != "BOOKMARK":
                self.history.append(event)
        while len(self.history) > HISTORY:
            self.covered_from = self.history.popleft().resource_version
        plain = all(e.type != "BOOKMARK" for e in events)
        for client in list(self.clients):
            if not client.offer(events, plain):
                log.info("a watch of %s fell %d batches behind; ending it (the client re-watches)",
                         self.request.key.resource, CLIENT_QUEUE)
                self.clients.discard(client)

    def _end(self, item: Any) -> None:
        if isinstance(item, errors.StatusError):
            self.failed = item
        self.fanout.forget(self)
        for client in list(self.clients):
            client.end(item)
        self.clients.clear()

    async def _run(self) -> None:
        fanout = self.fanout
        loop = asyncio.get_running_loop()
        call = fanout.storage().Watch(self.request, timeout=FOREVER)
        self._call = call
        fanout.watches.add(call)
        stream = call.__aiter__()
        try:
            while True:
                try:
                    batch = await stream.__anext__()
                except StopAsyncIteration:
                    self._end(_END)  # storage ended it: the clients re-watch
                    return
                except grpc.RpcError as exc:
                    code = exc.code() if hasattr(exc, "code") else None
                    if code == grpc.StatusCode.CANCELLED or fanout.shutting_down():
                        self._end(_END)
                        return
                    if code != grpc.StatusCode.UNAVAILABLE:
                        self._end(errors.from_rpc_error(exc, "storage"))
                        return
                    key = self.request.key
                    log.info("storage watch of %s%s broke (%s); resuming from resourceVersion %d (shared by %d)",
                             key.resource, f" in {key.namespace}" if key.namespace else "", code.name, self.position,
                             len(self.clients))
                    fanout.watches.discard(call)
                    call.cancel()
                    try:
                        resumed = await fanout.resume(self.request, self.position, loop.time() + FOREVER)
                    except errors.StatusError as err:
                        self._end(err)
                        return
                    if resumed is None:
                        self._end(_END)
                        return
                    call, stream, batch = resumed
                    self._call = call
                self._deliver(list(batch.events))
        except asyncio.CancelledError:
            self._end(_END)
            raise
        finally:
            fanout.watches.discard(call)
            call.cancel()


class Fanout:
    """A gateway's shared storage watches, by :data:`Key` (see the module docstring).

    ``storage`` returns the storage stub, ``watches`` is the gateway's set of open storage calls (cancelled
    when it drains), ``shutting_down`` says whether it drains, ``resume`` reopens a broken storage watch.
    """

    def __init__(self, storage: Callable[[], Any], watches: set[Any], shutting_down: Callable[[], bool],
                 resume: Resume) -> None:
        self.storage = storage
        self.watches = watches
        self.shutting_down = shutting_down
        self.resume = resume
        self._upstreams: dict[Key, Upstream] = {}

    def subscribe(self, request: storage_pb2.WatchRequest) -> Client | None:
        """A client on the upstream for ``request`` (made if there is none), or None when this watch needs a
        storage stream of its own (not :func:`shareable`, or the upstream cannot serve its revision)."""
        if not shareable(request):
            return None
        after = int(request.resource_version)
        key = key_of(request)
        upstream = self._upstreams.get(key)
        if upstream is None:
            upstream = self._upstreams[key] = Upstream(self, key, request)
        if not upstream.serves(after):
            return None
        return upstream.join(after, request.allow_bookmarks)

    def forget(self, upstream: Upstream) -> None:
        """Drop ``upstream`` from the registry (it ended or has no clients); later watches start a new one."""
        if self._upstreams.get(upstream.key) is upstream:
            del self._upstreams[upstream.key]

    @property
    def upstreams(self) -> int:
        """How many shared storage watches are open."""
        return len(self._upstreams)

    def clients(self) -> int:
        """How many client watches they serve."""
        return sum(len(u.clients) for u in self._upstreams.values())

