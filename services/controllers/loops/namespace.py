"""namespace: empties a deleted Namespace, then finalizes it (kube ``pkg/controller/namespace``).

When a Namespace carries ``metadata.deletionTimestamp`` (``DELETE`` marks
it and sets ``status.phase`` Terminating while ``spec.finalizers`` holds
``kubernetes``), the loop deletes every namespaced object in it (each
served namespaced resource's collection), then counts what is left
(objects held by finalizers) and writes the conditions kube-controller-
manager writes ("Namespaces" concept page; ``namespaced_resources_deleter.go``):

==========================================  ======  ==========================
type                                        status  reason
==========================================  ======  ==========================
NamespaceDeletionDiscoveryFailure           False   ResourcesDiscovered
NamespaceDeletionGroupVersionParsingFailure False   ParsedGroupVersions
NamespaceDeletionContentFailure             False   ContentDeleted
NamespaceContentRemaining                   T / F   SomeResourcesRemain / ContentRemoved
NamespaceFinalizersRemaining                T / F   SomeFinalizersRemain / ContentHasNoFinalizers
==========================================  ======  ==========================

Once nothing remains it removes ``kubernetes`` from ``spec.finalizers``
with ``PUT /api/v1/namespaces/<name>/finalize``; an empty finalizer list
purges the Namespace (and if the server kept it, the loop deletes it
again, which then removes it). While content remains it checks again
after a short delay.
"""

from __future__ import annotations

import logging
from typing import Any

from kapi.resources import REGISTRY, Resource
from services.controllers import customresources
from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue
from services.controllers.objects import NAMESPACES, deleting, meta, now_text

log = logging.getLogger(__name__)

FINALIZER = "kubernetes"
RECHECK_SECONDS = 1.0


def namespaced_resources() -> list[Resource]:
    """Every stored namespaced resource that can be listed and deleted (the namespace's possible content).

    Resources served at several versions (custom resources, autoscaling) are included once each (the first
    row, their preferred version).
    """
    seen: set[tuple[str, str]] = set()
    out = []
    for r in REGISTRY.rows:
        if r.namespaced and r.stored and "list" in r.verbs and "delete" in r.verbs and \
                (r.group, r.resource) not in seen:
            seen.add((r.group, r.resource))
            out.append(r)
    return out


def conditions(remaining: dict[str, int], finalizers: dict[str, int], failures: list[str],
               old: list[dict[str, Any]], now: str) -> list[dict[str, Any]]:
    """The five deletion conditions for counts ``remaining`` ("<resource>.<group>" -> objects left) and
    ``finalizers`` (finalizer -> objects holding it); ``lastTransitionTime`` kept from ``old`` while the
    status is unchanged."""
    def cond(type_: str, true: bool, reason: str, message: str) -> dict[str, Any]:
        return {"type": type_, "status": "True" if true else "False", "reason": reason, "message": message}

    content_msg = ", ".join(f"{k} has {v} resource instances" for k, v in sorted(remaining.items()))
    final_msg = ", ".join(f"{k} in {v} resource instances" for k, v in sorted(finalizers.items()))
    wanted = [
        cond("NamespaceDeletionDiscoveryFailure", False, "ResourcesDiscovered",
             "All resources successfully discovered"),
        cond("NamespaceDeletionGroupVersionParsingFailure", False, "ParsedGroupVersions",
             "All legacy kube types successfully parsed"),
        cond("NamespaceDeletionContentFailure", bool(failures), "ContentDeletionFailed" if failures else
             "ContentDeleted", "Failed to delete all resource types, " + ", ".join(failures) if failures else
             "All content successfully deleted, may be waiting on finalization"),
        cond("NamespaceContentRemaining", bool(remaining), "SomeResourcesRemain" if remaining else "ContentRemoved",
             f"Some resources are remaining: {content_msg}" if remaining else "All content successfully removed"),
        cond("NamespaceFinalizersRemaining", bool(finalizers),
             "SomeFinalizersRemain" if finalizers else "ContentHasNoFinalizers",
             f"Some content in the namespace has finalizers remaining: {final_msg}" if finalizers else
             "All content-preserving finalizers finished"),
    ]
    previous = {c.get("type"): c for c in old if isinstance(c, dict)}
    for c in wanted:
        before = previous.get(c["type"])
        c["lastTransitionTime"] = before.get("lastTransitionTime", now) if before and \
            before.get("status") == c["status"] else now
    return wanted


