"""Watch cache per resource (k8s.io/apiserver ``pkg/storage/cacher``: cacher.go, watch_cache.go).

One :class:`WatchCache` per resource (group + plural), started on first use:
it lists the resource's key prefix from etcd at one revision, then follows one
etcd watch on that prefix (on the process's shared watch stream,
:class:`services.storage.etcd_watch.WatchMux`), holding

- every current object (decoded, ``metadata.resourceVersion`` set, and its
  JSON encoding so N watchers and lists serialise it once), keys sorted for
  ``limit``/``continue``;
- a window of the latest changes, from which a watch may start at any
  resourceVersion not older than the window (older -> 410 Expired
  ``too old resource version: <rv> (<oldest>)``, as the cacher answers). Its
  capacity is sized as kube's watch_cache.go ``resizeCacheLocked``: it starts
  at LOWER_BOUND_CAPACITY (100) events, doubles (up to UPPER_BOUND_CAPACITY,
  102,400) when it is full and its oldest change is younger than the event
  fresh duration (75 s, kube's DefaultEventFreshDuration), and halves (not
  below 100) when it is full and even its newest quarter is older than that,
  so a client that lost its watch for less than 75 s resumes without a 410
  at any write rate up to ~1,365 changes/s per resource;
- ``--watch-cache-sizes`` (kube-apiserver's ``resource[.group]#size``
  syntax) only says which resources are cached: 0 disables a resource's
  cache, every other size is equivalent (as kube-apiserver documents the
  flag);
- its ``revision``: every change up to it has been applied (advanced by events
  and by etcd progress notifications, the source of BOOKMARKs).

Any number of client watches of one resource share the cache's single etcd
watch (:class:`CacheWatcher` s). Consistent reads (KEP-2340) use
:meth:`WatchCache.wait_fresh`: the cache is asked to catch up to etcd's
current revision with RequestProgress, bounded in time; callers fall back to
etcd when it does not.

When the etcd watch breaks (etcd down), every watcher ends with the 503 the
stream failed with (clients re-watch from their last resourceVersion, as
docs/architecture.md, "Failure policy" requires), the cache stops serving (reads go to etcd) and
retries with backoff: it resumes the watch from its revision, or re-lists
when that revision was compacted.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import logging
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from kapi import errors, jsonutil
from kapi.watchbookmarks import next_bookmark_time
from services.storage.etcd import CompactedError, EtcdClient, prefix_end
from services.storage.etcd_watch import WatchBatch, WatchMux, WatchOverflow
from services.storage.events import ADDED, DELETED, MODIFIED, Matcher, WatchEvent, bookmark
from services.storage.metrics import STORAGE_OBJECTS, group_resource, watch_cache_resized
from services.storage.objects import Object, decode, stamped

log = logging.getLogger(__name__)

DEFAULT_CAPACITY = 100  # a resource not named in --watch-cache-sizes is cached (kube's DefaultWatchCacheSize)
LOWER_BOUND_CAPACITY = 100  # events: the window's initial and smallest capacity (kube's defaultLowerBoundCapacity)
UPPER_BOUND_CAPACITY = 100 * 1024  # events: its largest capacity (kube's defaultUpperBoundCapacity)
EVENT_FRESH_SECONDS = 75.0  # the history the window grows to keep (kube's DefaultEventFreshDuration)
READY_TIMEOUT = 5.0  # seconds a first use waits for the initial list before falling back to etcd
FRESH_TIMEOUT = 3.0  # seconds a consistent read waits for the cache to catch up (kube's blockTimeout)
MAX_BACKLOG = 1_000  # undelivered batches per watcher before it is ended as too slow
_LIST_PAGE = 1_000  # keys per etcd range of the initial list
_RETRY = (0.1, 0.25, 0.5, 1.0, 2.0)  # seconds between attempts after the etcd watch failed

ResourceId = tuple[str, str]  # (group, plural resource)


def parse_watch_cache_sizes(text: str) -> dict[ResourceId, int]:
    """``--watch-cache-sizes`` -> {(group, resource): size}.

    Syntax of kube-apiserver: a comma-separated list of ``resource[.group]#size``
    (``pods#1000``, ``deployments.apps#500``); size 0 disables the cache for
    that resource (reads and watches go to etcd), any other size keeps it
    (the window sizes itself, :class:`WatchCache`). Raises ValueError for a
    malformed entry or a negative size.
    """
    sizes: dict[ResourceId, int] = {}
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        name, sep, size_text = entry.partition("#")
        if not sep or not name or not size_text.strip().isdigit():
            raise ValueError(f"invalid value of watch cache size: {entry!r} (expected resource[.group]#size)")
        resource, _, group = name.strip().partition(".")
        sizes[(group, resource)] = int(size_text)
    return sizes


class Entry:
    """One cached object: ``object`` (resourceVersion set) and its JSON (encoded once, on first need)."""

    __slots__ = ("object", "revision", "_encoded")

    def __init__(self, obj: Object, revision: int, encoded: bytes | None = None):
        self.object = obj
        self.revision = revision
        self._encoded = encoded

    @property
    def encoded(self) -> bytes:
        """The object as JSON bytes."""
        if self._encoded is None:
            self._encoded = jsonutil.dumps(self.object)
        return self._encoded


class CachedEvent:
    """One change in the window: ``key`` became ``current`` (None = deleted) at ``revision``; ``previous`` is
    the object before (None = created)."""

    __slots__ = ("key", "current", "previous", "revision", "recorded", "_previous_at")

    def __init__(self, key: bytes, current: Entry | None, previous: Entry | None, revision: int,
                 recorded: float = 0.0):
        self.key = key
        self.current = current
        self.previous = previous
        self.revision = revision
        self.recorded = recorded  # loop time (seconds) the cache applied it: the window's sizing reads it
        self._previous_at: Entry | None = None

    def previous_at_revision(self) -> Entry:
        """The previous object with resourceVersion = this event's revision (a DELETED event's object)."""
        if self._previous_at is None:
            assert self.previous is not None
            self._previous_at = Entry(stamped(self.previous.object, self.revision), self.revision)
        return self._previous_at

    def to_watch_event(self, matches: Matcher | None) -> WatchEvent | None:
        """The event one watcher sees, or None (kube's cacher semantics: an object leaving a selector is DELETED
        with its last matching state, one entering it ADDED)."""
        cur, prev = self.current, self.previous
        cur_ok = cur is not None and (matches is None or matches(cur.object))
        prev_ok = prev is not None and (matches is None or matches(prev.object))
        if cur_ok and cur is not None:
            return _event(MODIFIED if prev_ok else ADDED, cur, self.revision)
        if prev_ok:
            return _event(DELETED, self.previous_at_revision(), self.revision)
        return None


def _revision_of(event: CachedEvent) -> int:
    return event.revision


def _event(kind: str, entry: Entry, revision: int) -> WatchEvent:
    return WatchEvent(kind, entry.object, revision, entry.encoded)


@dataclass(frozen=True)
class KeyRange:
    """``[start, end)`` of etcd keys a watcher or list covers; ``end`` b"" = exactly ``start``."""

    start: bytes
    end: bytes = b""

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, bytes):
            return False
        if not self.end:
            return key == self.start
        return self.start <= key < self.end


class CacheWatcher:
    """One client watch served from a cache: batches of :class:`WatchEvent` via :meth:`next`; always
    :meth:`close`."""

    def __init__(self, cache: WatchCache, keys: KeyRange, matches: Matcher | None, bookmarks: bool, revision: int,
                 sent: int):
        self._cache = cache
        self.keys = keys
        self.matches = matches
        self.bookmarks = bookmarks
        self.revision = revision  # every change (event) up to here has been considered
        self.sent = sent  # resourceVersion the client last heard of (its start, an event or a bookmark)
        self._pending: deque[list[WatchEvent] | BaseException] = deque()
        self._wakeup = asyncio.Event()
        self.closed = False
        self._timer: asyncio.TimerHandle | None = None  # the next periodic / pre-timeout bookmark

    def schedule_bookmarks(self, start: int, deadline: float | None) -> None:
        """Send this (bookmarking) watcher kube's periodic bookmarks: about every minute and 2 s before
        ``deadline`` (loop time; None: no deadline), each at the cache's revision when that is past ``start``, the
        resourceVersion the watch started from (:func:`kapi.watchbookmarks.next_bookmark_time`). One timer per
        watcher, nothing per event."""
        loop = asyncio.get_running_loop()

        def fire() -> None:
            revision = self._cache.revision
            if revision > start and not self.closed:
                self.sent = max(self.sent, revision)
                self._push([bookmark(revision)])
            arm()

        def arm() -> None:
            at = next_bookmark_time(loop.time(), deadline)
            self._timer = None if at is None or self.closed else loop.call_at(at, fire)

        arm()

    def _push(self, item: list[WatchEvent] | BaseException) -> None:
        if self.closed:
            return
        if not isinstance(item, BaseException) and len(self._pending) >= MAX_BACKLOG:
            log.warning("watch cache %s: a watcher is too slow, ending it", self._cache.prefix.decode(errors="replace"))
            item = WatchOverflow()
        self._pending.append(item)
        self._wakeup.set()
        if isinstance(item, BaseException):
            self.close()

    def offer(self, events: list[CachedEvent], revision: int) -> None:
        """Queue what this watcher sees of ``events`` (all at revisions <= ``revision``)."""
        out = []
        for ev in events:
            if ev.revision <= self.revision or ev.key not in self.keys:
                continue
            converted = ev.to_watch_event(self.matches)
            if converted is not None:
                out.append(converted)
        if revision > self.revision:
            self.revision = revision
        if out:
            self.sent = out[-1].resource_version
            self._push(out)

    def progress(self, revision: int) -> None:
        """etcd reports progress up to ``revision``: a BOOKMARK if asked for and past the last one sent."""
        if self.bookmarks and revision > self.sent:
            self.sent = revision
            self._push([bookmark(revision)])

    def fail(self, err: BaseException) -> None:
        """End the watch with ``err`` (raised from :meth:`next` after the queued batches)."""
        if not self.closed:
            self._pending.append(err)
            self._wakeup.set()
            self.close()

    async def next(self) -> list[WatchEvent]:
        """The next batch; raises the error the watch ended with (StatusError, WatchOverflow)."""
        while not self._pending:
            self._wakeup.clear()
            await self._wakeup.wait()
        item = self._pending.popleft()
        if isinstance(item, BaseException):
            self._pending.appendleft(item)
            raise item
        return item

    def close(self) -> None:
        """Stop receiving (idempotent)."""
        if not self.closed:
            self.closed = True
            self._cache._watchers.discard(self)
            if self._timer is not None:
                self._timer.cancel()


class WatchCache:
    """The cache of one resource: ``prefix`` is its etcd key prefix (ends with "/"); ``fresh_seconds`` the
    history its window grows to keep (the module docstring: capacity between LOWER_BOUND_CAPACITY and
    UPPER_BOUND_CAPACITY events)."""

    def __init__(self, prefix: bytes, etcd: EtcdClient, watches: WatchMux,
                 fresh_seconds: float = EVENT_FRESH_SECONDS, resource: tuple[str, str] = ("", "")):
        self.prefix = prefix
        self.resource = resource  # (group, plural): the metrics' labels
        self.end = prefix_end(prefix)
        self.capacity = LOWER_BOUND_CAPACITY  # events the window holds now
        self.fresh_seconds = fresh_seconds
        self._etcd = etcd
        self._watches = watches
        self._objects: dict[bytes, Entry] = {}
        self._keys: list[bytes] = []  # sorted
        self._window: deque[CachedEvent] = deque()
        self.revision = 0  # state is complete up to this etcd revision (events and progress notifications)
        self.applied = 0  # revision of the last change applied (the etcd watch resumes after it)
        self.oldest = 0  # a watch may start at any revision >= oldest
        self.listed = 0  # the revision of the (re)list the cache was built from: oldest until the window trims
        self._watchers: set[CacheWatcher] = set()
        self._ready = asyncio.Event()
        self._attempted = asyncio.Event()  # the first list succeeded or failed
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------ lifecycle

    @property
    def ready(self) -> bool:
        """True while the cache follows etcd (False before the first list and while the watch is broken)."""
        return self._ready.is_set()

    def start(self) -> None:
        """Start listing and watching (idempotent)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"watch-cache {self.prefix!r}")

    async def usable(self, timeout: float = READY_TIMEOUT) -> bool:
        """Whether requests may be served from the cache: until the first list succeeded or failed wait up to
        ``timeout`` seconds for it; later never wait (a cache that lost etcd is skipped until it follows etcd
        again)."""
        if not self._ready.is_set() and not self._attempted.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._attempted.wait()
        return self._ready.is_set()

    async def stop(self) -> None:
        """Stop following etcd; every watcher ends with 503."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        self._unready(errors.unavailable("the storage service is shutting down"))

    async def _run(self) -> None:
        attempt = 0
        relist = True
        while True:
            try:
                if relist:
                    await self._list()
                    relist = False
                subscription = await self._watches.subscribe(self.prefix, self.end, self.applied + 1,
                                                             wants_progress=True)
                self._ready.set()
                attempt = 0
                try:
                    while True:
                        self._apply(await subscription.next())
                finally:
                    subscription.close()
            except asyncio.CancelledError:
                raise
            except CompactedError:
                log.info("watch cache %s: revision %d compacted, re-listing", self._name, self.applied)
                self._unready(errors.expired(f"too old resource version: {self.revision}"))
                relist = True
                continue
            except WatchOverflow:
                log.warning("watch cache %s fell behind etcd; resuming after %d", self._name, self.applied)
                continue
            except errors.StatusError as err:
                log.warning("watch cache %s lost etcd: %s", self._name, err.message)
                self._unready(err)
            except Exception:
                log.exception("watch cache %s failed", self._name)
                self._unready(errors.internal("the watch cache failed"))
                relist = True
            await asyncio.sleep(_RETRY[min(attempt, len(_RETRY) - 1)])
            attempt += 1

    @property
    def _name(self) -> str:
        return self.prefix.decode(errors="replace")

    def _unready(self, err: BaseException) -> None:
        self._ready.clear()
        self._attempted.set()
        for watcher in list(self._watchers):
            watcher.fail(err)

    async def _list(self) -> None:
        """Replace the state with etcd's, read at one revision in pages; the window restarts there."""
        objects: dict[bytes, Entry] = {}
        start, revision = self.prefix, 0
        while True:
            response = await self._etcd.range(start, self.end, revision=revision, limit=_LIST_PAGE)
            revision = revision or response.header.revision
            for kv in response.kvs:
                objects[kv.key] = Entry(decode(kv.value, kv.mod_revision, kv.key), kv.mod_revision)
            if not response.more or not response.kvs:
                break
            start = response.kvs[-1].key + b"\x00"
        self._objects = objects
        self._keys = sorted(objects)
        self._window.clear()
        self.revision = self.oldest = self.applied = self.listed = revision
        self._ready.set()
        self._attempted.set()
        self._signal()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # ------------------------------------------------------------ applying etcd changes

    def _apply(self, batch: WatchBatch) -> None:
        if batch.progress:
            revision = max(batch.revision, self.revision)
            for watcher in list(self._watchers):
                watcher.progress(revision)
            if revision > self.revision:
                self.revision = revision
                self._signal()
            return
        changes: list[CachedEvent] = []
        now = asyncio.get_running_loop().time()
        for ev in batch.events:
            kv = ev.kv
            if kv.mod_revision <= self.applied:
                continue  # already applied (never expected: a resumed watch starts after it)
            # etcd 3.5 may answer a stream-wide progress request ahead of events still queued for this watch
            # (see etcd_watch), so ``revision`` can be ahead of ``applied``: such late events are applied, never
            # dropped, and watchers receive them (after a BOOKMARK that was early).
            previous = self._objects.get(kv.key)
            if ev.type == ev.DELETE:
                if previous is None:
                    continue
                del self._objects[kv.key]
                index = bisect.bisect_left(self._keys, kv.key)
                if index < len(self._keys) and self._keys[index] == kv.key:
                    del self._keys[index]
                change = CachedEvent(kv.key, None, previous, kv.mod_revision, now)
            else:
                current = Entry(decode(kv.value, kv.mod_revision, kv.key), kv.mod_revision)
                if previous is None:
                    bisect.insort(self._keys, kv.key)
                self._objects[kv.key] = current
                change = CachedEvent(kv.key, current, previous, kv.mod_revision, now)
            self._resize(now)
            if len(self._window) >= self.capacity:
                self.oldest = self._window.popleft().revision
            self._window.append(change)
            changes.append(change)
        if changes:
            self.applied = changes[-1].revision
            self.revision = max(self.revision, self.applied)
            for watcher in list(self._watchers):
                watcher.offer(changes, self.revision)
            self._signal()

    def _resize(self, now: float) -> None:
        """Before a change is added at loop time ``now``: double a full window whose oldest change is younger
        than ``fresh_seconds``, halve one whose newest quarter is older (watch_cache.go resizeCacheLocked;
        halving drops the oldest changes, so ``oldest`` moves on)."""
        window, capacity = self._window, self.capacity
        if len(window) < capacity:
            return
        if now - window[0].recorded < self.fresh_seconds:
            self.capacity = min(capacity * 2, UPPER_BOUND_CAPACITY)
        elif now - window[len(window) - capacity // 4].recorded > self.fresh_seconds:
            self.capacity = max(capacity // 2, LOWER_BOUND_CAPACITY)
            while len(window) > self.capacity:
                self.oldest = window.popleft().revision
        if self.capacity != capacity:
            watch_cache_resized(*self.resource, capacity, self.capacity)

    def compacted(self, revision: int) -> None:
        """etcd history up to ``revision`` is gone: watches from older revisions get 410 like etcd's would."""
        if revision > self.oldest:
            self.oldest = min(revision, self.revision)
            while self._window and self._window[0].revision <= self.oldest:
                self._window.popleft()

    # ------------------------------------------------------------ reads

    async def wait_fresh(self, target: int, timeout: float = FRESH_TIMEOUT) -> bool:
        """Wait until ``revision`` >= ``target`` (an etcd revision), asking etcd for progress notifications
        (RequestProgress) to advance past other resources' writes; False if not within ``timeout`` seconds
        or while the cache is not ready (KEP-2340)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.revision < target:
            remaining = deadline - loop.time()
            if remaining <= 0 or not self.ready:
                return False
            changed = self._changed
            try:
                async with asyncio.timeout(remaining):
                    await self._watches.progress_round()
                if self.revision < target:  # answers are trusted only after SETTLE_SECONDS: ask again soon
                    async with asyncio.timeout(min(0.05, max(deadline - loop.time(), 0.001))):
                        await changed.wait()
            except (TimeoutError, errors.StatusError):
                continue
        return True

    def get(self, key: bytes) -> Entry | None:
        """The cached object at ``key`` (None = absent)."""
        return self._objects.get(key)

    def scan(self, keys: KeyRange, after: bytes = b"") -> Iterator[tuple[bytes, Entry]]:
        """(key, entry) in key order within ``keys``, starting at ``after`` (inclusive) if given."""
        if not keys.end:
            entry = self._objects.get(keys.start)
            if entry is not None and (not after or keys.start >= after):
                yield keys.start, entry
            return
        start = max(keys.start, after) if after else keys.start
        index = bisect.bisect_left(self._keys, start)
        snapshot = self._keys  # replaced (not mutated in place) by a re-list; in-place edits only between awaits
        objects = self._objects
        while index < len(snapshot):
            key = snapshot[index]
            if key >= keys.end:
                return
            entry = objects.get(key)
            if entry is not None:
                yield key, entry
            index += 1

    def count(self, keys: KeyRange, after: bytes) -> int:
        """How many cached keys in ``keys`` sort at or after ``after``."""
        lo = bisect.bisect_left(self._keys, max(keys.start, after))
        hi = bisect.bisect_left(self._keys, keys.end) if keys.end else lo + 1
        return max(hi - lo, 0)

    def events_since(self, revision: int) -> list[CachedEvent]:
        """The window's changes after ``revision``; raises 410 Expired if the window starts after it."""
        if revision < self.oldest:
            raise errors.expired(f"too old resource version: {revision} ({self.oldest})")
        window = self._window
        if not window or window[-1].revision <= revision:
            return []
        index = bisect.bisect_right(window, revision, key=_revision_of)  # type: ignore[arg-type]
        return list(itertools.islice(window, index, None))

    def add_watcher(self, keys: KeyRange, matches: Matcher | None, bookmarks: bool,
                    revision: int, sent: int) -> CacheWatcher:
        """Register a watcher that has seen every change up to ``revision`` (call with no await since reading
        the state it starts from, so no change falls in between); ``sent`` is the resourceVersion its client
        knows (BOOKMARKs start after it)."""
        watcher = CacheWatcher(self, keys, matches, bookmarks, revision, sent)
        self._watchers.add(watcher)
        return watcher

    @property
    def object_count(self) -> int:
        """Objects in the cache now."""
        return len(self._objects)

    def watcher_count(self) -> int:
        """Open watchers (tests, metrics)."""
        return len(self._watchers)


class WatchCaches:
    """Every resource's cache in this process, created on first use. ``sizes`` from
    :func:`parse_watch_cache_sizes` (0: that resource is not cached); ``default_capacity`` for resources not
    named (0 = no caches); ``fresh_seconds`` the history each window grows to keep (:class:`WatchCache`)."""

    def __init__(self, etcd: EtcdClient, watches: WatchMux, sizes: dict[ResourceId, int] | None = None,
                 default_capacity: int = DEFAULT_CAPACITY, fresh_seconds: float = EVENT_FRESH_SECONDS):
        self._etcd = etcd
        self._watches = watches
        self._sizes = dict(sizes or {})
        self._default = default_capacity
        self.fresh_seconds = fresh_seconds
        self._caches: dict[ResourceId, WatchCache] = {}
        self._compacted = 0
        STORAGE_OBJECTS.track(self)

    def cached(self, group: str, resource: str) -> bool:
        """Whether a resource has a cache (its configured size is not 0)."""
        return self._sizes.get((group, resource), self._default) > 0

    def get(self, group: str, resource: str, prefix: bytes) -> WatchCache | None:
        """The (started) cache of a resource whose key prefix is ``prefix``; None if its size is 0."""
        cache = self._caches.get((group, resource))
        if cache is None:
            if not self.cached(group, resource):
                return None
            cache = self._caches[(group, resource)] = WatchCache(prefix, self._etcd, self._watches,
                                                                 self.fresh_seconds, (group, resource))
            cache.start()
        return cache

    def compacted(self, revision: int) -> None:
        """Tell every cache that etcd compacted up to ``revision``."""
        self._compacted = max(self._compacted, revision)
        for cache in self._caches.values():
            cache.compacted(revision)

    def __iter__(self) -> Iterator[WatchCache]:
        return iter(list(self._caches.values()))

    def object_counts(self) -> list[tuple[str, int]]:
        """(``resource.group``, objects) of every cache that listed at least once (``apiserver_storage_objects``)."""
        return [(group_resource(group, resource), cache.object_count)
                for (group, resource), cache in list(self._caches.items()) if cache.revision]

    def capacities(self) -> list[tuple[str, str, int]]:
        """(group, resource, window capacity in events) of every cache (``watch_cache_capacity``)."""
        return [(group, resource, cache.capacity) for (group, resource), cache in list(self._caches.items())]

    async def stop(self) -> None:
        """Stop every cache; a stopped set reports no objects (``apiserver_storage_objects`` takes the largest
        count of the sets alive in the process: a stopped server's stale counts must not be it)."""
        for cache in list(self._caches.values()):
            await cache.stop()
        self._caches.clear()
