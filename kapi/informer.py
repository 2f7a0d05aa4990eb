"""One List+Watch informer for every kapi component that mirrors a collection (client-go ``tools/cache``).

An :class:`Informer` does what client-go's Reflector plus SharedInformer do
("client-go: tools/cache", ``reflector.go`` ListAndWatch and
``shared_informer.go``; "API concepts": "Efficient detection of changes",
"Retrieving large results sets in chunks", "Watch bookmarks"):

1. **List** the collection through a :class:`ListerWatcher` (following
   ``continue`` tokens; every page is read at the first page's revision),
   replace the local state, mark the informer synced.
2. **Watch** from the list's revision with bookmarks; every event (and every
   BOOKMARK) advances :attr:`Informer.revision`, the resourceVersion the
   next watch starts from.
3. A watch that **ends** cleanly is resumed from :attr:`Informer.revision`
   (no re-list), unless it ended within ``short_watch`` seconds without a
   single event (client-go's "very short watch"), which counts as a failure.
4. **410 Expired** (the revision was compacted, or a ``continue`` token
   expired) re-lists at once; any other failure (storage unavailable, a
   broken stream, a bug in a handler) re-lists after a capped exponential
   backoff (``min_backoff`` doubling to ``max_backoff`` seconds, times
   ``1 + jitter * random()``), reset whenever a watch delivers an event.

Consumers register synchronous callbacks with :meth:`Informer.on` (they run
on the informer's task, so they should only update memory or enqueue work):
per object ``add(obj)`` / ``update(old, new)`` / ``delete(obj)`` (client-go's
ResourceEventHandler; a re-list delivers the difference against the store
as adds, updates and deletes), ``replace(objects, revision)`` after every
list, ``event(type, obj, revision)`` for every ADDED/MODIFIED/DELETED watch
event, and ``change()`` after every list and every watch batch that changed
something. With ``keep_store=False`` the informer keeps no objects (for
consumers that index only what they need, e.g. authn's uid table); only
``replace``, ``event`` and ``change`` are then available.

:class:`StorageListerWatcher` lists and watches through the storage gRPC
stub; the controllers bring their own over the REST API. :class:`IndexSync`
feeds one index (``replace``/``apply`` per resource, like the authz RBAC
index and the authn object index) from several collections.

Objects are decoded JSON dicts; stores are keyed by
:func:`meta_namespace_key` (``namespace/name``, or ``name`` when
cluster-scoped) unless another ``key_func`` is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc

from kapi import errors, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

log = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED, BOOKMARK = "ADDED", "MODIFIED", "DELETED", "BOOKMARK"
CHANGES = (ADDED, MODIFIED, DELETED)
PAGE_SIZE = 500  # objects per List page (client-go pager's default)
LIST_TIMEOUT = 30.0  # seconds, the deadline of one List page
SHORT_WATCH = 1.0  # seconds: a watch ending sooner without an event is a failure (client-go "very short watch")

Object = dict[str, Any]
KeyFunc = Callable[[Object], str]
AddHandler = Callable[[Object], None]
UpdateHandler = Callable[[Object, Object], None]
ReplaceHandler = Callable[[list[Object], int], None]
EventHandler = Callable[[str, Object, int], None]
ChangeHandler = Callable[[], None]


def meta_namespace_key(obj: Object) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object (client-go ``MetaNamespaceKeyFunc``).

    Returns "" for an object without ``metadata.name``.
    """
    meta = obj.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    if not name:
        return ""
    return f"{namespace}/{name}" if namespace else name


def namespace_key(namespace: str, name: str) -> str:
    """The :func:`meta_namespace_key` of ``namespace``/``name`` ("" namespace = cluster-scoped)."""
    return f"{namespace}/{name}" if namespace else name


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """(namespace, name) of a :func:`meta_namespace_key` key (client-go ``SplitMetaNamespaceKey``)."""
    namespace, _, name = key.rpartition("/")
    return namespace, name


@dataclass(frozen=True)
class Event:
    """One watch event: ``type`` (ADDED, MODIFIED, DELETED, BOOKMARK), the decoded ``object`` ({} if none)
    and the storage revision (``resource_version``, an etcd revision) it happened at."""

    type: str
    object: Object = field(default_factory=dict)
    resource_version: int = 0