class NamespaceController:
    """The namespace lifecycle loop."""

    name = "namespace"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.queue = WorkQueue(self.name)
        self.namespaces = ctx.informer(NAMESPACES)
        self.namespaces.on(add=self._enqueue, update=lambda _old, new: self._enqueue(new))
        customresources.shared(ctx)  # a namespace's content includes its custom resources

    def _enqueue(self, ns: dict[str, Any]) -> None:
        if deleting(ns):
            self.queue.add(meta(ns).get("name", ""))

    async def run(self) -> None:
        """Process deleted namespaces until cancelled."""
        await self.queue.run(self.sync, workers=2)

    async def sync(self, name: str) -> None:
        """Empty and finalize the namespace ``name`` if it is being deleted; raises ApiError to retry."""
        try:
            ns = await self.client.get(path_for(NAMESPACES, name=name))
        except ApiError as err:
            if err.code == 404:
                return
            raise
        if not deleting(ns):
            return
        finalizers = list((ns.get("spec") or {}).get("finalizers") or [])
        if FINALIZER in finalizers:
            remaining, holding, failures = await self._delete_content(name)
            await self._write_conditions(ns, remaining, holding, failures)
            if remaining or failures:
                self.queue.add_after(name, RECHECK_SECONDS)
                return
            finalized = await self._finalize(name)
            if finalized is None:
                return
            ns = finalized
        if not (ns.get("spec") or {}).get("finalizers") and not meta(ns).get("finalizers"):
            try:
                await self.client.delete(path_for(NAMESPACES, name=name))
            except ApiError as err:
                if err.code not in (404, 409):
                    raise

    async def _delete_content(self, name: str) -> tuple[dict[str, int], dict[str, int], list[str]]:
        """Delete each resource's collection in ``name``; returns what remains (per "<resource>.<group>"),
        the finalizers holding it, and the resources whose deletion failed."""
        remaining: dict[str, int] = {}
        holding: dict[str, int] = {}
        failures: list[str] = []
        for resource in namespaced_resources():
            path = path_for(resource, name)
            try:
                listed = await self.client.list_all(path)
                if not listed.get("items"):
                    continue
                if "deletecollection" in resource.verbs:
                    await self.client.delete(path, {"propagationPolicy": "Background"})
                else:  # Services: no DeleteCollection on kube either, so one DELETE per object (deleteEachItem)
                    await self._delete_each(resource, name, listed["items"])
                left = (await self.client.list_all(path)).get("items") or []
            except ApiError as err:
                if err.code in (404, 405):
                    continue
                failures.append(f"{resource.resource}.{resource.group}: {err.message}")
                continue
            if left:
                remaining[f"{resource.resource}.{resource.group}"] = len(left)
                for obj in left:
                    for f in meta(obj).get("finalizers") or []:
                        holding[f] = holding.get(f, 0) + 1
        return remaining, holding, failures

    async def _delete_each(self, resource: Resource, namespace: str, items: list[dict[str, Any]]) -> None:
        """DELETE each listed object (one already gone is fine); raises ApiError otherwise."""
        for obj in items:
            try:
                await self.client.delete(path_for(resource, namespace, name=meta(obj)["name"]),
                                         {"propagationPolicy": "Background"})
            except ApiError as err:
                if err.code != 404:
                    raise

    async def _write_conditions(self, ns: dict[str, Any], remaining: dict[str, int], holding: dict[str, int],
                                failures: list[str]) -> None:
        status = dict(ns.get("status") or {})
        wanted = conditions(remaining, holding, failures, list(status.get("conditions") or []), now_text())
        if status.get("conditions") == wanted and status.get("phase") == "Terminating":
            return
        status.update({"phase": "Terminating", "conditions": wanted})
        try:
            await self.client.update(path_for(NAMESPACES, name=meta(ns)["name"], subresource="status"),
                                     {**ns, "status": status})
        except ApiError as err:
            if err.code not in (404, 409):
                raise

    async def _finalize(self, name: str) -> dict[str, Any] | None:
        """Remove the ``kubernetes`` finalizer; the namespace after it, or None if it is gone."""
        try:
            ns = await self.client.get(path_for(NAMESPACES, name=name))
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        spec = dict(ns.get("spec") or {})
        spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != FINALIZER]
        try:
            reply = await self.client.update(path_for(NAMESPACES, name=name, subresource="finalize"),
                                             {**ns, "spec": spec})
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        log.info("namespace %s: content removed, finalized", name)
        if reply.get("kind") == "Namespace" and meta(reply).get("name") == name:
            try:
                return await self.client.get(path_for(NAMESPACES, name=name))
            except ApiError as err:
                if err.code == 404:
                    return None
                raise
        return None
