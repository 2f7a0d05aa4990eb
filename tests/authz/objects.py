"""Builders of RBAC objects (dicts as the API serialises them) for tests."""

from __future__ import annotations

from typing import Any

G = "rbac.authorization.k8s.io"


def meta(name: str, namespace: str = "", rv: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if namespace:
        out["namespace"] = namespace
    if rv:
        out["resourceVersion"] = str(rv)
    return out


def role(name: str, rules: list[dict[str, Any]], namespace: str = "") -> dict[str, Any]:
    kind = "Role" if namespace else "ClusterRole"
    return {"apiVersion": f"{G}/v1", "kind": kind, "metadata": meta(name, namespace), "rules": rules}


def rule(verbs: list[str], groups: list[str] | None = None, resources: list[str] | None = None,
         names: list[str] | None = None, urls: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"verbs": verbs}
    if groups is not None:
        out["apiGroups"] = groups
    if resources is not None:
        out["resources"] = resources
    if names is not None:
        out["resourceNames"] = names
    if urls is not None:
        out["nonResourceURLs"] = urls
    return out


def subject(kind: str, name: str, namespace: str = "") -> dict[str, Any]:
    out = {"kind": kind, "name": name}
    if kind != "ServiceAccount":
        out["apiGroup"] = G
    if namespace:
        out["namespace"] = namespace
    return out


def binding(name: str, role_kind: str, role_name: str, subjects: list[dict[str, Any]],
            namespace: str = "") -> dict[str, Any]:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    return {"apiVersion": f"{G}/v1", "kind": kind, "metadata": meta(name, namespace),
            "roleRef": {"apiGroup": G, "kind": role_kind, "name": role_name}, "subjects": subjects}
