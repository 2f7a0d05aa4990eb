"""root-ca-cert-publisher: the ``kube-root-ca.crt`` ConfigMap in every namespace (kube
``pkg/controller/certificates/rootcacertpublisher``).

Data ``ca.crt`` is the cluster CA bundle (``--root-ca-file``, default the
kubeconfig's CA); the annotation ``kubernetes.io/description`` is kube's.
A missing ConfigMap is created, a changed one is put back.
"""

from __future__ import annotations

from typing import Any

from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue
from services.controllers.objects import CONFIGMAPS, NAMESPACES, meta, namespace_active

NAME = "kube-root-ca.crt"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")
ANNOTATION = "kubernetes.io/description"


class RootCACertPublisher:
    """Keeps ``kube-root-ca.crt`` equal to the cluster CA in each active namespace."""

    name = "root-ca-cert-publisher"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.ca = ctx.root_ca.decode()
        self.queue = WorkQueue(self.name)
        self.namespaces = ctx.informer(NAMESPACES)
        self.configmaps = ctx.informer(CONFIGMAPS)
        self.namespaces.on(add=self._ns, update=lambda _o, n: self._ns(n))
        self.configmaps.on(update=lambda _o, n: self._cm(n), delete=self._cm)

    def _ns(self, ns: dict[str, Any]) -> None:
        if namespace_active(ns):
            self.queue.add(meta(ns).get("name", ""))

    def _cm(self, cm: dict[str, Any]) -> None:
        if meta(cm).get("name") == NAME:
            self.queue.add(meta(cm).get("namespace", ""))

    async def run(self) -> None:
        """Process namespaces until cancelled."""
        await self.queue.run(self.sync)

    async def sync(self, namespace: str) -> None:
        """Create or repair the ConfigMap in ``namespace``; nothing without a CA or an active namespace."""
        if not self.ca or not namespace_active(self.namespaces.get(namespace)):
            return
        current = self.configmaps.get(f"{namespace}/{NAME}")
        try:
            if current is None:
                await self.client.create(path_for(CONFIGMAPS, namespace), {
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": NAME, "namespace": namespace, "annotations": {ANNOTATION: DESCRIPTION}},
                    "data": {"ca.crt": self.ca}})
            elif (current.get("data") or {}).get("ca.crt") != self.ca or \
                    (meta(current).get("annotations") or {}).get(ANNOTATION) != DESCRIPTION:
                annotations = {**(meta(current).get("annotations") or {}), ANNOTATION: DESCRIPTION}
                await self.client.update(path_for(CONFIGMAPS, namespace, NAME), {
                    **current, "metadata": {**meta(current), "annotations": annotations},
                    "data": {**(current.get("data") or {}), "ca.crt": self.ca}})
        except ApiError as err:
            if err.code not in (403, 404, 409):
                raise
            if err.code == 409:
                self.queue.add_after(namespace, 0.2)
