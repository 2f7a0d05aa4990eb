"""autoregister: the Local APIServices of kapi's own group-versions and of served CRD group-versions.

kube-apiserver runs this in its aggregator (``kube-apiserver-autoregistration``
post-start hook: kube-aggregator ``pkg/controllers/autoregister`` fed by
``apiServicesToRegister`` and ``pkg/controlplane/controller/crdregistration``);
kapi's API servers are stateless gateways, so the leader-elected controller
manager keeps them, through the REST API like any client.

Desired APIServices, each without ``spec.service`` (Local):

- one per served built-in group-version with an entry in kube's priority
  table (``v1.``, ``v1.apps``, ``v1.rbac.authorization.k8s.io``...; kapi's
  table, :data:`kapi.apiregistration.PRIORITIES`), label
  ``kube-aggregator.kubernetes.io/automanaged: onstart``;
- one per version served by an Established CRD (``v1.stable.example.com``),
  groupPriorityMinimum 1000 and versionPriority 100, label value ``true``.

Per APIService name, as autoregister's ``checkAPIService``: absent and
desired -> created; present with a different spec -> spec put back (an
``onstart`` one only until its first successful sync, so later edits
stay); present, not desired and labelled ``true`` -> deleted (a ``onstart``
one only at its first sync, when kapi stopped serving that group-version);
unlabelled ones are the user's and never touched. The ``Available``
condition (``Local``) is written by the gateways' aggregator.
"""

from __future__ import annotations

import logging
from typing import Any

from kapi import apiregistration
from kapi.apiregistration import AUTOMANAGED, ONSTART, SYNC
from kapi.resources import REGISTRY
from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue
from services.controllers.objects import meta, row

log = logging.getLogger(__name__)

APISERVICES = row(apiregistration.GROUP, apiregistration.RESOURCE)
CRDS = row("apiextensions.k8s.io", "customresourcedefinitions")


def builtin_apiservices() -> dict[str, dict[str, Any]]:
    """The ``onstart`` APIServices of kapi's static resource table (group-versions kube has a priority for)."""
    served: dict[str, list[str]] = {"": ["v1"]}
    for r in REGISTRY.static:
        if r.group and r.version not in served.setdefault(r.group, []):
            served[r.group].append(r.version)
    out = {}
    for group, versions in served.items():
        for version in versions:
            priority = apiregistration.PRIORITIES.get((group, version))
            if priority is not None:  # kube: "Skipping APIService creation" for a version not in its table
                obj = apiregistration.local_apiservice(group, version, priority, ONSTART)
                out[obj["metadata"]["name"]] = obj
    return out


def established(crd: dict[str, Any]) -> bool:
    """True when the CRD's Established condition is True."""
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(isinstance(c, dict) and c.get("type") == "Established" and c.get("status") == "True"
               for c in conditions)


def crd_group_versions(crd: dict[str, Any]) -> list[tuple[str, str]]:
    """(group, version) of each served version of a CRD."""
    spec = crd.get("spec") or {}
    group = str(spec.get("group") or "")
    return [(group, str(v.get("name"))) for v in spec.get("versions") or []
            if isinstance(v, dict) and v.get("served") and v.get("name") and group]


class AutoRegister:
    """Keeps the Local APIServices of built-in and CRD group-versions (see the module docstring)."""

    name = "autoregister"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.queue = WorkQueue(self.name)
        self.onstart = builtin_apiservices()
        self.synced: set[str] = set()  # names synced successfully at least once (autoregister's syncedSuccessfully)
        self.apiservices = ctx.informer(APISERVICES)
        self.crds = ctx.informer(CRDS)
        self.apiservices.on(add=self._apiservice, update=lambda _o, n: self._apiservice(n), delete=self._apiservice)
        self.crds.on(add=self._crd, update=self._crd_update, delete=self._crd)

    def _apiservice(self, obj: dict[str, Any]) -> None:
        self.queue.add(str(meta(obj).get("name") or ""))

    def _crd(self, crd: dict[str, Any]) -> None:
        for group, version in crd_group_versions(crd):
            self.queue.add(apiregistration.name_of(group, version))

    def _crd_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._crd(old)
        self._crd(new)

    def desired(self, name: str) -> dict[str, Any] | None:
        """The APIService ``name`` should be, or None when nothing of kapi serves it."""
        if name in self.onstart:
            return self.onstart[name]
        for crd in self.crds.items():
            if not established(crd):
                continue
            for group, version in crd_group_versions(crd):
                if apiregistration.name_of(group, version) == name:
                    return apiregistration.local_apiservice(group, version, apiregistration.CRD_PRIORITY, SYNC)
        return None

    async def run(self) -> None:
        """Queue every known name, then reconcile until cancelled."""
        for name in [*self.onstart, *(str(meta(o).get("name") or "") for o in self.apiservices.items())]:
            self.queue.add(name)
        for crd in self.crds.items():
            self._crd(crd)
        await self.queue.run(self.sync)

    async def sync(self, name: str) -> None:
        """Create, update or delete the APIService ``name`` (autoregister's checkAPIService)."""
        if not name:
            return
        desired = self.desired(name)
        actual = self.apiservices.get(name)
        try:
            if desired is None:
                managed = (meta(actual).get("labels") or {}).get(AUTOMANAGED) if actual else None
                if actual is not None and (managed == SYNC or (managed == ONSTART and name not in self.synced)):
                    log.info("deleting APIService %s", name)
                    await self.client.delete(path_for(APISERVICES, name=name), {
                        "preconditions": {"uid": meta(actual).get("uid")}})
            elif actual is None:
                log.info("creating APIService %s", name)
                await self.client.create(path_for(APISERVICES), desired)
            elif not (self._managed(desired) == ONSTART and name in self.synced) and \
                    actual.get("spec") != desired["spec"]:
                log.info("updating APIService %s", name)
                await self.client.update(path_for(APISERVICES, name=name), {**actual, "spec": desired["spec"]})
        except ApiError as err:
            if err.code == 404 and desired is None:
                pass  # already gone
            elif err.code == 409:  # raced another writer: look again once the informer caught up
                self.queue.add_after(name, 0.5)
                return
            else:
                raise
        self.synced.add(name)

    @staticmethod
    def _managed(obj: dict[str, Any]) -> str:
        return str((meta(obj).get("labels") or {}).get(AUTOMANAGED) or "")
