"""Default RBAC policy, created and reconciled at start like kube-apiserver's ``rbac/bootstrap-roles`` hook.

"Using RBAC Authorization", "Default roles and role bindings": the
user-facing ClusterRoles (cluster-admin; admin, edit and view aggregated
from ``system:aggregate-to-*`` by label, see ``aggregation.py``), the
discovery roles (system:discovery, system:basic-user,
system:public-info-viewer), the component roles (system:kube-scheduler,
system:kube-controller-manager, system:node, system:node-proxier,
system:volume-scheduler, system:monitoring, system:auth-delegator,
system:node-bootstrapper, system:kube-dns, system:service-account-issuer-discovery,
system:heapster) and their ClusterRoleBindings; in kube-system the Role
extension-apiserver-authentication-reader and its RoleBinding
system::extension-apiserver-authentication-reader. kube's other objects (the
``system:controller:*`` roles bound to their ServiceAccounts, the leader-locking
and bootstrap-signer Roles, ...) come from ``bootstrap_kube.py``, merged in
below. Every object carries the
label ``kubernetes.io/bootstrapping: rbac-defaults`` and the annotation
``rbac.authorization.kubernetes.io/autoupdate: "true"``.

Reconciliation (kube's ``reconciliation.ReconcileRole``/``ReconcileRoleBinding``):
an absent object is created; an existing one whose autoupdate annotation
is not ``"false"`` gets the missing labels, annotations, rules (rules it
does not already cover; aggregated roles' rules are left to the
aggregator), aggregation selectors and subjects added — never removed; a
binding whose roleRef differs is deleted and recreated.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from kapi import errors, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.authz import bootstrap_kube
from services.authz.rbac import GROUP, PolicyRule
from services.authz.rules import covers

log = logging.getLogger(__name__)

API_VERSION = f"{GROUP}/v1"
LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
ANNOTATIONS = {AUTOUPDATE: "true"}

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
                      "services/status"]),
    rule(READ, [""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
                      "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"]),
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
    rule(READ, ["resource.k8s.io"], ["resourceclaims", "resourceclaims/status", "resourceclaimtemplates"]),
]

_EDIT_ONLY_RULES = [
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
    rule(sorted([*READ, *WRITE]), ["coordination.k8s.io"], ["leases"]),  # one rule, as kube's ReadWrite
    rule(WRITE, ["resource.k8s.io"], ["resourceclaims", "resourceclaimtemplates"]),
]

_ADMIN_ONLY_RULES = [
    rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    rule(sorted([*READ, *WRITE]), [GROUP], ["rolebindings", "roles"]),
]

AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"


def _approver(signer: str) -> list[dict[str, Any]]:
    """The rules of kube's ``system:certificates.k8s.io:<signer>-approver`` roles: ``approve`` one signer."""
    return [{**rule(["approve"], ["certificates.k8s.io"], ["signers"]), "resourceNames": [signer]}]
