"""The controllers' discovery of custom resources: REGISTRY follows the Established CRDs.

kube-controller-manager's garbage collector, namespace and quota
controllers find every resource through discovery, custom resources
included. Here one CRD informer per :class:`~services.controllers.context.Context`
keeps :data:`kapi.resources.REGISTRY`'s overlay equal to the served
versions of the Established CustomResourceDefinitions (the rows the
gateways serve, from :func:`kapi.crd.rows`), and tells subscribers which
custom resources (one row per group/resource: the preferred version)
appeared or went away, so a loop can start or stop watching them.
Sources: "Garbage Collection" (owners and dependents of any kind) and
kube-controller-manager's ``GarbageCollector.Sync`` / ``resourcequota``
``--discovery`` resync.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kapi import crd
from kapi.resources import REGISTRY, Resource
from services.controllers.context import Context

log = logging.getLogger(__name__)

GroupResource = tuple[str, str]
Listener = Callable[[dict[GroupResource, Resource], set[GroupResource]], None]

_CRDS = REGISTRY.get(crd.GROUP, "v1", crd.RESOURCE)
assert _CRDS is not None
CRDS: Resource = _CRDS


class CustomResources:
    """The custom resources the API serves now, from a CRD informer (see the module doc)."""

    def __init__(self, ctx: Context):
        self.served: dict[GroupResource, Resource] = {}  # (group, resource) -> preferred version's row
        self._listeners: list[Listener] = []
        self.informer = ctx.informer(CRDS)
        self.informer.on(add=lambda _obj: self._refresh(), update=lambda _old, _new: self._refresh(),
                         delete=lambda _obj: self._refresh())

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(added, removed)`` after every change: rows by (group, resource), and the keys gone."""
        self._listeners.append(listener)

    def preferred(self, group: str, resource: str) -> Resource | None:
        """The served row of a custom resource at its preferred version, or None."""
        return self.served.get((group, resource))

    def _refresh(self) -> None:
        rows = [row for definition in self.informer.items() for row in crd.rows(definition)]
        REGISTRY.set_overlay(rows)
        served: dict[GroupResource, Resource] = {}
        for row in rows:  # crd.rows lists the preferred version first
            if REGISTRY.get(row.group, row.version, row.resource) == row and not REGISTRY.is_static(row):
                served.setdefault((row.group, row.resource), row)
        added = {k: v for k, v in served.items() if self.served.get(k) != v}
        removed = set(self.served) - set(served)
        self.served = served
        if added or removed:
            log.info("custom resources: +%s -%s", sorted(added), sorted(removed))
            for listener in self._listeners:
                listener(added, removed)


def shared(ctx: Context) -> CustomResources:
    """The one :class:`CustomResources` of ``ctx`` (created, and its informer registered, on first use)."""
    found: Any = ctx.shared.get("customresources")
    if found is None:
        found = ctx.shared["customresources"] = CustomResources(ctx)
    return found  # type: ignore[no-any-return]
