"""Namespaces as admission sees them: a cache fed by storage List + Watch, with live lookups.

The NamespaceLifecycle plugin needs every namespaced create's namespace.
Like kube-apiserver's namespace informer, the cache (a
:class:`kapi.informer.Informer`) lists the namespaces once, then follows a
Watch from the list's resourceVersion; a 410 Expired (compacted revision)
or any stream failure re-lists. A name missing from
the cache is looked up live with a storage Get (it may have been created a
moment ago), and a namespace being deleted is looked up live for a while
(kube's ``forceLiveLookupCache``, 30 s TTL) so a stale cache cannot admit
content into a terminating namespace.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kapi import errors, grpcutil, jsonutil
from kapi.informer import Informer, StorageListerWatcher
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.admission.informers import CachedCollection

FORCE_LIVE_LOOKUP_TTL = 30.0  # seconds (k8s plugin/pkg/admission/namespace/lifecycle forceLiveLookupTTL)
LIST_TIMEOUT = 30.0  # seconds
RETRY_DELAY = 1.0  # seconds between failed list/watch attempts


class NamespaceCache(CachedCollection):
    """Namespace objects by name, kept current from storage by a :class:`kapi.informer.Informer`.

    ``storage`` is a Storage stub; ``clock`` returns monotonic seconds (for
    the live-lookup TTL); ``retry_delay`` is the seconds between failed
    list/watch attempts. Call :meth:`start` inside the event loop and
    :meth:`stop` on shutdown.
    """

    def __init__(self, storage: storage_pb2_grpc.StorageStub, *, clock: Callable[[], float] = time.monotonic,
                 retry_delay: float = RETRY_DELAY):
        self._storage = storage
        self._clock = clock
        self.informer = Informer(StorageListerWatcher(storage, "", "namespaces", list_timeout=LIST_TIMEOUT),
                                 name="namespaces", min_backoff=retry_delay, max_backoff=retry_delay, clock=clock)
        self._force_live: dict[str, float] = {}
        self.live_lookups = 0  # storage Gets made by get()

    @property
    def lists(self) -> int:
        """How many times the cache (re)listed, for tests and logs."""
        return self.informer.lists

    @property
    def resource_version(self) -> int:
        """The storage revision the cache reflects."""
        return self.informer.revision

    async def list(self) -> None:
        """Replace the cache with a fresh storage List (the loop then watches from it); raises StatusError."""
        await self.informer.relist()

    def cached(self, name: str) -> dict[str, Any] | None:
        """The cached namespace object, or None."""
        return self.informer.get(name)

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
            obj = self.informer.get(name)
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
