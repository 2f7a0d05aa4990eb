"""The served resource table: one row per resource drives routing, discovery and storage keys.

Each :class:`Resource` row carries what kube-apiserver's discovery documents
publish (``APIResource``: name, singularName, namespaced, kind, verbs,
shortNames, categories) plus the storage key prefix. Adding a resource is
adding a row. Source: "The Kubernetes API" / "API concepts" reference and
the ``kubectl api-resources`` output of kube-apiserver.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Resource:
    """One served resource of one group/version."""

    group: str
    version: str
    resource: str  # plural, lower case
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    # Extra Table columns after NAME: (header, type, JSON path into the object, format).
    columns: tuple[tuple[str, str, str], ...] = field(default=())

    @property
    def singular(self) -> str:
        """singularName: the lower-cased kind."""
        return self.kind.lower()

    @property
    def group_version(self) -> str:
        """"v1" for the core group, else "group/version"."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        """The kind of a list of this resource, e.g. ConfigMapList."""
        return self.kind + "List"

    def storage_prefix(self, namespace: str = "") -> str:
        """etcd key prefix, ``/registry/[<group>/]<resource>/[<namespace>/]`` (kube-apiserver layout)."""
        base = f"/registry/{self.group}/{self.resource}/" if self.group else f"/registry/{self.resource}/"
        return base + (f"{namespace}/" if namespace else "")

    def storage_key(self, namespace: str, name: str) -> str:
        """etcd key of one object."""
        return self.storage_prefix(namespace if self.namespaced else "") + name


_WORKLOAD = ("all",)

RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "namespaces", "Namespace", False, ("ns",),
             columns=(("Status", "string", ".status.phase"),)),
    Resource("", "v1", "configmaps", "ConfigMap", True, ("cm",),
             columns=(("Data", "integer", "#data"),)),
    Resource("", "v1", "secrets", "Secret", True,
             columns=(("Type", "string", ".type"), ("Data", "integer", "#data"))),
    Resource("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",)),
    Resource("", "v1", "services", "Service", True, ("svc",), _WORKLOAD,
             columns=(("Type", "string", ".spec.type"), ("Cluster-IP", "string", ".spec.clusterIP"))),
    Resource("", "v1", "pods", "Pod", True, ("po",), _WORKLOAD,
             columns=(("Status", "string", ".status.phase"),)),
    Resource("", "v1", "events", "Event", True, ("ev",),
             columns=(("Type", "string", ".type"), ("Reason", "string", ".reason"),
                      ("Message", "string", ".message"))),
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True,
             columns=(("Role", "string", "@roleRef"),)),
    Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False,
             columns=(("Role", "string", "@roleRef"),)),
)


class Registry:
    """Lookup over a resource table by (group, version, resource) and by kind."""

    def __init__(self, rows: Iterable[Resource] = RESOURCES):
        self.rows: tuple[Resource, ...] = tuple(rows)
        self._by_gvr = {(r.group, r.version, r.resource): r for r in self.rows}
        self._by_gvk = {(r.group, r.version, r.kind): r for r in self.rows}

    def get(self, group: str, version: str, resource: str) -> Resource | None:
        """The row for a group/version/resource, or None if not served."""
        return self._by_gvr.get((group, version, resource))

    def by_kind(self, group: str, version: str, kind: str) -> Resource | None:
        """The row for a group/version/kind, or None."""
        return self._by_gvk.get((group, version, kind))

    def groups(self) -> dict[str, list[str]]:
        """Named API groups (core excluded) -> served versions, preferred first, in table order."""
        out: dict[str, list[str]] = {}
        for r in self.rows:
            if r.group and r.version not in out.setdefault(r.group, []):
                out[r.group].append(r.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[Resource]:
        """Rows of one group/version in table order."""
        return [r for r in self.rows if r.group == group and r.version == version]


REGISTRY = Registry()
