"""Caches of the objects admission plugins read, each fed by storage List + Watch (like client-go informers).

:class:`ResourceCache` mirrors one resource across all namespaces with a
:class:`kapi.informer.Informer` (list, then watch from the list's
resourceVersion; a 410 Expired re-lists at once, any other failure after
``retry_delay`` seconds). :class:`Informers` hands out
one cache per resource (started on first request) and gives plugins live
storage reads (Get, List) and the one write admission makes: quota status.
"""

from __future__ import annotations

import contextlib
from typing import Any

from kapi import errors, grpcutil, jsonutil
from kapi.informer import Informer, StorageListerWatcher, namespace_key, split_meta_namespace_key
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

LIST_TIMEOUT = 30.0  # seconds
RETRY_DELAY = 1.0  # seconds between failed list/watch attempts
SYNC_WAIT = 5.0  # seconds a first reader waits for the first list


class CachedCollection:
    """What both admission caches share: a :class:`kapi.informer.Informer` (``self.informer``) and its lifecycle."""

    informer: Informer

    @property
    def synced(self) -> bool:
        """True once the first list has been loaded."""
        return self.informer.has_synced

    def start(self) -> None:
        """Start the list/watch loop (idempotent)."""
        self.informer.start()

    async def stop(self) -> None:
        """Stop the list/watch loop."""
        await self.informer.stop()

    async def wait_synced(self, timeout: float = SYNC_WAIT) -> bool:
        """Start if needed and wait up to ``timeout`` seconds for the first list; returns :attr:`synced`."""
        self.start()
        return await self.informer.wait_synced(timeout)


class ResourceCache(CachedCollection):
    """Every object of one resource (group, plural), kept current from storage."""

    def __init__(self, storage: storage_pb2_grpc.StorageStub, group: str, resource: str, *,
                 retry_delay: float = RETRY_DELAY):
        self.group, self.resource = group, resource
        self.informer = Informer(StorageListerWatcher(storage, group, resource, list_timeout=LIST_TIMEOUT),
                                 name=f"{group}/{resource}", min_backoff=retry_delay, max_backoff=retry_delay)
        self.informer.on(change=self._bump)
        self.generation = 0  # bumped on every change, so derived views can be rebuilt lazily

    def _bump(self) -> None:
        self.generation += 1

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The cached object or None."""
        return self.informer.get(namespace_key(namespace, name))

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """Cached objects, of one namespace when ``namespace`` is given, sorted by (namespace, name)."""
        keyed = sorted((split_meta_namespace_key(key), obj) for key, obj in self.informer.store.items())
        return [obj for (ns, _), obj in keyed if namespace is None or ns == namespace]


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
