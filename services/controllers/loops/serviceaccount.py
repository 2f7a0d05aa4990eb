"""serviceaccount: a ``default`` ServiceAccount in every active namespace (kube ``pkg/controller/serviceaccount``).

Triggered by a Namespace being added or updated and by a ``default``
ServiceAccount being deleted; namespaces being deleted are skipped
("Managing Service Accounts": "ServiceAccount controller").
"""

from __future__ import annotations

from typing import Any

from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue
from services.controllers.objects import NAMESPACES, SERVICEACCOUNTS, meta, namespace_active

NAME = "default"


class ServiceAccountController:
    """Ensures ``default`` exists in each active namespace."""

    name = "serviceaccount"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.queue = WorkQueue(self.name)
        self.namespaces = ctx.informer(NAMESPACES)
        self.accounts = ctx.informer(SERVICEACCOUNTS)
        self.namespaces.on(add=self._ns, update=lambda _o, n: self._ns(n))
        self.accounts.on(delete=self._sa_deleted)

    def _ns(self, ns: dict[str, Any]) -> None:
        if namespace_active(ns):
            self.queue.add(meta(ns).get("name", ""))

    def _sa_deleted(self, sa: dict[str, Any]) -> None:
        if meta(sa).get("name") == NAME:
            self.queue.add(meta(sa).get("namespace", ""))

    async def run(self) -> None:
        """Process namespaces until cancelled."""
        await self.queue.run(self.sync)

    async def sync(self, namespace: str) -> None:
        """Create ``default`` in ``namespace`` if the cache lacks it (AlreadyExists and a terminating or absent
        namespace are fine)."""
        if not namespace_active(self.namespaces.get(namespace)):
            return
        if self.accounts.get(f"{namespace}/{NAME}") is not None:
            return
        body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": NAME, "namespace": namespace}}
        try:
            await self.client.create(path_for(SERVICEACCOUNTS, namespace), body)
        except ApiError as err:
            if err.code not in (403, 404, 409):
                raise