EVENTS = ["create", "patch", "update"]
ANY_REVIEW = [rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
              rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"])]

_SCHEDULER_RULES = [
    rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    rule(["create"], ["coordination.k8s.io"], ["leases"]),
    {**rule(["get", "update"], ["coordination.k8s.io"], ["leases"]), "resourceNames": ["kube-scheduler"]},
    rule(READ, [""], ["nodes"]),
    rule(["delete", "get", "list", "watch"], [""], ["pods"]),
    rule(["create"], [""], ["bindings", "pods/binding"]),
    rule(["patch", "update"], [""], ["pods/status"]),
    rule(READ, [""], ["replicationcontrollers", "services"]),
    rule(READ, ["apps", "extensions"], ["replicasets"]),
    rule(READ, ["apps"], ["statefulsets"]),
    rule(READ, ["policy"], ["poddisruptionbudgets"]),
    rule(READ, [""], ["persistentvolumeclaims", "persistentvolumes"]),
    *ANY_REVIEW,
    rule(READ, ["storage.k8s.io"], ["csinodes"]),
    rule(READ, [""], ["namespaces"]),
    rule(READ, ["storage.k8s.io"], ["csidrivers"]),
    rule(READ, ["storage.k8s.io"], ["csistoragecapacities"]),
]

_CONTROLLER_MANAGER_RULES = [
    rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    rule(["create"], ["coordination.k8s.io"], ["leases"]),
    {**rule(["get", "update"], ["coordination.k8s.io"], ["leases"]), "resourceNames": ["kube-controller-manager"]},
    rule(["create"], [""], ["secrets", "serviceaccounts"]),
    rule(["delete"], [""], ["secrets"]),
    rule(["get"], [""], ["configmaps", "namespaces", "secrets", "serviceaccounts"]),
    rule(["update"], [""], ["secrets", "serviceaccounts"]),
    *ANY_REVIEW,
    rule(["list", "watch"], ["*"], ["*"]),
    rule(["create"], [""], ["serviceaccounts/token"]),
]

# system:node's rules; also the Node authorizer's static rules (kube's bootstrappolicy.NodeRules()).
NODE_RULES = [
    rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
    rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews", "subjectaccessreviews"]),
    rule(READ, [""], ["services"]),
    rule(["create", "get", "list", "watch"], [""], ["nodes"]),
    rule(["patch", "update"], [""], ["nodes/status"]),
    rule(["patch", "update"], [""], ["nodes"]),
    rule(["create", "patch", "update"], [""], ["events"]),  # core events only (not kube's eventsRule())
    rule(READ, [""], ["pods"]),
    rule(["create", "delete"], [""], ["pods"]),
    rule(["patch", "update"], [""], ["pods/status"]),
    rule(["create"], [""], ["pods/eviction"]),
    rule(READ, [""], ["configmaps", "secrets"]),  # the Node authorizer limits these to its pods' objects
    rule(["get"], [""], ["persistentvolumeclaims", "persistentvolumes"]),
    rule(["get"], [""], ["endpoints"]),
    rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
    rule(["create", "delete", "get", "patch", "update"], ["coordination.k8s.io"], ["leases"]),
    rule(["get"], ["storage.k8s.io"], ["volumeattachments"]),
    rule(["create"], [""], ["serviceaccounts/token"]),
    rule(["get", "patch", "update"], [""], ["persistentvolumeclaims/status"]),
    rule(READ, ["storage.k8s.io"], ["csidrivers"]),
    rule(["create", "delete", "get", "patch", "update"], ["storage.k8s.io"], ["csinodes"]),
    rule(READ, ["node.k8s.io"], ["runtimeclasses"]),
    rule(["get"], ["resource.k8s.io"], ["resourceclaims"]),  # DRA (GA since 1.34): a kubelet reads its pods' claims
]

# name -> (rules, extra labels, aggregated-from label suffix or "").
ClusterRoleSpec = tuple[list[dict[str, Any]], dict[str, str], str]
CLUSTER_ROLES: dict[str, ClusterRoleSpec] = {
    "cluster-admin": ([rule(["*"], ["*"], ["*"]), rule(["*"], urls=["*"])], {}, ""),
    "system:discovery": ([rule(["get"], urls=["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                              "/openapi", "/openapi/*", "/readyz", "/version", "/version/"])], {}, ""),
    "system:basic-user": ([
        rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
        rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
    ], {}, ""),
    "system:public-info-viewer": ([rule(["get"], urls=["/healthz", "/livez", "/readyz", "/version", "/version/"])],
                                  {}, ""),
    "admin": ([], {}, "admin"),
    "edit": ([], {AGGREGATE_TO + "admin": "true"}, "edit"),
    "view": ([], {AGGREGATE_TO + "edit": "true"}, "view"),
    "system:aggregate-to-admin": (_ADMIN_ONLY_RULES, {AGGREGATE_TO + "admin": "true"}, ""),
    "system:aggregate-to-edit": (_EDIT_ONLY_RULES, {AGGREGATE_TO + "edit": "true"}, ""),
    "system:aggregate-to-view": (_VIEW_RULES, {AGGREGATE_TO + "view": "true"}, ""),
    "system:kube-scheduler": (_SCHEDULER_RULES, {}, ""),
    "system:volume-scheduler": ([rule(["get", "list", "patch", "update", "watch"], [""], ["persistentvolumes"]),
                                 rule(READ, ["storage.k8s.io"], ["storageclasses"]),
                                 rule(["get", "list", "patch", "update", "watch"], [""],
                                      ["persistentvolumeclaims"])], {}, ""),
    "system:kube-controller-manager": (_CONTROLLER_MANAGER_RULES, {}, ""),
    "system:node": (NODE_RULES, {}, ""),
    "system:node-proxier": ([rule(["list", "watch"], [""], ["endpoints", "services"]),
                             rule(["get", "list", "watch"], [""], ["nodes"]),
                             rule(EVENTS, ["", "events.k8s.io"], ["events"]),
                             rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"])], {}, ""),
    "system:node-bootstrapper": ([rule(["create", "get", "list", "watch"], ["certificates.k8s.io"],
                                       ["certificatesigningrequests"])], {}, ""),
    # kube's CSR approver and node-client roles (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go)
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient": ([rule(
        ["create"], ["certificates.k8s.io"], ["certificatesigningrequests/nodeclient"])], {}, ""),
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient": ([rule(
        ["create"], ["certificates.k8s.io"], ["certificatesigningrequests/selfnodeclient"])], {}, ""),
    "system:certificates.k8s.io:kube-apiserver-client-approver": (_approver("kubernetes.io/kube-apiserver-client"),
                                                                  {}, ""),
    "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver": (
        _approver("kubernetes.io/kube-apiserver-client-kubelet"), {}, ""),
    "system:certificates.k8s.io:kubelet-serving-approver": (_approver("kubernetes.io/kubelet-serving"), {}, ""),
    "system:certificates.k8s.io:legacy-unknown-approver": (_approver("kubernetes.io/legacy-unknown"), {}, ""),
    "system:auth-delegator": (ANY_REVIEW, {}, ""),
    "system:monitoring": ([rule(["get"], urls=["/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics",
                                               "/metrics/slis", "/readyz", "/readyz/*"])], {}, ""),
    "system:kube-dns": ([rule(["list", "watch"], [""], ["endpoints", "services"])], {}, ""),
    "system:heapster": ([rule(READ, [""], ["events", "namespaces", "nodes", "pods"]),
                         rule(READ, ["extensions"], ["deployments"])], {}, ""),
    "system:service-account-issuer-discovery": ([rule(["get"], urls=["/.well-known/openid-configuration",
                                                                     "/.well-known/openid-configuration/",
                                                                     "/openid/v1/jwks", "/openid/v1/jwks/"])],
                                                {}, ""),
}

# ClusterRoleBinding name -> (ClusterRole, subjects as (kind, name, namespace)).
Subject = tuple[str, str, str]
CLUSTER_ROLE_BINDINGS: dict[str, tuple[str, tuple[Subject, ...]]] = {
    "cluster-admin": ("cluster-admin", (("Group", "system:masters", ""),)),
    "system:discovery": ("system:discovery", (("Group", "system:authenticated", ""),)),
    "system:basic-user": ("system:basic-user", (("Group", "system:authenticated", ""),)),
    "system:public-info-viewer": ("system:public-info-viewer", (("Group", "system:authenticated", ""),
                                                                ("Group", "system:unauthenticated", ""))),
    "system:monitoring": ("system:monitoring", (("Group", "system:monitoring", ""),)),
    "system:kube-scheduler": ("system:kube-scheduler", (("User", "system:kube-scheduler", ""),)),
    "system:volume-scheduler": ("system:volume-scheduler", (("User", "system:kube-scheduler", ""),)),
    "system:kube-controller-manager": ("system:kube-controller-manager",
                                       (("User", "system:kube-controller-manager", ""),)),
    "system:node": ("system:node", ()),
    "system:node-proxier": ("system:node-proxier", (("User", "system:kube-proxy", ""),)),
    "system:kube-dns": ("system:kube-dns", (("ServiceAccount", "kube-dns", "kube-system"),)),
    "system:service-account-issuer-discovery": ("system:service-account-issuer-discovery",
                                                (("Group", "system:serviceaccounts", ""),)),
}

# kube-controller-manager's per-loop roles (kube binds them to each loop's ServiceAccount; kapi's controller
# manager runs every loop as one user, system:kube-controller-manager, so they are bound to it) and the seeds'
# tenant roles (kapi.tenancy): namespace-creator is what a tenant may do in a namespace it created; the
# controllers bind it there, and bind kapi:namespace-provisioner to system:authenticated when
# --tenant-namespace-provisioning is on.
_ANY = [*READ, *WRITE]
CONTROLLER_ROLES: dict[str, ClusterRoleSpec] = {
    "system:controller:namespace-controller": ([
        rule(["delete", "deletecollection", "get", "list"], ["*"], ["*"]),
        rule(["update"], [""], ["namespaces/finalize", "namespaces/status"]),
    ], {}, ""),
    "system:controller:generic-garbage-collector": ([
        rule(["delete", "get", "list", "patch", "update", "watch"], ["*"], ["*"]),
    ], {}, ""),
    "system:controller:resourcequota-controller": ([
        rule(["list", "watch"], ["*"], ["*"]),
        rule(["get"], [""], ["resourcequotas"]),
        rule(["update"], [""], ["resourcequotas/status"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    ], {}, ""),
    "system:controller:service-account-controller": ([
        rule(["create"], [""], ["serviceaccounts"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    ], {}, ""),
    "system:controller:certificate-controller": ([  # csrsigning (loops/csrsigning.py)
        rule(["delete", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
        rule(["update"], ["certificates.k8s.io"], ["certificatesigningrequests/approval",
                                                   "certificatesigningrequests/status"]),
        {**rule(["approve"], ["certificates.k8s.io"], ["signers"]),
         "resourceNames": ["kubernetes.io/kube-apiserver-client-kubelet"]},
        {**rule(["sign"], ["certificates.k8s.io"], ["signers"]),
         "resourceNames": ["kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet",
                           "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown"]},
        rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    ], {}, ""),
    "system:controller:root-ca-cert-publisher": ([
        rule(["create", "update"], [""], ["configmaps"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    ], {}, ""),
    # DynamicResourceAllocation (GA, on): the claims of pods' resourceClaimTemplates, reservedFor cleanup
    "system:controller:resource-claim-controller": ([
        rule(READ, [""], ["pods"]),
        rule(["update"], [""], ["pods/finalizers"]),
        rule(["create", "delete", "get", "list", "watch"], ["resource.k8s.io"], ["resourceclaims"]),
        rule(["patch", "update"], ["resource.k8s.io"], ["resourceclaims", "resourceclaims/status"]),
        rule(["patch", "update"], [""], ["pods/status"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    ], {}, ""),
    # VolumeAttributesClass (GA in 1.34, on): the protection finalizer of classes PVCs or PVs still name
    "system:controller:volumeattributesclass-protection-controller": ([
        rule(READ, [""], ["persistentvolumeclaims"]),
        rule(READ, [""], ["persistentvolumes"]),
        rule(["get", "list", "update", "watch"], ["storage.k8s.io"], ["volumeattributesclasses"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    ], {}, ""),
    "system:controller:disruption-controller": ([  # loops/disruption.py
        rule(READ, ["extensions", "apps"], ["deployments"]),
        rule(READ, ["apps", "extensions"], ["replicasets"]),
        rule(READ, [""], ["replicationcontrollers"]),
        rule(READ, ["policy"], ["poddisruptionbudgets"]),
        rule(READ, ["apps"], ["statefulsets"]),
        rule(["update"], ["policy"], ["poddisruptionbudgets/status"]),
        rule(["patch", "update"], [""], ["pods/status"]),
        rule(["get"], ["*"], ["*/scale"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    ], {}, ""),
    "system:controller:pod-garbage-collector": ([  # loops/podgc.py
        rule(["delete", "list", "watch"], [""], ["pods"]),
        rule(["get", "list"], [""], ["nodes"]),
        rule(["patch"], [""], ["pods/status"]),
    ], {}, ""),
    # MultiCIDRServiceAllocator (GA, on): the ServiceCIDR finalizer and Ready condition (loops/servicecidrs.py)
    "system:controller:service-cidrs-controller": ([
        rule(["get", "list", "watch", "patch", "update"], ["networking.k8s.io"], ["servicecidrs"]),
        rule(["patch", "update"], ["networking.k8s.io"], ["servicecidrs/finalizers"]),
        rule(["patch", "update"], ["networking.k8s.io"], ["servicecidrs/status"]),
        rule(READ, ["networking.k8s.io"], ["ipaddresses"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
    ], {}, ""),
    "kapi:controller:tenant": ([
        rule(["create", "delete", "get", "update"], [GROUP], ["rolebindings"]),
        rule(["create", "delete", "get"], [GROUP], ["clusterrolebindings"]),
        {**rule(["bind"], [GROUP], ["clusterroles"]), "resourceNames": ["kapi:namespace-provisioner",
                                                                         "namespace-creator"]},
        rule(["create", "get"], [""], ["configmaps", "resourcequotas"]),
    ], {}, ""),
    # The creator administers her namespace: kube's admin rules (view + edit + admin-only, so she may bind view,
    # edit or admin there without escalating), plus reading and deleting the namespace itself; nothing more (no
    # status subresources of workloads, no ControllerRevision writes: what kube's admin may not do, she may not).
    "namespace-creator": ([
        *_VIEW_RULES, *_EDIT_ONLY_RULES, *_ADMIN_ONLY_RULES,
        rule(["delete", "get"], [""], ["namespaces"]),
    ], {}, ""),
    "kapi:namespace-provisioner": ([rule(["create"], [""], ["namespaces"])], {}, ""),
    # kube-apiserver's autoregister + crdregistration, run by kapi's controller manager (loops/apiservices.py)
    "kapi:controller:apiservice-registration": ([
        rule(["create", "delete", "get", "list", "update", "watch"], ["apiregistration.k8s.io"], ["apiservices"]),
        rule(READ, ["apiextensions.k8s.io"], ["customresourcedefinitions"]),
    ], {}, ""),
}
CLUSTER_ROLES.update(CONTROLLER_ROLES)
CLUSTER_ROLE_BINDINGS.update({
    name: (name, (("User", "system:kube-controller-manager", ""),))
    for name in CONTROLLER_ROLES if name.startswith(("system:controller:", "kapi:controller:"))
})


# Namespaced defaults (kube's bootstrap NamespaceRoles/NamespaceRoleBindings), as (namespace, name) -> value.
# extension-apiserver-authentication-reader lets extension API servers read the front-proxy CA and headers
# from kube-system/extension-apiserver-authentication ("Configure the Aggregation Layer").
NAMESPACED_ROLES: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("kube-system", "extension-apiserver-authentication-reader"): [
        {**rule(READ, [""], ["configmaps"]), "resourceNames": ["extension-apiserver-authentication"]}],
}
NAMESPACED_ROLE_BINDINGS: dict[tuple[str, str], tuple[str, tuple[Subject, ...]]] = {
    ("kube-system", "system::extension-apiserver-authentication-reader"): (
        "extension-apiserver-authentication-reader",
        (("User", "system:kube-controller-manager", ""), ("User", "system:kube-scheduler", ""))),
}
# kube's remaining bootstrap objects (controller roles bound to their ServiceAccounts, leader-locking Roles, ...);
# kube's rules replace the system:controller:* entries above, which remain the list of roles kapi's loops use.
bootstrap_kube.merge(CLUSTER_ROLES, CLUSTER_ROLE_BINDINGS, NAMESPACED_ROLES, NAMESPACED_ROLE_BINDINGS,
                     [name for name in CONTROLLER_ROLES if name.startswith("system:controller:")])


def _subject(kind: str, name: str, namespace: str) -> dict[str, Any]:
    if kind == "ServiceAccount":
        return {"kind": kind, "name": name, "namespace": namespace}
    return {"apiGroup": GROUP, "kind": kind, "name": name}


def _metadata(name: str, now: datetime.datetime, new_uid: Callable[[], str],
              labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "uid": new_uid(), "creationTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "labels": {**LABELS, **(labels or {})}, "annotations": dict(ANNOTATIONS)}


def default_objects(now: datetime.datetime | None = None,
                    new_uid: Callable[[], str] = lambda: str(uuid.uuid4())) -> list[tuple[str, dict[str, Any]]]:
    """The bootstrap policy as (resource, object) pairs: ClusterRoles first, then ClusterRoleBindings.

    ``now`` (UTC) stamps metadata.creationTimestamp (RFC 3339, seconds);
    ``new_uid`` makes metadata.uid. Aggregated roles (admin, edit, view)
    carry an ``aggregationRule`` and no rules: the aggregator fills them.
    """
    now = now or datetime.datetime.now(datetime.UTC)
    out: list[tuple[str, dict[str, Any]]] = []
    for name, (rules, labels, aggregate_from) in CLUSTER_ROLES.items():
        obj: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "ClusterRole",
                               "metadata": _metadata(name, now, new_uid, labels), "rules": rules}
        if aggregate_from:
            obj["aggregationRule"] = {"clusterRoleSelectors": [
                {"matchLabels": {AGGREGATE_TO + aggregate_from: "true"}}]}
        out.append(("clusterroles", obj))
    for name, (role, subjects) in CLUSTER_ROLE_BINDINGS.items():
        binding: dict[str, Any] = {
            "apiVersion": API_VERSION, "kind": "ClusterRoleBinding", "metadata": _metadata(name, now, new_uid),
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role}}
        if subjects:
            binding["subjects"] = [_subject(*s) for s in subjects]
        out.append(("clusterrolebindings", binding))
    return out


def namespaced_objects(now: datetime.datetime | None = None,
                       new_uid: Callable[[], str] = lambda: str(uuid.uuid4())) -> list[tuple[str, dict[str, Any]]]:
    """The namespaced bootstrap policy as (resource, object) pairs: Roles, then RoleBindings (kube-system)."""
    now = now or datetime.datetime.now(datetime.UTC)
    out: list[tuple[str, dict[str, Any]]] = []
    for (namespace, name), rules in NAMESPACED_ROLES.items():
        out.append(("roles", {"apiVersion": API_VERSION, "kind": "Role",
                              "metadata": {**_metadata(name, now, new_uid), "namespace": namespace}, "rules": rules}))
    for (namespace, name), (role, subjects) in NAMESPACED_ROLE_BINDINGS.items():
        out.append(("rolebindings", {
            "apiVersion": API_VERSION, "kind": "RoleBinding",
            "metadata": {**_metadata(name, now, new_uid), "namespace": namespace},
            "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": role},
            "subjects": [_subject(*s) for s in subjects]}))
    return out


def reconciled(resource: str, existing: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any] | None:
    """The object ``existing`` should become to include ``expected`` (additively), or None if nothing to do.

    Returns ``{}`` (empty) when a binding's roleRef differs and the binding
    must be deleted and recreated. Objects annotated
    ``rbac.authorization.kubernetes.io/autoupdate: "false"`` are left alone.
    """
    meta = existing.get("metadata") or {}
    if (meta.get("annotations") or {}).get(AUTOUPDATE) == "false":
        return None
    out = copy.deepcopy(existing)
    out_meta = out.setdefault("metadata", {})
    for key in ("labels", "annotations"):
        wanted = expected["metadata"].get(key) or {}
        have = out_meta.get(key) or {}
        if any(k not in have for k in wanted):
            out_meta[key] = {**wanted, **have}
    if resource in ("clusterroles", "roles"):
        if expected.get("aggregationRule"):
            have_rule = out.get("aggregationRule") or {}
            selectors = list(have_rule.get("clusterRoleSelectors") or [])
            for selector in expected["aggregationRule"]["clusterRoleSelectors"]:
                if selector not in selectors:
                    selectors.append(selector)
            out["aggregationRule"] = {**have_rule, "clusterRoleSelectors": selectors}
        else:
            have_rules = [PolicyRule.from_json(r) for r in out.get("rules") or [] if isinstance(r, dict)]
            missing = [r for r in expected["rules"] if not covers(have_rules, [PolicyRule.from_json(r)])[0]]
            if missing:
                out["rules"] = [*(out.get("rules") or []), *missing]
    else:
        if out.get("roleRef") != expected["roleRef"]:
            return {}
        subjects = list(out.get("subjects") or [])
        for subject in expected.get("subjects") or []:
            if subject not in subjects:
                subjects.append(subject)
        if subjects:
            out["subjects"] = subjects
    return None if out == existing else out


async def _call(rpc: Callable[..., Any], request: Any, timeout: float, sleep: Callable[[float], Any],
                min_backoff: float, max_backoff: float) -> Any:
    """Call storage, retrying while it is unavailable (503/504/transport); other refusals raise StatusError."""
    backoff = min_backoff
    while True:
        try:
            return await rpc(request, timeout=timeout)
        except grpc.RpcError as exc:
            err = errors.from_rpc_error(exc, "storage")
        if err.code not in (503, 504):
            raise err
        log.info("storage not ready for bootstrap policy (%s); retrying in %.1fs", err.message, backoff)
        await sleep(backoff)
        backoff = min(backoff * 2, max_backoff)


async def ensure(stub: storage_pb2_grpc.StorageStub, *, timeout: float = 10.0, min_backoff: float = 0.1,
                 max_backoff: float = 5.0, sleep: Callable[[float], Any] = asyncio.sleep) -> int:
    """Create each absent default object and reconcile existing ones; returns how many were written.

    While storage is unavailable (503, 504, transport failure) the same
    object is retried with a capped backoff (seconds). Any other refusal is
    logged and the object skipped, so one bad object cannot block the rest.
    """
    written = 0
    for resource, obj in [*default_objects(), *namespaced_objects()]:
        name = obj["metadata"]["name"]
        key = storage_pb2.ResourceKey(group=GROUP, resource=resource, name=name,
                                      namespace=obj["metadata"].get("namespace", ""))

        async def call(rpc: Callable[..., Any], request: Any) -> Any:
            return await _call(rpc, request, timeout, sleep, min_backoff, max_backoff)

        try:
            try:
                await call(stub.Create, storage_pb2.CreateRequest(key=key, object=jsonutil.dumps(obj)))
                written += 1
                log.info("created %s %s", resource, name)
                continue
            except errors.StatusError as err:
                if err.reason != "AlreadyExists":
                    raise
            current = await call(stub.Get, storage_pb2.GetRequest(key=key))
            existing = jsonutil.loads(current.object)
            update = reconciled(resource, existing, obj)
            if update is None:
                continue
            if not update:  # roleRef changed: delete and recreate (a roleRef is immutable)
                await call(stub.Delete, storage_pb2.DeleteRequest(key=key,
                                                                  expected_resource_version=current.resource_version))
                await call(stub.Create, storage_pb2.CreateRequest(key=key, object=jsonutil.dumps(obj)))
            else:
                await call(stub.Update, storage_pb2.UpdateRequest(key=key, object=jsonutil.dumps(update),
                                                                  expected_resource_version=current.resource_version))
            written += 1
            log.info("reconciled %s %s", resource, name)
        except errors.StatusError as err:
            log.error("cannot reconcile bootstrap %s %s: %s", resource, name, err.message)
    return written
