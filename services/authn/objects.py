"""The objects authn checks tokens against, fed from the storage service by List then Watch.

Service-account tokens name their ServiceAccount (and optionally a bound Pod
or Secret) by uid; a token stops working once that object is deleted or
recreated with another uid (kube's ``serviceaccount.Validator`` with
``--service-account-lookup``). Bootstrap tokens live in kube-system Secrets.
:class:`ObjectIndex` keeps, per resource, ``(namespace, name) -> Ref`` (uid,
being-deleted flag) plus the whole object for the Secrets a keep-predicate
selects; :class:`ObjectSync` keeps it current with the shared informer
(:class:`kapi.informer.IndexSync`: list, then watch from the list's
revision; 410 -> re-list, other failures -> re-list after a capped
backoff). :meth:`ObjectLookup.current` answers from the index and falls
back to a live storage Get when the index disagrees with the token or has
not synced yet, so a just-created object is never refused
because the watch lags (as kube's getter falls back to the API).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kapi import errors, grpcutil, jsonutil
from kapi.informer import IndexSync
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

log = logging.getLogger(__name__)

SERVICE_ACCOUNTS, PODS, SECRETS = "serviceaccounts", "pods", "secrets"
RESOURCES = (SERVICE_ACCOUNTS, PODS, SECRETS)
LOOKUP_TIMEOUT = 5.0  # seconds for a live storage Get

Key = tuple[str, str]  # (namespace, name)
KeepFull = Callable[[str, Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Ref:
    """What authn needs of one object: its uid, whether it is being deleted, and (for some) the object."""

    uid: str
    deleting: bool = False
    obj: Mapping[str, Any] | None = None


def ref_of(obj: Mapping[str, Any], keep: bool = False) -> tuple[Key, Ref]:
    """(key, Ref) of a decoded object; raises ValueError if it has no name."""
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    if not name:
        raise ValueError("object without metadata.name")
    return ((str(meta.get("namespace") or ""), name),
            Ref(str(meta.get("uid") or ""), bool(meta.get("deletionTimestamp")), obj if keep else None))


def keep_bootstrap_secrets(resource: str, obj: Mapping[str, Any]) -> bool:
    """Keep whole only the kube-system Secrets of type ``bootstrap.kubernetes.io/token``."""
    return (resource == SECRETS and obj.get("type") == "bootstrap.kubernetes.io/token"
            and (obj.get("metadata") or {}).get("namespace") == "kube-system")


class ObjectIndex:
    """Per resource, ``(namespace, name) -> Ref``; mutated only from the event loop thread."""

    def __init__(self, keep_full: KeepFull = keep_bootstrap_secrets):
        self._objects: dict[str, dict[Key, Ref]] = {r: {} for r in RESOURCES}
        self._listed: set[str] = set()
        self._keep_full = keep_full
        self.revision = 0

    def keep_full(self, resource: str, obj: Mapping[str, Any]) -> bool:
        """Whether this index keeps ``obj`` whole (the keep-predicate it was built with)."""
        return self._keep_full(resource, obj)

    @property
    def synced(self) -> bool:
        """True once every resource has been listed at least once."""
        return self._listed.issuperset(RESOURCES)

    def is_synced(self, resource: str) -> bool:
        """True once ``resource`` has been listed."""
        return resource in self._listed

    def get(self, resource: str, namespace: str, name: str) -> Ref | None:
        """The Ref of one object, or None if the index does not hold it."""
        return self._objects[resource].get((namespace, name))

    def full_objects(self, resource: str, namespace: str) -> list[Mapping[str, Any]]:
        """Every kept whole object of ``resource`` in ``namespace`` (e.g. bootstrap-token Secrets)."""
        return [ref.obj for (ns, _), ref in self._objects[resource].items() if ns == namespace and ref.obj]

    def replace(self, resource: str, objects: Sequence[Mapping[str, Any]], revision: int) -> None:
        """Replace every object of ``resource`` with a full list read at ``revision``."""
        table: dict[Key, Ref] = {}
        for obj in objects:
            try:
                key, ref = ref_of(obj, self._keep_full(resource, obj))
            except (ValueError, AttributeError, TypeError) as exc:
                log.warning("ignoring malformed %s object: %s", resource, exc)
                continue
            table[key] = ref
        self._objects[resource] = table
        self._listed.add(resource)
        self.revision = max(self.revision, revision)

    def apply(self, resource: str, event_type: str, obj: Mapping[str, Any], revision: int) -> None:
        """Apply one watch event (ADDED, MODIFIED, DELETED; BOOKMARK only advances nothing)."""
        if event_type not in ("ADDED", "MODIFIED", "DELETED"):
            return
        try:
            key, ref = ref_of(obj, self._keep_full(resource, obj))
        except (ValueError, AttributeError, TypeError) as exc:
            log.warning("ignoring malformed %s watch event: %s", resource, exc)
            return
        if event_type == "DELETED":
            self._objects[resource].pop(key, None)
        else:
            self._objects[resource][key] = ref
        self.revision = max(self.revision, revision)


class ObjectSync(IndexSync):
    """Keeps an :class:`ObjectIndex` in step with storage with :class:`kapi.informer.IndexSync`.

    ``list_timeout`` is the deadline of one List page in seconds; backoffs
    are seconds; ``sleep`` is injectable for tests.
    """

    def __init__(self, stub: storage_pb2_grpc.StorageStub, index: ObjectIndex, *, list_timeout: float = 30.0,
                 min_backoff: float = 0.1, max_backoff: float = 5.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep):
        super().__init__(stub, index, group="", resources=RESOURCES, what="authn objects", list_timeout=list_timeout,
                         min_backoff=min_backoff, max_backoff=max_backoff, sleep=sleep)


class ObjectLookup:
    """Answers "does this object still exist with this uid?" from the index, else from storage.

    ``stub`` None means no storage (unit tests, ``--service-account-lookup``
    off): only the index is consulted.
    """

    def __init__(self, index: ObjectIndex, stub: storage_pb2_grpc.StorageStub | None = None):
        self.index = index
        self._stub = stub

    async def get(self, resource: str, namespace: str, name: str, uid: str = "") -> Ref | None:
        """The object's Ref, or None if it does not exist.

        The index answers when it holds the object with ``uid`` (or any uid
        when ``uid`` is ""); otherwise storage is asked. Raises StatusError
        when storage cannot answer (the caller refuses the token).
        """
        ref = self.index.get(resource, namespace, name)
        if ref is not None and (not uid or ref.uid == uid):
            return ref
        if self._stub is None:
            return ref
        request = storage_pb2.GetRequest(key=storage_pb2.ResourceKey(resource=resource, namespace=namespace,
                                                                     name=name))
        try:
            reply = await grpcutil.call("storage", self._stub.Get, request, timeout=LOOKUP_TIMEOUT)
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise
        obj = jsonutil.loads(reply.object)  # type: ignore[attr-defined]
        return ref_of(obj, self.index.keep_full(resource, obj))[1]

    async def current(self, resource: str, namespace: str, name: str, uid: str) -> bool:
        """True if the object exists with ``uid`` and is not being deleted."""
        ref = await self.get(resource, namespace, name, uid)
        return ref is not None and ref.uid == uid and not ref.deleting
