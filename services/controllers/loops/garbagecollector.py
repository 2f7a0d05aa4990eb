"""garbagecollector: deletes dependents whose owners are gone (kube ``pkg/controller/garbagecollector``).

"Garbage Collection" and "Use Cascading Deletion" (kubernetes.io): the loop
watches every served resource that can be deleted (events excepted, as
kube's ignored resources) and keeps a graph of objects by uid with their
``metadata.ownerReferences``. Then:

- an object whose owners are all gone (absent, or present with another
  uid — verified with a live GET, since informers may lag) or are being
  deleted in the foreground is deleted (background propagation, with a uid
  precondition); one with some solid owners has only the dangling
  references removed;
- background deletion: deleting an owner makes its dependents' owners
  dangling, so they follow;
- foreground deletion: an owner marked for deletion with the
  ``foregroundDeletion`` finalizer has its dependents deleted; once no
  dependent with ``blockOwnerDeletion: true`` remains the finalizer is
  removed (and the owner goes);
- orphan: an owner marked for deletion with the ``orphan`` finalizer has
  its reference removed from every dependent, then the finalizer removed.

Custom resources are owners and dependents like any other object: the
loop follows the Established CRDs (:mod:`services.controllers.customresources`)
and watches each custom resource at its preferred version while it is
served (kube's GC resyncs its monitors from discovery the same way).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from kapi.resources import REGISTRY, Resource
from services.controllers import customresources
from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import Informer, WorkQueue
from services.controllers.objects import deleting, meta

log = logging.getLogger(__name__)

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
IGNORED = {("", "events"), ("events.k8s.io", "events")}
SOLID, DANGLING, WAITING = "solid", "dangling", "waiting"


def monitored_resources() -> list[Resource]:
    """Every stored, listable, deletable resource except events; a resource served at several versions
    (autoscaling v2 and v1) once, at its first (preferred) version."""
    seen: set[tuple[str, str]] = set(IGNORED)
    out = []
    for r in REGISTRY.rows:
        if r.stored and "list" in r.verbs and "watch" in r.verbs and "delete" in r.verbs \
                and (r.group, r.resource) not in seen:
            seen.add((r.group, r.resource))
            out.append(r)
    return out


def resource_of(api_version: str, kind: str) -> Resource | None:
    """The served resource of an ownerReference's apiVersion and kind, or None."""
    group, _, version = api_version.rpartition("/")
    return REGISTRY.by_kind(group, version, kind)


