"""tenant-rbac: the seeds' RBAC controller for tenant namespaces, and the switchable namespace-provisioning grant.

For each active Namespace whose creator annotation names an ordinary user
(:func:`kapi.tenancy.tenant_subjects`), the RoleBinding
``namespace-creator`` in it binds the ClusterRole ``namespace-creator`` to
the creator (and to the tenant group when one was chosen); a namespace
without a valid creator gets no binding. A deleted or altered binding is
put back.

At start, the ClusterRoleBinding ``kapi:namespace-provisioners`` (ClusterRole
``kapi:namespace-provisioner``: create namespaces, for the group
``system:authenticated``) is created when ``--tenant-namespace-provisioning``
is true and deleted when it is false: the switch that lets ordinary users
create namespaces. Both ClusterRoles come from the authz bootstrap policy.
"""

from __future__ import annotations

import logging
from typing import Any

from kapi import tenancy
from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue
from services.controllers.objects import CLUSTERROLEBINDINGS, NAMESPACES, ROLEBINDINGS, meta, namespace_active

log = logging.getLogger(__name__)
RBAC = "rbac.authorization.k8s.io"


def binding(namespace: str, subjects: list[dict[str, str]]) -> dict[str, Any]:
    """The tenant RoleBinding for ``namespace``."""
    return {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
            "metadata": {"name": tenancy.TENANT_BINDING, "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "kapi-tenant-rbac"}},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": tenancy.NAMESPACE_CREATOR_ROLE},
            "subjects": subjects}


def provisioning_binding() -> dict[str, Any]:
    """The ClusterRoleBinding letting every authenticated user create namespaces."""
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": tenancy.PROVISIONER_BINDING,
                         "labels": {"app.kubernetes.io/managed-by": "kapi-tenant-rbac"}},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": tenancy.PROVISIONER_ROLE},
            "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": "system:authenticated"}]}


class TenantRBACController:
    """Binds ``namespace-creator`` to each tenant namespace's creator."""

    name = "tenant-rbac"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.provisioning = bool(getattr(ctx.args, "tenant_namespace_provisioning", True))
        self.queue = WorkQueue(self.name)
        self.namespaces = ctx.informer(NAMESPACES)
        self.bindings = ctx.informer(ROLEBINDINGS)
        self.namespaces.on(add=self._ns, update=lambda _o, n: self._ns(n))
        self.bindings.on(update=lambda _o, n: self._rb(n), delete=self._rb)

    def _ns(self, ns: dict[str, Any]) -> None:
        if namespace_active(ns) and tenancy.tenant_subjects(ns):
            self.queue.add(meta(ns).get("name", ""))

    def _rb(self, rb: dict[str, Any]) -> None:
        if meta(rb).get("name") == tenancy.TENANT_BINDING:
            self.queue.add(meta(rb).get("namespace", ""))

    async def run(self) -> None:
        """Apply the provisioning switch, then process namespaces until cancelled."""
        await self.ensure_provisioning()
        await self.queue.run(self.sync)

    async def ensure_provisioning(self) -> None:
        """Create or delete the ``kapi:namespace-provisioners`` ClusterRoleBinding per the flag (logged, not
        raised, on refusal)."""
        path = path_for(CLUSTERROLEBINDINGS, name=tenancy.PROVISIONER_BINDING)
        try:
            if self.provisioning:
                try:
                    await self.client.create(path_for(CLUSTERROLEBINDINGS), provisioning_binding())
                    log.info("namespace provisioning enabled for system:authenticated")
                except ApiError as err:
                    if err.code != 409:
                        raise
            else:
                try:
                    await self.client.delete(path)
                    log.info("namespace provisioning disabled")
                except ApiError as err:
                    if err.code != 404:
                        raise
        except ApiError as err:
            log.error("cannot apply --tenant-namespace-provisioning=%s: %s", self.provisioning, err)

    async def sync(self, namespace: str) -> None:
        """Create or repair the tenant RoleBinding of ``namespace``."""
        ns = self.namespaces.get(namespace)
        if not namespace_active(ns):
            return
        assert ns is not None
        subjects = tenancy.tenant_subjects(ns)
        if not subjects:
            return
        wanted = binding(namespace, subjects)
        current = self.bindings.get(f"{namespace}/{tenancy.TENANT_BINDING}")
        try:
            if current is None:
                await self.client.create(path_for(ROLEBINDINGS, namespace), wanted)
                log.info("namespace %s: bound %s to %s", namespace, tenancy.NAMESPACE_CREATOR_ROLE,
                         ", ".join(f"{s['kind']} {s['name']}" for s in subjects))
            elif current.get("roleRef") != wanted["roleRef"]:
                await self.client.delete(path_for(ROLEBINDINGS, namespace, tenancy.TENANT_BINDING))
                self.queue.add_after(namespace, 0.1)
            elif current.get("subjects") != subjects:
                await self.client.update(path_for(ROLEBINDINGS, namespace, tenancy.TENANT_BINDING),
                                         {**current, "subjects": subjects})
        except ApiError as err:
            if err.code == 409:
                self.queue.add_after(namespace, 0.2)
            elif err.code not in (403, 404):
                raise
