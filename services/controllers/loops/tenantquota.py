"""tenant-quota: the seeds' quota controller — a tenant namespace gets ResourceQuotas from a template ConfigMap.

The template is the ConfigMap ``--tenant-quota-configmap`` (default
``tenant-quota-template``) in kube-system: each data key names one
ResourceQuota and its value is that quota's ``spec`` in YAML or JSON. The
default template (created at start when absent) splits pods into
BestEffort and NotBestEffort counts (two scoped quotas) and limits
services, ingresses and LoadBalancer services (the seeds' "service VIPs").
When a tenant namespace appears (:func:`kapi.tenancy.tenant_subjects`), each
quota of the template is created in it unless one of that name exists;
later template edits apply to namespaces created afterwards. The
ResourceQuota admission plugin enforces them.
"""

from __future__ import annotations

import logging
from typing import Any

import yaml

from kapi import safedecode, tenancy
from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue
from services.controllers.objects import CONFIGMAPS, NAMESPACES, RESOURCEQUOTAS, meta, namespace_active

log = logging.getLogger(__name__)

NAMESPACE = "kube-system"
DEFAULT_NAME = "tenant-quota-template"
DEFAULT_TEMPLATE: dict[str, str] = {
    "tenant-best-effort-pods": "scopes: [BestEffort]\nhard:\n  pods: \"10\"\n",
    "tenant-not-best-effort-pods": "scopes: [NotBestEffort]\nhard:\n  pods: \"10\"\n",
    "tenant-services": ("hard:\n  services: \"10\"\n  services.loadbalancers: \"2\"\n"
                        "  count/ingresses.networking.k8s.io: \"10\"\n"),
}


def quotas_from_template(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """quota name -> ResourceQuota spec, from a template ConfigMap's ``data``; unparsable entries are skipped
    (logged)."""
    out: dict[str, dict[str, Any]] = {}
    for name, text in sorted((data or {}).items()):
        try:
            spec = safedecode.load_yaml(text) if isinstance(text, str) else None
        except yaml.YAMLError as exc:
            log.warning("tenant quota template entry %s is not YAML: %s", name, exc)
            continue
        if not isinstance(spec, dict) or not isinstance(spec.get("hard"), dict):
            log.warning("tenant quota template entry %s has no spec.hard", name)
            continue
        spec["hard"] = {str(k): str(v) for k, v in spec["hard"].items()}
        out[name] = spec
    return out


class TenantQuotaController:
    """Creates the template's ResourceQuotas in each new tenant namespace."""

    name = "tenant-quota"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.template_name = str(getattr(ctx.args, "tenant_quota_configmap", "") or DEFAULT_NAME)
        self.queue = WorkQueue(self.name)
        self.namespaces = ctx.informer(NAMESPACES)
        self.configmaps = ctx.informer(CONFIGMAPS, NAMESPACE)
        self.namespaces.on(add=self._ns)

    def _ns(self, ns: dict[str, Any]) -> None:
        if namespace_active(ns) and tenancy.tenant_subjects(ns):
            self.queue.add(meta(ns).get("name", ""))

    async def run(self) -> None:
        """Ensure the template exists, then process new namespaces until cancelled."""
        await self.ensure_template()
        await self.queue.run(self.sync)

    async def ensure_template(self) -> None:
        """Create the default template ConfigMap if absent (an existing one is never changed)."""
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": self.template_name, "namespace": NAMESPACE}, "data": DEFAULT_TEMPLATE}
        try:
            await self.client.create(path_for(CONFIGMAPS, NAMESPACE), body)
            log.info("created the default tenant quota template %s/%s", NAMESPACE, self.template_name)
        except ApiError as err:
            if err.code != 409:
                log.error("cannot create the tenant quota template: %s", err)

    async def template(self) -> dict[str, dict[str, Any]]:
        """The current template (read live: it must be current when a namespace appears)."""
        try:
            cm = await self.client.get(path_for(CONFIGMAPS, NAMESPACE, self.template_name))
        except ApiError as err:
            if err.code == 404:
                return {}
            raise
        return quotas_from_template(cm.get("data") or {})

    async def sync(self, namespace: str) -> None:
        """Create each template quota absent from ``namespace``."""
        ns = self.namespaces.get(namespace)
        if not namespace_active(ns) or not tenancy.tenant_subjects(ns or {}):
            return
        for name, spec in (await self.template()).items():
            body = {"apiVersion": "v1", "kind": "ResourceQuota",
                    "metadata": {"name": name, "namespace": namespace,
                                 "labels": {"app.kubernetes.io/managed-by": "kapi-tenant-quota"}},
                    "spec": spec}
            try:
                await self.client.create(path_for(RESOURCEQUOTAS, namespace), body)
                log.info("namespace %s: created quota %s", namespace, name)
            except ApiError as err:
                if err.code not in (403, 404, 409):
                    raise
