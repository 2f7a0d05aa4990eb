"""Default RBAC policy, created at start like kube-apiserver's ``rbac/bootstrap-roles`` post-start hook.

"Using RBAC Authorization", "Default roles and role bindings": the
user-facing ClusterRoles (cluster-admin, admin, edit, view), the discovery
roles (system:discovery, system:basic-user, system:public-info-viewer) and
their ClusterRoleBindings. Every object carries the label
``kubernetes.io/bootstrapping: rbac-defaults`` and the annotation
``rbac.authorization.kubernetes.io/autoupdate: "true"``. Objects that
already exist are left alone (an operator may have edited them). kube's
admin/edit/view are aggregated from ``system:aggregate-to-*`` roles by a
controller kapi does not run; here they carry the aggregated rules directly.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from kapi import errors, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.authz.rbac import GROUP

log = logging.getLogger(__name__)

API_VERSION = f"{GROUP}/v1"
LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}

READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]


def rule(verbs: Sequence[str], groups: Sequence[str] = (), resources: Sequence[str] = (),
         urls: Sequence[str] = ()) -> dict[str, Any]:
    """A PolicyRule dict as the API serialises it (empty lists omitted)."""
    out: dict[str, Any] = {"verbs": list(verbs)}
    if groups or resources:
        out["apiGroups"] = list(groups)
        out["resources"] = list(resources)
    if urls:
        out["nonResourceURLs"] = list(urls)
    return out


_VIEW_RULES = [
    rule(READ, [""], ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
                      "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                      "services/status", "bindings", "events", "limitranges", "namespaces/status", "pods/log",
                      "pods/status", "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"]),
    rule(READ, [""], ["namespaces"]),
    rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
    rule(READ, ["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
                          "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
                          "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"]),
    rule(READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    rule(READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    rule(READ, ["extensions"], ["daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                                "deployments/status", "ingresses", "ingresses/status", "networkpolicies",
                                "replicasets", "replicasets/scale", "replicasets/status",
                                "replicationcontrollers/scale"]),
    rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    rule(READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
]

_EDIT_RULES = [
    rule(READ, [""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"]),
    rule(["impersonate"], [""], ["serviceaccounts"]),
    rule(WRITE, [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
    rule(["create"], [""], ["pods/eviction"]),
    rule(WRITE, [""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
                       "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"]),
    rule(["create"], [""], ["serviceaccounts/token"]),
    rule(WRITE, ["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
                           "replicasets/scale", "statefulsets", "statefulsets/scale"]),
    rule(WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
    rule(WRITE, ["batch"], ["cronjobs", "jobs"]),
    rule(WRITE, ["extensions"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
                                 "ingresses", "networkpolicies", "replicasets", "replicasets/scale",
                                 "replicationcontrollers/scale"]),
    rule(WRITE, ["policy"], ["poddisruptionbudgets"]),
    rule(WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
    *_VIEW_RULES,
]

_ADMIN_RULES = [
    rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    rule([*READ, *WRITE], [GROUP], ["rolebindings", "roles"]),
    *_EDIT_RULES,
]

CLUSTER_ROLES: dict[str, list[dict[str, Any]]] = {
    "cluster-admin": [rule(["*"], ["*"], ["*"]), rule(["*"], urls=["*"])],
    "system:discovery": [rule(["get"], urls=["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                             "/openapi", "/openapi/*", "/readyz", "/version", "/version/"])],
    "system:basic-user": [
        rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
        rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
    ],
    "system:public-info-viewer": [rule(["get"], urls=["/healthz", "/livez", "/readyz", "/version", "/version/"])],
    "admin": _ADMIN_RULES,
    "edit": _EDIT_RULES,
    "view": _VIEW_RULES,
}

# ClusterRoleBinding name -> (ClusterRole, groups).
CLUSTER_ROLE_BINDINGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cluster-admin": ("cluster-admin", ("system:masters",)),
    "system:discovery": ("system:discovery", ("system:authenticated",)),
    "system:basic-user": ("system:basic-user", ("system:authenticated",)),
    "system:public-info-viewer": ("system:public-info-viewer", ("system:authenticated", "system:unauthenticated")),
}


def _metadata(name: str, now: datetime.datetime, new_uid: Callable[[], str]) -> dict[str, Any]:
    return {"name": name, "uid": new_uid(), "creationTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "labels": dict(LABELS), "annotations": dict(ANNOTATIONS)}


def default_objects(now: datetime.datetime | None = None,
                    new_uid: Callable[[], str] = lambda: str(uuid.uuid4())) -> list[tuple[str, dict[str, Any]]]:
    """The bootstrap policy as (resource, object) pairs: ClusterRoles first, then ClusterRoleBindings.

    ``now`` (UTC) stamps metadata.creationTimestamp (RFC 3339, seconds);
    ``new_uid`` makes metadata.uid.
    """
    now = now or datetime.datetime.now(datetime.UTC)
    out: list[tuple[str, dict[str, Any]]] = []
    for name, rules in CLUSTER_ROLES.items():
        out.append(("clusterroles", {"apiVersion": API_VERSION, "kind": "ClusterRole",
                                     "metadata": _metadata(name, now, new_uid), "rules": rules}))
    for name, (role, groups) in CLUSTER_ROLE_BINDINGS.items():
        out.append(("clusterrolebindings", {
            "apiVersion": API_VERSION, "kind": "ClusterRoleBinding", "metadata": _metadata(name, now, new_uid),
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups],
        }))
    return out


async def ensure(stub: storage_pb2_grpc.StorageStub, *, timeout: float = 10.0, min_backoff: float = 0.1,
                 max_backoff: float = 5.0, sleep: Callable[[float], Any] = asyncio.sleep) -> int:
    """Create each default object that is absent; returns how many were created.

    AlreadyExists is success. While storage is unavailable (503, 504,
    transport failure) the same object is retried with a capped backoff
    (seconds). Any other refusal is logged and the object skipped, so one
    bad object cannot block the rest.
    """
    created = 0
    for resource, obj in default_objects():
        name = obj["metadata"]["name"]
        request = storage_pb2.CreateRequest(key=storage_pb2.ResourceKey(group=GROUP, resource=resource, name=name),
                                            object=jsonutil.dumps(obj))
        backoff = min_backoff
        while True:
            try:
                await stub.Create(request, timeout=timeout)
                created += 1
                log.info("created %s %s", resource, name)
                break
            except grpc.RpcError as exc:
                err = errors.from_rpc_error(exc, "storage")
            if err.reason == "AlreadyExists":
                break
            if err.code in (503, 504):
                log.info("storage not ready for bootstrap policy (%s); retrying in %.1fs", err.message, backoff)
                await sleep(backoff)
                backoff = min(backoff * 2, max_backoff)
                continue
            log.error("cannot create bootstrap %s %s: %s", resource, name, err.message)
            break
    return created
