"""List+watch informers and rate-limited work queues (client-go ``tools/cache`` and ``util/workqueue``).

An :class:`Informer` is the shared :class:`kapi.informer.Informer` reading
through the REST API (:class:`RestListerWatcher`): it lists a collection,
then watches from the list's resourceVersion, keeping a local store of the
objects keyed ``namespace/name`` and calling handlers for adds, updates
and deletes. A watch that ends is resumed from the last seen
resourceVersion (bookmarks advance it); 410 Expired (compacted) re-lists
at once, any other failure after a capped backoff, and objects gone
meanwhile are delivered as deletes. Every ``resync`` seconds each stored
object is delivered again as an update (client-go's resync period), so
level-triggered loops repair what a lost write left behind.

A :class:`WorkQueue` deduplicates keys (a key queued twice runs once),
never runs one key in two workers at once, and requeues failures with a
per-key exponential backoff (``workqueue.DefaultControllerRateLimiter``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from kapi import errors, informer
from kapi.informer import Event, ListResult, meta_namespace_key, split_meta_namespace_key
from services.controllers.client import ApiError, Client

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], None]
UpdateHandler = Callable[[dict[str, Any], dict[str, Any]], None]

key_of = meta_namespace_key  # ``namespace/name``, or ``name`` for a cluster-scoped object
split_key = split_meta_namespace_key  # (namespace, name) of a key_of key


def _status(err: ApiError) -> errors.StatusError:
    return errors.StatusError(err.code, err.reason, err.message)


def _revision(obj: dict[str, Any]) -> int:
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(text) if text.isdigit() else 0


def typed_items(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A list's items with ``apiVersion`` and ``kind`` set from the list's (``ConfigMapList`` -> ``ConfigMap``)
    where absent: a built-in kind's list leaves them out of its items, as kube's typed lists (client-go's
    unstructured list decoder fills them the same way), and watch events carry them, so a cache holds one
    shape whichever way an object reached it."""
    list_kind = str(reply.get("kind") or "")
    kind = list_kind[:-len("List")] if list_kind.endswith("List") else list_kind
    api_version = reply.get("apiVersion")
    items = [item for item in reply.get("items") or [] if isinstance(item, dict)]
    for item in items:
        if api_version and "apiVersion" not in item:
            item["apiVersion"] = api_version
        if kind and "kind" not in item:
            item["kind"] = kind
    return items


class RestListerWatcher:
    """A :class:`kapi.informer.ListerWatcher` over the REST API: ``path`` is the collection URL.

    Lists follow ``continue`` tokens (:meth:`Client.list_all`); watches ask
    for bookmarks and end after ``watch_timeout`` seconds (``timeoutSeconds``).
    ApiErrors are raised as StatusErrors with the same code, reason and message.
    """

    def __init__(self, client: Client, path: str, watch_timeout: int = 300):
        self.client, self.path, self.watch_timeout = client, path, watch_timeout

    async def list(self) -> ListResult:
        """Every object of the collection and the list's resourceVersion (an etcd revision)."""
        try:
            reply = await self.client.list_all(self.path)
        except ApiError as err:
            raise _status(err) from None
        return ListResult(typed_items(reply), _revision(reply))

    async def watch(self, resource_version: int) -> AsyncIterator[Sequence[Event]]:
        """One batch per watch event after ``resource_version``."""
        try:
            async for event in self.client.watch(self.path, str(resource_version), self.watch_timeout):
                obj = event.get("object") or {}
                yield [Event(str(event.get("type") or ""), obj, _revision(obj))]
        except ApiError as err:
            raise _status(err) from None


class Informer(informer.Informer):
    """One collection's list+watch cache (:class:`kapi.informer.Informer` over :class:`RestListerWatcher`).

    ``path`` is the collection URL (e.g. ``/api/v1/namespaces``); the store
    is keyed by :func:`key_of`; ``resync`` is in seconds; backoffs are
    seconds, jittered by up to 50%.
    """

    def __init__(self, client: Client, path: str, *, resync: float = 300.0, watch_timeout: int = 300,
                 min_backoff: float = 0.2, max_backoff: float = 10.0):
        super().__init__(RestListerWatcher(client, path, watch_timeout), name=path, resync=resync,
                         min_backoff=min_backoff, max_backoff=max_backoff, jitter=0.5)
        self.client = client
        self.path = path
        self.watch_timeout = watch_timeout

    @property
    def resource_version(self) -> str:
        """The resourceVersion the next watch starts from ("" before the first list)."""
        return str(self.revision) if self.revision else ""

    @property
    def relists(self) -> int:
        """How many lists completed."""
        return self.lists


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
