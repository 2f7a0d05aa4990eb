"""The seeds' multi-tenant namespaces: the annotations and roles shared by admission and the controllers.

A Namespace records who created it (written by the ``NamespaceCreator``
admission plugin, never by the client, and immutable afterwards). A
*tenant* namespace is one whose creator is an ordinary user: a creator
named ``system:...`` or in the ``system:masters`` group is an operator
whose namespaces get neither the tenant binding nor the tenant quota.
Tenancy is by user, or by a group the creator belongs to when the client
asks for it with :data:`TENANT_GROUP` at create time.
"""

from __future__ import annotations

from typing import Any

PREFIX = "tenancy.kapi.io/"
CREATOR = PREFIX + "creator"  # user name
CREATOR_UID = PREFIX + "creator-uid"
CREATOR_GROUPS = PREFIX + "creator-groups"  # comma-separated, system:authenticated left out
TENANT_GROUP = PREFIX + "tenant-group"  # optional, chosen at create: one of the creator's groups
MANAGED = (CREATOR, CREATOR_UID, CREATOR_GROUPS, TENANT_GROUP)

NAMESPACE_CREATOR_ROLE = "namespace-creator"  # ClusterRole: what a tenant may do in its namespace
PROVISIONER_ROLE = "kapi:namespace-provisioner"  # ClusterRole: create namespaces
PROVISIONER_BINDING = "kapi:namespace-provisioners"  # ClusterRoleBinding of it to system:authenticated
TENANT_BINDING = "namespace-creator"  # RoleBinding name in each tenant namespace
OPERATOR_GROUP = "system:masters"


def _annotations(ns: dict[str, Any]) -> dict[str, str]:
    meta = ns.get("metadata") if isinstance(ns.get("metadata"), dict) else {}
    value = meta.get("annotations") if isinstance(meta, dict) else None
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def tenant_subjects(ns: dict[str, Any]) -> list[dict[str, str]]:
    """RBAC subjects owning the tenant namespace ``ns``: the creator (User) and the tenant group (Group) if any;
    [] when the namespace has no valid creator or was created by an operator."""
    ann = _annotations(ns)
    creator = ann.get(CREATOR, "").strip()
    groups = [g for g in ann.get(CREATOR_GROUPS, "").split(",") if g]
    if not creator or creator.startswith("system:") or OPERATOR_GROUP in groups:
        return []
    out = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": creator}]
    group = ann.get(TENANT_GROUP, "").strip()
    if group and group in groups and not group.startswith("system:"):
        out.append({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group})
    return out
