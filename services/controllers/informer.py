"""List+watch informers and rate-limited work queues (client-go ``tools/cache`` and ``util/workqueue``).

An :class:`Informer` lists a collection, then watches from the list's
resourceVersion, keeping a local store of the objects keyed
``namespace/name`` and calling handlers for adds, updates and deletes. A
watch that ends is resumed from the last seen resourceVersion (bookmarks
advance it); 410 Expired (compacted) or any other failure re-lists, with
a capped backoff, and objects gone meanwhile are delivered as deletes.
Every ``resync`` seconds each stored object is delivered again as an
update (client-go's resync period), so level-triggered loops repair what
a lost write left behind.

A :class:`WorkQueue` deduplicates keys (a key queued twice runs once),
never runs one key in two workers at once, and requeues failures with a
per-key exponential backoff (``workqueue.DefaultControllerRateLimiter``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

from services.controllers.client import ApiError, Client

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], None]
UpdateHandler = Callable[[dict[str, Any], dict[str, Any]], None]


def key_of(obj: dict[str, Any]) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object (cache.MetaNamespaceKeyFunc)."""
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else name


def split_key(key: str) -> tuple[str, str]:
    """(namespace, name) of a :func:`key_of` key."""
    ns, _, name = key.rpartition("/")
    return ns, name


class Informer:
    """One collection's list+watch cache. ``path`` is the collection URL (e.g. ``/api/v1/namespaces``)."""

    def __init__(self, client: Client, path: str, *, resync: float = 300.0, watch_timeout: int = 300,
                 min_backoff: float = 0.2, max_backoff: float = 10.0):
        self.client = client
        self.path = path
        self.resync = resync
        self.watch_timeout = watch_timeout
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.store: dict[str, dict[str, Any]] = {}
        self.synced = asyncio.Event()
        self.resource_version = ""
        self.relists = 0
        self._adds: list[Handler] = []
        self._updates: list[UpdateHandler] = []
        self._deletes: list[Handler] = []

    def on(self, add: Handler | None = None, update: UpdateHandler | None = None,
           delete: Handler | None = None) -> None:
        """Register handlers (called synchronously from the informer's task; they should only enqueue)."""
        if add:
            self._adds.append(add)
        if update:
            self._updates.append(update)
        if delete:
            self._deletes.append(delete)

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached object for ``key`` or None."""
        return self.store.get(key)

    def items(self) -> list[dict[str, Any]]:
        """Every cached object."""
        return list(self.store.values())

    def _emit_add(self, obj: dict[str, Any]) -> None:
        for h in self._adds:
            h(obj)

    def _emit_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        for h in self._updates:
            h(old, new)

    def _emit_delete(self, obj: dict[str, Any]) -> None:
        for h in self._deletes:
            h(obj)

    async def _list(self) -> None:
        reply = await self.client.list_all(self.path)
        fresh = {key_of(o): o for o in reply.get("items") or []}
        for key, gone in list(self.store.items()):
            if key not in fresh:
                del self.store[key]
                self._emit_delete(gone)
        for key, obj in fresh.items():
            old = self.store.get(key)
            self.store[key] = obj
            if old is None:
                self._emit_add(obj)
            elif (old.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get(
                    "resourceVersion"):
                self._emit_update(old, obj)
        self.resource_version = str((reply.get("metadata") or {}).get("resourceVersion") or "")
        self.relists += 1
        self.synced.set()

    def _apply(self, event: dict[str, Any]) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if rv:
            self.resource_version = rv
        if kind == "BOOKMARK":
            return
        key = key_of(obj)
        old = self.store.get(key)
        if kind == "DELETED":
            self.store.pop(key, None)
            self._emit_delete(obj)
        elif kind in ("ADDED", "MODIFIED"):
            self.store[key] = obj
            if old is None:
                self._emit_add(obj)
            else:
                self._emit_update(old, obj)

    async def run(self) -> None:
        """List, then watch forever (until cancelled), re-listing on 410 and failures."""
        backoff = self.min_backoff
        resync_task = asyncio.create_task(self._resync_loop()) if self.resync > 0 else None
        try:
            while True:
                try:
                    if not self.synced.is_set() or not self.resource_version:
                        await self._list()
                    async for event in self.client.watch(self.path, self.resource_version, self.watch_timeout):
                        self._apply(event)
                        backoff = self.min_backoff
                    continue  # the server ended the watch: resume from the last resourceVersion
                except ApiError as err:
                    if err.code == 410:
                        log.info("watch %s: %s; re-listing", self.path, err.message)
                        self.resource_version = ""
                        continue
                    log.warning("list/watch %s failed: %s; retrying in %.1fs", self.path, err, backoff)
                self.resource_version = ""
                await asyncio.sleep(backoff * (1 + random.random() / 2))
                backoff = min(backoff * 2, self.max_backoff)
        finally:
            if resync_task is not None:
                resync_task.cancel()

    async def _resync_loop(self) -> None:
        while True:
            await asyncio.sleep(self.resync)
            for obj in list(self.store.values()):
                self._emit_update(obj, obj)


class WorkQueue:
    """Deduplicating work queue of string keys with per-key exponential retry backoff (seconds)."""

    def __init__(self, name: str, min_backoff: float = 0.05, max_backoff: float = 30.0,
                 clock: Callable[[], float] = time.monotonic):
        self.name = name
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._pending: set[str] = set()
        self._active: set[str] = set()
        self._dirty: set[str] = set()
        self._failures: dict[str, int] = {}
        self._clock = clock

    def add(self, key: str) -> None:
        """Queue ``key`` unless already queued; a key being processed runs once more afterwards."""
        if key in self._active:
            self._dirty.add(key)
            return
        if key not in self._pending:
            self._pending.add(key)
            self._queue.put_nowait(key)

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds."""
        asyncio.get_running_loop().call_later(delay, self.add, key)

    def __len__(self) -> int:
        return len(self._pending)

    async def run(self, sync: Callable[[str], Awaitable[None]], workers: int = 2) -> None:
        """Run ``sync(key)`` for queued keys in ``workers`` tasks until cancelled; failures are requeued."""
        await asyncio.gather(*(self._worker(sync) for _ in range(workers)))

    async def _worker(self, sync: Callable[[str], Awaitable[None]]) -> None:
        while True:
            key = await self._queue.get()
            self._pending.discard(key)
            self._active.add(key)
            try:
                await sync(key)
                self._failures.pop(key, None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a failing key must not stop the loop
                n = self._failures.get(key, 0)
                self._failures[key] = n + 1
                delay = min(self.min_backoff * (2 ** n), self.max_backoff)
                log.info("%s: sync %s failed (%s); retrying in %.2fs", self.name, key, exc, delay)
                self.add_after(key, delay)
            finally:
                self._active.discard(key)
                if key in self._dirty:
                    self._dirty.discard(key)
                    self.add(key)