@dataclass(frozen=True)
class ListResult:
    """A complete list: every object (all pages) and the revision the list was read at."""

    items: list[Object]
    resource_version: int


class ListerWatcher(Protocol):
    """Where an :class:`Informer` reads from (client-go ``cache.ListerWatcher``).

    Both methods raise :class:`kapi.errors.StatusError`: code 410 when the
    revision (or a ``continue`` token) is no longer available, 503/504
    when the source cannot answer.
    """

    async def list(self) -> ListResult:
        """Every object of the collection, following ``continue`` tokens; read at one revision."""
        ...

    def watch(self, resource_version: int) -> AsyncIterator[Sequence[Event]]:
        """Batches of events after ``resource_version``, with bookmarks; ends when the source ends it."""
        ...


class StorageListerWatcher:
    """A :class:`ListerWatcher` over the storage service's ``List``/``Watch`` RPCs.

    ``group``/``resource`` name the collection, ``namespace`` "" means every
    namespace. Lists are read in pages of ``page_size`` objects, each page
    bounded by ``list_timeout`` seconds. Items or events whose JSON does
    not decode are logged and skipped.
    """

    def __init__(self, stub: storage_pb2_grpc.StorageStub, group: str, resource: str, namespace: str = "", *,
                 page_size: int = PAGE_SIZE, list_timeout: float = LIST_TIMEOUT):
        self._stub = stub
        self.key = storage_pb2.ResourceKey(group=group, resource=resource, namespace=namespace)
        self._page_size = page_size
        self._list_timeout = list_timeout

    async def list(self) -> ListResult:
        """All pages of the collection; raises StatusError (410 if a ``continue`` token expired, 503...)."""
        items: list[Object] = []
        token = ""
        revision = 0
        while True:
            request = storage_pb2.ListRequest(key=self.key, limit=self._page_size, **{"continue": token})
            try:
                response = await self._stub.List(request, timeout=self._list_timeout)
            except grpc.RpcError as exc:
                raise errors.from_rpc_error(exc, "storage") from None
            revision = revision or int(response.resource_version)
            for raw in response.items:
                try:
                    items.append(jsonutil.loads(raw))
                except ValueError as exc:
                    log.warning("ignoring undecodable %s object: %s", self.key.resource, exc)
            token = getattr(response, "continue")
            if not token:
                return ListResult(items, revision)

    async def watch(self, resource_version: int) -> AsyncIterator[Sequence[Event]]:
        """Event batches after ``resource_version`` (bookmarks on); raises StatusError when the stream fails."""
        call = self._stub.Watch(storage_pb2.WatchRequest(key=self.key, resource_version=str(resource_version),
                                                         allow_bookmarks=True))
        try:
            async for response in call:
                batch = []
                for event in response.events:
                    try:
                        obj = jsonutil.loads(event.object) if event.object else {}
                    except ValueError as exc:
                        log.warning("ignoring undecodable %s watch event: %s", self.key.resource, exc)
                        continue
                    batch.append(Event(event.type, obj if isinstance(obj, dict) else {}, event.resource_version))
                yield batch
        except grpc.RpcError as exc:
            raise errors.from_rpc_error(exc, "storage") from None
        finally:
            call.cancel()


