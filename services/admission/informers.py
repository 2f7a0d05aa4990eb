"""Caches of the objects admission plugins read, each fed by storage List + Watch (like client-go informers).

:class:`ResourceCache` lists one resource across all namespaces, then
follows a Watch from the list's resourceVersion; a 410 Expired or any
stream failure re-lists after a short delay. :class:`Informers` hands out
one cache per resource (started on first request) and gives plugins live
storage reads (Get, List) and the one write admission makes: quota status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import grpc

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

log = logging.getLogger(__name__)

LIST_TIMEOUT = 30.0  # seconds
RETRY_DELAY = 1.0  # seconds between failed list/watch attempts
SYNC_WAIT = 5.0  # seconds a first reader waits for the first list

Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


def _key_of(obj: dict[str, Any]) -> Key | None:
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    return (meta.get("namespace") or "", name) if name else None


class ResourceCache:
    """Every object of one resource (group, plural), kept current from storage."""

    def __init__(self, storage: storage_pb2_grpc.StorageStub, group: str, resource: str, *,
                 retry_delay: float = RETRY_DELAY):
        self._storage = storage
        self.group, self.resource = group, resource
        self._retry_delay = retry_delay
        self._items: dict[Key, dict[str, Any]] = {}
        self._resource_version = 0
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.generation = 0  # bumped on every change, so derived views can be rebuilt lazily

    @property
    def synced(self) -> bool:
        """True once the first list has been loaded."""
        return self._synced.is_set()

    def start(self) -> None:
        """Start the list/watch loop (idempotent)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"cache-{self.group}/{self.resource}")

    async def stop(self) -> None:
        """Stop the list/watch loop."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def wait_synced(self, timeout: float = SYNC_WAIT) -> bool:
        """Start if needed and wait up to ``timeout`` seconds for the first list; returns :attr:`synced`."""
        self.start()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._synced.wait(), timeout)
        return self.synced

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The cached object or None."""
        return self._items.get((namespace, name))

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """Cached objects, of one namespace when ``namespace`` is given, sorted by (namespace, name)."""
        return [obj for key, obj in sorted(self._items.items())
                if namespace is None or key[0] == namespace]

    async def _run(self) -> None:
        need_list = True
        while True:
            try:
                if need_list:
                    await self._list()
                    need_list = False
                await self._watch()
                await asyncio.sleep(self._retry_delay)
            except asyncio.CancelledError:
                raise
            except errors.StatusError as err:
                need_list = True
                if err.code != 410:
                    log.warning("%s/%s list/watch failed: %s", self.group, self.resource, err.message)
                    await asyncio.sleep(self._retry_delay)
            except Exception:
                need_list = True
                log.exception("%s/%s list/watch failed", self.group, self.resource)
                await asyncio.sleep(self._retry_delay)

    async def _list(self) -> None:
        reply: Any = await grpcutil.call("storage", self._storage.List, storage_pb2.ListRequest(
            key=storage_pb2.ResourceKey(group=self.group, resource=self.resource)), timeout=LIST_TIMEOUT)
        items: dict[Key, dict[str, Any]] = {}
        for raw in reply.items:
            obj = jsonutil.loads(raw)
            key = _key_of(obj)
            if key:
                items[key] = obj
        self._items = items
        self._resource_version = reply.resource_version
        self.generation += 1
        self._synced.set()

    async def _watch(self) -> None:
        call = self._storage.Watch(storage_pb2.WatchRequest(
            key=storage_pb2.ResourceKey(group=self.group, resource=self.resource),
            resource_version=str(self._resource_version), allow_bookmarks=True))
        try:
            async for response in call:
                for event in response.events:
                    self._apply(event)
        except grpc.RpcError as exc:
            raise errors.from_rpc_error(exc, "storage") from None
        finally:
            call.cancel()

    def _apply(self, event: storage_pb2.WatchEvent) -> None:
        self._resource_version = max(self._resource_version, event.resource_version)
        if event.type == "BOOKMARK" or not event.object:
            return
        obj = jsonutil.loads(event.object)
        key = _key_of(obj)
        if key is None:
            return
        if event.type == "DELETED":
            self._items.pop(key, None)
        else:
            self._items[key] = obj
        self.generation += 1


class Informers:
    """One :class:`ResourceCache` per resource over one storage stub, plus live reads and quota writes."""

    def __init__(self, storage: storage_pb2_grpc.StorageStub):
        self.storage = storage
        self._caches: dict[tuple[str, str], ResourceCache] = {}

    def cache(self, group: str, resource: str) -> ResourceCache:
        """The cache of ``group``/``resource`` (created and started on first use)."""
        key = (group, resource)
        cache = self._caches.get(key)
        if cache is None:
            cache = self._caches[key] = ResourceCache(self.storage, group, resource)
            with contextlib.suppress(RuntimeError):  # no running loop (construction in sync tests)
                cache.start()
        return cache

    async def stop(self) -> None:
        """Stop every cache."""
        for cache in self._caches.values():
            await cache.stop()

    async def get(self, group: str, resource: str, namespace: str, name: str, timeout: float
                  ) -> tuple[dict[str, Any] | None, int]:
        """A live storage Get: (object or None if absent, its mod revision). Raises StatusError (503...)."""
        try:
            reply: Any = await grpcutil.call("storage", self.storage.Get, storage_pb2.GetRequest(
                key=storage_pb2.ResourceKey(group=group, resource=resource, namespace=namespace, name=name)),
                timeout=timeout)
        except errors.StatusError as err:
            if err.code == 404:
                return None, 0
            raise
        return dict(jsonutil.loads(reply.object)), int(reply.resource_version)

    async def lookup(self, group: str, resource: str, namespace: str, name: str, timeout: float
                     ) -> dict[str, Any] | None:
        """The cached object, else a live Get (it may be newer than the cache)."""
        cache = self.cache(group, resource)
        obj = cache.get(namespace, name) if cache.synced else None
        if obj is not None:
            return obj
        return (await self.get(group, resource, namespace, name, timeout))[0]

    async def list_live(self, group: str, resource: str, namespace: str, timeout: float
                        ) -> list[dict[str, Any]]:
        """A live storage List of one namespace ("" = all)."""
        reply: Any = await grpcutil.call("storage", self.storage.List, storage_pb2.ListRequest(
            key=storage_pb2.ResourceKey(group=group, resource=resource, namespace=namespace)), timeout=timeout)
        return [jsonutil.loads(raw) for raw in reply.items]

    async def update(self, group: str, resource: str, obj: dict[str, Any], expected_revision: int,
                     timeout: float) -> None:
        """Conditional storage Update (mod revision must still be ``expected_revision``); 409 on a race."""
        meta = obj.get("metadata") or {}
        await grpcutil.call("storage", self.storage.Update, storage_pb2.UpdateRequest(
            key=storage_pb2.ResourceKey(group=group, resource=resource, namespace=meta.get("namespace", ""),
                                        name=meta.get("name", "")),
            object=jsonutil.dumps(obj), expected_resource_version=expected_revision), timeout=timeout)
