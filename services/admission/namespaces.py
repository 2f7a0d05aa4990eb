"""Namespaces as admission sees them: a cache fed by storage List + Watch, with live lookups.

The NamespaceLifecycle plugin needs every namespaced create's namespace.
Like kube-apiserver's namespace informer, the cache lists the namespaces
once, then follows a Watch from the list's resourceVersion; a 410 Expired
(compacted revision) or any stream failure re-lists. A name missing from
the cache is looked up live with a storage Get (it may have been created a
moment ago), and a namespace being deleted is looked up live for a while
(kube's ``forceLiveLookupCache``, 30 s TTL) so a stale cache cannot admit
content into a terminating namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import grpc

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

log = logging.getLogger(__name__)

FORCE_LIVE_LOOKUP_TTL = 30.0  # seconds (k8s plugin/pkg/admission/namespace/lifecycle forceLiveLookupTTL)
LIST_TIMEOUT = 30.0  # seconds
RETRY_DELAY = 1.0  # seconds between failed list/watch attempts

_KEY = storage_pb2.ResourceKey(group="", resource="namespaces")


class NamespaceCache:
    """Namespace objects by name, kept current from storage.

    ``storage`` is a Storage stub; ``clock`` returns monotonic seconds (for
    the live-lookup TTL). Call :meth:`start` inside the event loop and
    :meth:`stop` on shutdown.
    """

    def __init__(self, storage: storage_pb2_grpc.StorageStub, *, clock: Callable[[], float] = time.monotonic,
                 retry_delay: float = RETRY_DELAY):
        self._storage = storage
        self._clock = clock
        self._retry_delay = retry_delay
        self._items: dict[str, dict[str, Any]] = {}
        self._resource_version = 0
        self._force_live: dict[str, float] = {}
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.lists = 0  # how many times the cache (re)listed, for tests and logs
        self.live_lookups = 0  # storage Gets made by get()

    @property
    def synced(self) -> bool:
        """True once the first list has been loaded."""
        return self._synced.is_set()

    @property
    def resource_version(self) -> int:
        """The storage revision the cache reflects."""
        return self._resource_version

    def start(self) -> None:
        """Start the list/watch loop (idempotent); after :meth:`list` it begins by watching from that list."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(need_list=not self.synced), name="namespace-cache")

    async def stop(self) -> None:
        """Stop the list/watch loop."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def wait_synced(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the first list; returns :attr:`synced`."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._synced.wait(), timeout)
        return self.synced

    def cached(self, name: str) -> dict[str, Any] | None:
        """The cached namespace object, or None."""
        return self._items.get(name)

    def force_live_lookup(self, name: str) -> None:
        """Look ``name`` up in storage, not the cache, for the next FORCE_LIVE_LOOKUP_TTL seconds."""
        self._force_live[name] = self._clock() + FORCE_LIVE_LOOKUP_TTL

    def _must_look_up(self, name: str) -> bool:
        until = self._force_live.get(name)
        if until is None:
            return False
        if self._clock() < until:
            return True
        del self._force_live[name]
        return False

    async def get(self, name: str, timeout: float) -> dict[str, Any] | None:
        """The namespace object, or None if it does not exist.

        Served from the cache when present (and not forced live); otherwise
        a storage Get bounded by ``timeout`` seconds. Raises StatusError
        (503/504...) when storage cannot answer.
        """
        if not self._must_look_up(name):
            obj = self._items.get(name)
            if obj is not None:
                return obj
        self.live_lookups += 1
        try:
            reply: Any = await grpcutil.call("storage", self._storage.Get, storage_pb2.GetRequest(
                key=storage_pb2.ResourceKey(group="", resource="namespaces", name=name)), timeout=timeout)
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise
        return dict(jsonutil.loads(reply.object))

    # ------------------------------------------------------------ list + watch

    async def _run(self, need_list: bool) -> None:
        while True:
            try:
                if need_list:
                    await self.list()
                    need_list = False
                started = self._clock()
                await self._watch()
                if self._clock() - started < self._retry_delay:  # ended at once: do not spin
                    await asyncio.sleep(self._retry_delay)
            except asyncio.CancelledError:
                raise
            except errors.StatusError as err:
                need_list = True
                if err.code == 410:
                    log.info("namespace watch expired (%s); re-listing", err.message)
                    continue
                log.warning("namespace list/watch failed: %s", err.message)
                await asyncio.sleep(self._retry_delay)
            except Exception:
                need_list = True
                log.exception("namespace list/watch failed")
                await asyncio.sleep(self._retry_delay)

    async def list(self) -> None:
        """Replace the cache with a fresh storage List; raises StatusError if storage cannot answer."""
        reply: Any = await grpcutil.call("storage", self._storage.List, storage_pb2.ListRequest(key=_KEY),
                                         timeout=LIST_TIMEOUT)
        items: dict[str, dict[str, Any]] = {}
        for raw in reply.items:
            obj = jsonutil.loads(raw)
            name = (obj.get("metadata") or {}).get("name")
            if name:
                items[name] = obj
        self._items = items
        self._resource_version = reply.resource_version
        self.lists += 1
        self._synced.set()

    async def _watch(self) -> None:
        """Follow changes after the cache's revision until the stream ends (returns) or fails (raises)."""
        call = self._storage.Watch(storage_pb2.WatchRequest(
            key=_KEY, resource_version=str(self._resource_version), allow_bookmarks=True))
        try:
            async for response in call:
                for event in response.events:
                    self._apply(event)
        except grpc.RpcError as exc:
            raise errors.from_rpc_error(exc, "storage") from None
        finally:
            call.cancel()

    def _apply(self, event: storage_pb2.WatchEvent) -> None:
        if event.resource_version > self._resource_version:
            self._resource_version = event.resource_version
        if event.type == "BOOKMARK" or not event.object:
            return
        obj = jsonutil.loads(event.object)
        name = (obj.get("metadata") or {}).get("name")
        if not name:
            return
        if event.type == "DELETED":
            self._items.pop(name, None)
        else:
            self._items[name] = obj