class Informer:
    """One collection mirrored from a :class:`ListerWatcher` (see the module docstring for the loop).

    Attributes: ``store`` (key -> object; empty with ``keep_store=False``),
    ``synced`` (an :class:`asyncio.Event` set after the first list),
    ``revision`` (the storage revision the informer reflects), ``lists``
    (how many lists completed), ``events_seen`` (watch events received).
    ``name`` names the collection in logs.
    ``resync`` > 0 re-delivers every stored object as ``update(obj, obj)``
    every ``resync`` seconds (client-go's resync period). ``sleep`` and
    ``clock`` (monotonic seconds) are injectable for tests.
    """

    def __init__(self, source: ListerWatcher, *, name: str, keep_store: bool = True,
                 key_func: KeyFunc = meta_namespace_key, resync: float = 0.0, min_backoff: float = 0.1,
                 max_backoff: float = 5.0, jitter: float = 0.0, short_watch: float = SHORT_WATCH,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                 clock: Callable[[], float] = time.monotonic):
        self.source = source
        self.name = name
        self.keep_store = keep_store
        self.key_func = key_func
        self.resync = resync
        self.min_backoff, self.max_backoff, self.jitter = min_backoff, max_backoff, jitter
        self.short_watch = short_watch
        self._sleep = sleep
        self._clock = clock
        self.store: dict[str, Object] = {}
        self.synced = asyncio.Event()
        self.revision = 0
        self.lists = 0
        self.events_seen = 0
        self._need_list = True
        self._task: asyncio.Task[None] | None = None
        self._adds: list[AddHandler] = []
        self._updates: list[UpdateHandler] = []
        self._deletes: list[AddHandler] = []
        self._replaces: list[ReplaceHandler] = []
        self._events: list[EventHandler] = []
        self._changes: list[ChangeHandler] = []

    # ------------------------------------------------------------ handlers and reads

    def on(self, add: AddHandler | None = None, update: UpdateHandler | None = None,
           delete: AddHandler | None = None, replace: ReplaceHandler | None = None,
           event: EventHandler | None = None, change: ChangeHandler | None = None) -> None:
        """Register callbacks (module docstring); raises ValueError for add/update/delete without a store."""
        if (add or update or delete) and not self.keep_store:
            raise ValueError(f"informer {self.name}: add/update/delete handlers need keep_store=True")
        self._adds += [add] if add else []
        self._updates += [update] if update else []
        self._deletes += [delete] if delete else []
        self._replaces += [replace] if replace else []
        self._events += [event] if event else []
        self._changes += [change] if change else []

    @property
    def has_synced(self) -> bool:
        """True once the first list has been applied (client-go ``HasSynced``)."""
        return self.synced.is_set()

    def get(self, key: str) -> Object | None:
        """The stored object with ``key`` (see ``key_func``), or None."""
        return self.store.get(key)

    def items(self) -> list[Object]:
        """Every stored object."""
        return list(self.store.values())

    # ------------------------------------------------------------ running

    def start(self) -> None:
        """Run :meth:`run` in a task (idempotent); needs a running event loop."""
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name=f"informer {self.name}")

    async def stop(self) -> None:
        """Cancel the task :meth:`start` made and wait for it to end."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def wait_synced(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the first list (does not start); returns :attr:`has_synced`."""
        if self.synced.is_set():  # the common case (every admission plugin asks per request): no timer, no task
            return self.has_synced
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.synced.wait()
        return self.has_synced

    async def run(self) -> None:
        """List (unless :meth:`relist` just did), then watch, until cancelled; never raises otherwise."""
        resync_task = asyncio.create_task(self._resync_loop()) if self.resync > 0 else None
        backoff = self.min_backoff
        try:
            while True:
                seen = self.events_seen
                try:
                    if self._need_list:
                        await self.relist()
                    started = self._clock()
                    await self._watch()
                    if self.events_seen != seen or self._clock() - started >= self.short_watch:
                        continue  # the source ended a healthy watch: resume from self.revision
                    log.warning("watch of %s ended at once without events; re-listing in %.1fs", self.name, backoff)
                except errors.StatusError as err:
                    if err.code == 410:
                        log.info("watch of %s expired (%s); re-listing", self.name, err.message)
                        self._need_list = True
                        continue
                    log.warning("list/watch of %s failed: %s; re-listing in %.1fs", self.name, err.message, backoff)
                except Exception:  # a bug must not end the informer for good: log it and start over
                    log.exception("list/watch of %s failed; re-listing in %.1fs", self.name, backoff)
                self._need_list = True
                if self.events_seen != seen:  # the watch worked for a while: start the backoff over
                    backoff = self.min_backoff
                await self._sleep(backoff * (1 + self.jitter * random.random()))
                backoff = min(backoff * 2, self.max_backoff)
        finally:
            if resync_task is not None:
                resync_task.cancel()

    async def relist(self) -> None:
        """List now and replace the state (the next watch starts from this list); raises StatusError."""
        result = await self.source.list()
        objects = [obj for obj in result.items if isinstance(obj, dict) and self.key_func(obj)]
        if self.keep_store:
            fresh = {self.key_func(obj): obj for obj in objects}
            for key, gone in list(self.store.items()):
                if key not in fresh:
                    del self.store[key]
                    self._emit(self._deletes, gone)
            for key, obj in fresh.items():
                old = self.store.get(key)
                self.store[key] = obj
                if old is None:
                    self._emit(self._adds, obj)
                elif _resource_version(old) != _resource_version(obj):
                    for update in self._updates:
                        update(old, obj)
        self.revision = result.resource_version
        for replace in self._replaces:
            replace(objects, result.resource_version)
        self.lists += 1
        self._need_list = False
        self.synced.set()
        self._changed()

    async def _watch(self) -> None:
        """Follow one watch from :attr:`revision` until it ends (returns) or fails (raises); counts events."""
        async with contextlib.aclosing(self.source.watch(self.revision)) as stream:  # type: ignore[type-var]
            async for batch in stream:
                changed = False
                for event in batch:
                    self.events_seen += 1
                    self.revision = max(self.revision, event.resource_version)
                    if event.type == BOOKMARK:
                        continue
                    if event.type not in CHANGES:
                        log.warning("ignoring %s watch event of unknown type %r", self.name, event.type)
                        continue
                    changed = self._apply(event) or changed
                if changed:
                    self._changed()

    def _apply(self, event: Event) -> bool:
        obj = event.object
        key = self.key_func(obj)
        if not key:
            log.warning("ignoring %s %s watch event without metadata.name", self.name, event.type)
            return False
        if self.keep_store:
            old = self.store.get(key)
            if event.type == DELETED:
                self.store.pop(key, None)
                self._emit(self._deletes, obj)
            else:
                self.store[key] = obj
                if old is None:
                    self._emit(self._adds, obj)
                else:
                    for update in self._updates:
                        update(old, obj)
        for handler in self._events:
            handler(event.type, obj, event.resource_version)
        return True

    @staticmethod
    def _emit(handlers: list[AddHandler], obj: Object) -> None:
        for handler in handlers:
            handler(obj)

    def _changed(self) -> None:
        for handler in self._changes:
            handler()

    async def _resync_loop(self) -> None:
        while True:
            await self._sleep(self.resync)
            for obj in list(self.store.values()):
                for update in self._updates:
                    update(obj, obj)


