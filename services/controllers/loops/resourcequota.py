"""resourcequota: recalculates ``status.used`` (and ``status.hard``) of every ResourceQuota (kube
``pkg/controller/resourcequota``).

A quota is recalculated when it is added or its ``spec.hard`` differs from
``status.hard``, when an object it may count (a Pod, Service, ConfigMap,
Secret, PVC...) is deleted or a Pod ends in its namespace (replenishment),
and at every informer resync (``--resource-quota-sync-period``). Usage is
the sum, over the namespace's live objects that match the quota's scopes,
of what the ResourceQuota admission plugin charges for them (the same
evaluators: counts, ``count/<resource>.<group>``, pod compute, service
types; custom resources through the served CRDs,
:mod:`services.controllers.customresources`), written with a conditional ``PUT .../resourcequotas/<name>/status``
(retried on Conflict, since admission charges the same status).
"""

from __future__ import annotations

import logging
from fractions import Fraction
from typing import Any

from kapi.quota import add_usage, counted_resources, format_usage
from kapi.resources import REGISTRY
from services.controllers import customresources
from services.controllers.client import ApiError, Client, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue, key_of, split_key
from services.controllers.objects import RESOURCEQUOTAS, meta, row

log = logging.getLogger(__name__)

REPLENISHED = ("pods", "services", "configmaps", "secrets", "persistentvolumeclaims")


async def calculate(client: Client, quota: dict[str, Any]) -> dict[str, str]:
    """``status.used`` for ``quota``: every ``spec.hard`` name summed over its namespace's matching objects."""
    hard = (quota.get("spec") or {}).get("hard") or {}
    namespace = meta(quota).get("namespace", "")
    totals = {k: Fraction(0) for k in hard}
    for group, res in sorted(counted_resources(list(hard))):
        resource = REGISTRY.get(group, "v1", res) or next(  # a custom resource: its preferred version
            (r for r in REGISTRY.rows if (r.group, r.resource) == (group, res)), None)
        if resource is None or not resource.stored or not resource.namespaced:
            continue
        items = (await client.list_all(path_for(resource, namespace))).get("items") or []
        add_usage(totals, quota, items, group, res)
    return {k: format_usage(k, v) for k, v in totals.items()}


class ResourceQuotaController:
    """Keeps every quota's status current."""

    name = "resourcequota"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.queue = WorkQueue(self.name)
        self.quotas = ctx.informer(RESOURCEQUOTAS)
        self.quotas.on(add=self._quota, update=self._quota_update)
        customresources.shared(ctx)  # count/<plural>.<group> of custom resources needs them in REGISTRY
        for res in REPLENISHED:
            ctx.informer(row("", res)).on(delete=self._replenish,
                                           update=self._pod_update if res == "pods" else None)

    def _quota(self, quota: dict[str, Any]) -> None:
        self.queue.add(key_of(quota))

    def _quota_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        status = new.get("status") or {}
        if old is new or (new.get("spec") or {}).get("hard") != status.get("hard") or "used" not in status:
            self.queue.add(key_of(new))

    def _replenish(self, obj: dict[str, Any]) -> None:
        namespace = meta(obj).get("namespace", "")
        for quota in self.quotas.items():
            if meta(quota).get("namespace") == namespace:
                self.queue.add(key_of(quota))

    def _pod_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        ended = ("Succeeded", "Failed")
        if (new.get("status") or {}).get("phase") in ended and (old.get("status") or {}).get("phase") not in ended:
            self._replenish(new)

    async def run(self) -> None:
        """Process quotas until cancelled."""
        await self.queue.run(self.sync)

    async def sync(self, key: str) -> None:
        """Recalculate and write the status of quota ``key`` ("namespace/name") if it changed."""
        namespace, name = split_key(key)
        path = path_for(RESOURCEQUOTAS, namespace, name)
        for _ in range(5):
            try:
                quota = await self.client.get(path)
            except ApiError as err:
                if err.code == 404:
                    return
                raise
            hard = (quota.get("spec") or {}).get("hard") or {}
            used = await calculate(self.client, quota)
            status = {"hard": dict(hard), "used": used}
            if quota.get("status") == status:
                return
            try:
                await self.client.update(path_for(RESOURCEQUOTAS, namespace, name, "status"),
                                         {**quota, "status": status})
                return
            except ApiError as err:
                if err.code != 409:
                    raise
        raise ApiError(409, "Conflict", f"resourcequota {key}: too many conflicts")