class GarbageCollector:
    """The owner-reference graph and the loop that deletes, orphans and finalizes."""

    name = "garbagecollector"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.resync = ctx.resync
        self.queue = WorkQueue(self.name)
        self.nodes: dict[str, tuple[Resource, dict[str, Any]]] = {}  # uid -> (resource, object)
        self.dependents: dict[str, set[str]] = {}  # owner uid -> dependent uids
        self.custom: dict[tuple[str, str], asyncio.Task[None]] = {}  # custom resource -> its informer's task
        for resource in monitored_resources():
            self._monitor(ctx.informer(resource), resource)
        self.crds = customresources.shared(ctx)
        self.crds.subscribe(self._custom_resources_changed)

    def _monitor(self, inf: Informer, resource: Resource) -> None:
        inf.on(add=lambda obj: self._upsert(resource, obj), update=lambda _old, new: self._upsert(resource, new),
               delete=self._removed)

    def _custom_resources_changed(self, added: dict[tuple[str, str], Resource], removed: set[tuple[str, str]]
                                  ) -> None:
        """Watch newly served custom resources (at their preferred version); stop watching removed ones."""
        for key in removed | set(added):
            task = self.custom.pop(key, None)
            if task is not None:
                task.cancel()
        for key in removed:
            for resource, obj in list(self.nodes.values()):
                if (resource.group, resource.resource) == key:
                    self._removed(obj)
        for key, resource in added.items():
            inf = Informer(self.client, path_for(resource), resync=self.resync)
            self._monitor(inf, resource)
            self.custom[key] = asyncio.get_running_loop().create_task(inf.run(), name=f"gc informer {key}")

    # -- graph maintenance (informer callbacks: no I/O, only enqueue)

    def _owner_uids(self, obj: dict[str, Any]) -> list[str]:
        return [str(ref.get("uid")) for ref in meta(obj).get("ownerReferences") or [] if ref.get("uid")]

    def _upsert(self, resource: Resource, obj: dict[str, Any]) -> None:
        uid = str(meta(obj).get("uid") or "")
        if not uid:
            return
        old = self.nodes.get(uid)
        if old is not None:
            for owner in self._owner_uids(old[1]):
                self.dependents.get(owner, set()).discard(uid)
        self.nodes[uid] = (resource, obj)
        owners = self._owner_uids(obj)
        for owner in owners:
            self.dependents.setdefault(owner, set()).add(uid)
        finalizers = meta(obj).get("finalizers") or []
        if deleting(obj) and (FOREGROUND in finalizers or ORPHAN in finalizers):
            self.queue.add(uid)
        if any(o not in self.nodes or deleting(self.nodes[o][1]) for o in owners):
            self.queue.add(uid)

    def _removed(self, obj: dict[str, Any]) -> None:
        uid = str(meta(obj).get("uid") or "")
        self.nodes.pop(uid, None)
        for owner in self._owner_uids(obj):
            self.dependents.get(owner, set()).discard(uid)
            if owner in self.nodes:
                self.queue.add(owner)  # a foreground owner may be able to go now
        for dependent in self.dependents.get(uid, set()):
            self.queue.add(dependent)

    # -- processing

    async def run(self) -> None:
        """Process graph changes until cancelled (the custom resources' informers stop with it)."""
        missing = {k: r for k, r in self.crds.served.items() if k not in self.custom}
        if missing:  # a restarted loop (see manager._guard) resumes watching what is served
            self._custom_resources_changed(missing, set())
        try:
            await self.queue.run(self.sync, workers=2)
        finally:
            tasks = list(self.custom.values())
            self.custom.clear()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def sync(self, uid: str) -> None:
        """Reconcile the object ``uid``: finalizer work if it is being deleted, else check its owners."""
        node = self.nodes.get(uid)
        if node is None:
            return
        resource, obj = node
        finalizers = meta(obj).get("finalizers") or []
        if deleting(obj) and ORPHAN in finalizers:
            await self._orphan(uid, resource, obj)
            return
        if deleting(obj) and FOREGROUND in finalizers:
            await self._foreground(uid, resource, obj)
            return
        refs = [r for r in meta(obj).get("ownerReferences") or [] if isinstance(r, dict)]
        if not refs:
            return
        states = [await self._owner_state(ref, meta(obj).get("namespace", "")) for ref in refs]
        if SOLID in states:
            dangling = [r.get("uid") for r, s in zip(refs, states, strict=True) if s == DANGLING]
            if dangling:
                await self._drop_owners(resource, obj, set(map(str, dangling)))
            return
        log.info("deleting %s %s/%s: owners gone", resource.resource, meta(obj).get("namespace", ""),
                 meta(obj).get("name"))
        try:
            await self.client.delete(self._path(resource, obj),
                                     {"propagationPolicy": "Background", "preconditions": {"uid": uid}})
        except ApiError as err:
            if err.code not in (404, 409):
                raise

    def _path(self, resource: Resource, obj: dict[str, Any]) -> str:
        return path_for(resource, meta(obj).get("namespace", ""), meta(obj).get("name", ""))

    async def _owner_state(self, ref: dict[str, Any], namespace: str) -> str:
        """SOLID, DANGLING (absent or another uid) or WAITING (deleting in the foreground) for one reference."""
        uid = str(ref.get("uid") or "")
        node = self.nodes.get(uid)
        owner: dict[str, Any] | None = node[1] if node else None
        if owner is None:
            resource = resource_of(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
            if resource is None:
                return SOLID  # an owner kind kapi does not serve: leave the dependent alone
            try:
                owner = await self.client.get(path_for(resource, namespace if resource.namespaced else "",
                                                       str(ref.get("name") or "")))
            except ApiError as err:
                if err.code == 404:
                    return DANGLING
                raise
            if str(meta(owner).get("uid")) != uid:
                return DANGLING
        if deleting(owner) and FOREGROUND in (meta(owner).get("finalizers") or []):
            return WAITING
        return SOLID

    async def _drop_owners(self, resource: Resource, obj: dict[str, Any], uids: set[str]) -> None:
        """Remove the owner references ``uids`` from ``obj`` (conditional update; retried via the queue)."""
        try:
            current = await self.client.get(self._path(resource, obj))
        except ApiError as err:
            if err.code == 404:
                return
            raise
        refs = [r for r in meta(current).get("ownerReferences") or [] if str(r.get("uid")) not in uids]
        new_meta = {**meta(current), "ownerReferences": refs}
        if not refs:
            new_meta.pop("ownerReferences")
        await self.client.update(self._path(resource, current), {**current, "metadata": new_meta})

    async def _remove_finalizer(self, resource: Resource, obj: dict[str, Any], finalizer: str) -> None:
        try:
            current = await self.client.get(self._path(resource, obj))
        except ApiError as err:
            if err.code == 404:
                return
            raise
        finalizers = [f for f in meta(current).get("finalizers") or [] if f != finalizer]
        new_meta = {**meta(current), "finalizers": finalizers}
        try:
            await self.client.update(self._path(resource, current), {**current, "metadata": new_meta})
        except ApiError as err:
            if err.code != 404:
                raise

    async def _orphan(self, uid: str, resource: Resource, obj: dict[str, Any]) -> None:
        for dep_uid in list(self.dependents.get(uid, set())):
            dep = self.nodes.get(dep_uid)
            if dep is not None:
                await self._drop_owners(dep[0], dep[1], {uid})
        await self._remove_finalizer(resource, obj, ORPHAN)

    async def _foreground(self, uid: str, resource: Resource, obj: dict[str, Any]) -> None:
        blocking = 0
        for dep_uid in list(self.dependents.get(uid, set())):
            dep = self.nodes.get(dep_uid)
            if dep is None:
                continue
            dep_resource, dep_obj = dep
            refs = [r for r in meta(dep_obj).get("ownerReferences") or [] if str(r.get("uid")) == uid]
            if any(r.get("blockOwnerDeletion") for r in refs):
                blocking += 1
            if not deleting(dep_obj):
                try:
                    await self.client.delete(self._path(dep_resource, dep_obj),
                                             {"propagationPolicy": "Foreground",
                                              "preconditions": {"uid": dep_uid}})
                except ApiError as err:
                    if err.code not in (404, 409):
                        raise
        if blocking:
            self.queue.add_after(uid, 0.5)
            return
        await self._remove_finalizer(resource, obj, FOREGROUND)