def _resource_version(obj: Object) -> Any:
    return (obj.get("metadata") or {}).get("resourceVersion")


class Index(Protocol):
    """What :class:`IndexSync` feeds: per-resource ``replace`` and ``apply`` plus a ``synced`` flag."""

    @property
    def synced(self) -> bool:
        """True once every resource the index needs has been replaced at least once."""
        ...

    @property
    def revision(self) -> int:
        """The highest storage revision applied."""
        ...

    def replace(self, resource: str, objects: Sequence[Mapping[str, Any]], revision: int) -> None:
        """Replace every object of ``resource`` with a full list read at ``revision``."""
        ...

    def apply(self, resource: str, event_type: str, obj: Mapping[str, Any], revision: int) -> None:
        """Apply one ADDED/MODIFIED/DELETED watch event of ``resource`` at ``revision``."""
        ...


class IndexSync:
    """Keeps an :class:`Index` in step with storage: one store-less :class:`Informer` per resource.

    ``group`` and ``resources`` name the collections (every namespace),
    ``what`` names the index in logs. ``synced`` is set once ``index.synced``
    is true after a list. ``list_timeout`` is the deadline of one List page
    in seconds; backoffs are seconds; ``sleep`` is injectable for tests.
    """

    def __init__(self, stub: storage_pb2_grpc.StorageStub, index: Index, *, group: str, resources: Sequence[str],
                 what: str, list_timeout: float = LIST_TIMEOUT, min_backoff: float = 0.1, max_backoff: float = 5.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep):
        self._index = index
        self._what = what
        self.synced = asyncio.Event()
        self.informers: dict[str, Informer] = {}
        for resource in resources:
            informer = Informer(StorageListerWatcher(stub, group, resource, list_timeout=list_timeout),
                                name=resource, keep_store=False, min_backoff=min_backoff, max_backoff=max_backoff,
                                sleep=sleep)
            informer.on(replace=functools.partial(self._replace, resource),
                        event=functools.partial(index.apply, resource))
            self.informers[resource] = informer

    def _replace(self, resource: str, objects: list[Object], revision: int) -> None:
        self._index.replace(resource, objects, revision)
        if self._index.synced and not self.synced.is_set():
            log.info("%s synced at revision %d", self._what, self._index.revision)
            self.synced.set()

    async def run(self) -> None:
        """Sync every resource until cancelled."""
        await asyncio.gather(*(informer.run() for informer in self.informers.values()))
