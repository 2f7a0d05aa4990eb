"""In-memory stand-ins for the storage-fed caches, for plugin tests that need no storage."""

from __future__ import annotations

from typing import Any

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from kapi.resources import REGISTRY
from services.admission.chain import AdmissionRequest


class FakeCache:
    """A ResourceCache over a dict."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.synced = True
        self.generation = 0

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        self.items[(meta.get("namespace", ""), meta["name"])] = obj
        return obj

    async def wait_synced(self, timeout: float = 0) -> bool:
        return True

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.items.get((namespace, name))

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        return [o for k, o in sorted(self.items.items()) if namespace is None or k[0] == namespace]


class FakeInformers:
    """Informers over FakeCaches, with Get/List/Update against them (revision = a counter per object)."""

    def __init__(self) -> None:
        self.caches: dict[tuple[str, str], FakeCache] = {}
        self.revisions: dict[tuple[str, str, str, str], int] = {}
        self.updates = 0

    def cache(self, group: str, resource: str) -> FakeCache:
        return self.caches.setdefault((group, resource), FakeCache())

    def put(self, group: str, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        key = (group, resource, meta.get("namespace", ""), meta["name"])
        self.revisions[key] = self.revisions.get(key, 0) + 1
        return self.cache(group, resource).put(obj)

    async def get(self, group: str, resource: str, namespace: str, name: str, timeout: float
                  ) -> tuple[dict[str, Any] | None, int]:
        import copy
        obj = self.cache(group, resource).get(namespace, name)
        return (copy.deepcopy(obj), self.revisions.get((group, resource, namespace, name), 0)) if obj else (None, 0)

    async def lookup(self, group: str, resource: str, namespace: str, name: str, timeout: float
                     ) -> dict[str, Any] | None:
        return self.cache(group, resource).get(namespace, name)

    async def list_live(self, group: str, resource: str, namespace: str, timeout: float) -> list[dict[str, Any]]:
        return self.cache(group, resource).list(namespace)

    async def update(self, group: str, resource: str, obj: dict[str, Any], expected_revision: int,
                     timeout: float) -> None:
        meta = obj["metadata"]
        key = (group, resource, meta.get("namespace", ""), meta["name"])
        if self.revisions.get(key, 0) != expected_revision:
            raise errors.conflict(resource, meta["name"], "the object has been modified")
        self.updates += 1
        self.put(group, resource, obj)


class FakeNamespaces:
    """NamespaceCache.get over a dict of namespace name -> labels."""

    def __init__(self, labels: dict[str, dict[str, str]] | None = None):
        self.labels = labels or {}

    async def get(self, name: str, timeout: float) -> dict[str, Any] | None:
        if name not in self.labels:
            return None
        return {"metadata": {"name": name, "labels": self.labels[name]}, "status": {"phase": "Active"}}

    def force_live_lookup(self, name: str) -> None:
        pass


def request(operation: str, resource: str, obj: dict[str, Any] | None, *, namespace: str = "demo",
            group: str = "", old: dict[str, Any] | None = None, user: str = "alice", dry_run: bool = False,
            subresource: str = "", timeout: float = 10.0) -> AdmissionRequest:
    """An AdmissionRequest for a served resource."""
    row = next(r for r in REGISTRY.rows if r.group == group and r.resource == resource)
    name = ((obj or old or {}).get("metadata") or {}).get("name", "")
    attrs = Attributes(UserInfo(user, "uid-" + user, ("system:authenticated",)), operation.lower(), True,
                       api_group=group, api_version=row.version, resource=resource, subresource=subresource,
                       namespace=namespace if row.namespaced else "", name=name if operation != "CREATE" else "")
    return AdmissionRequest(operation, attrs, row, row.kind, obj, old, dry_run, timeout)


def pod(name: str = "web", **spec: Any) -> dict[str, Any]:
    """A Pod with one nginx container (spec keys override)."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "demo"},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}], **spec}}
