"""kube-apiserver 1.37's bootstrap RBAC objects that kapi's own policy (``bootstrap.py``) did not have.

Source: kube's plugin/pkg/auth/authorizer/rbac/bootstrappolicy (policy.go, controller_policy.go,
namespace_policy.go) as its golden files record them (testdata/cluster-roles.yaml, controller-roles.yaml,
controller-role-bindings.yaml, namespace-roles.yaml, namespace-role-bindings.yaml). The controller roles
whose feature gates are off by default in 1.37 (the ``*-featuregates.yaml`` variants, e.g.
``system:controller:podcheckpoint-controller`` of PodLevelCheckpointRestore) are not here.

Shapes follow ``bootstrap.py``: a ClusterRole is ``name -> (rules, extra labels, aggregated-from)``, a
binding ``name -> (role, subjects as (kind, name, namespace))``, namespaced ones are keyed
``(namespace, name)``. Rules keep kube's order. :func:`merge` folds them into ``bootstrap.py``'s tables.
"""

from __future__ import annotations

from typing import Any

_READ = ["get", "list", "watch"]
_EVENTS_VERBS = ["create", "patch", "update"]
_RW = ["create", "delete", "get", "list", "patch", "update", "watch"]


def _r(groups: list[str], resources: list[str], verbs: list[str],
       names: list[str] | None = None) -> dict[str, Any]:
    """A resource PolicyRule dict (``names`` -> resourceNames), as kube's golden files list it."""
    out: dict[str, Any] = {"apiGroups": groups, "resources": resources, "verbs": verbs}
    if names:
        out["resourceNames"] = names
    return out


def _events() -> dict[str, Any]:
    """kube's eventsRule(): create/patch/update events in the core and events.k8s.io groups."""
    return _r(["", "events.k8s.io"], ["events"], list(_EVENTS_VERBS))


_CORE = [""]
_APPS_EXT = ["apps", "extensions"]
_STORAGE = ["storage.k8s.io"]
_NET = ["networking.k8s.io"]
_DRA = ["resource.k8s.io"]

# policy.go ClusterRoles kapi lacked.
CLUSTER_ROLES: dict[str, tuple[list[dict[str, Any]], dict[str, str], str]] = {
    "system:kube-aggregator": ([_r(_CORE, ["endpoints", "services"], list(_READ))], {}, ""),
    "system:kubelet-api-admin": ([
        _r(_CORE, ["nodes"], list(_READ)),
        _r(_CORE, ["nodes"], ["proxy"]),
        _r(_CORE, ["nodes/log", "nodes/metrics", "nodes/proxy", "nodes/stats"], ["*"]),
    ], {}, ""),
    "system:node-problem-detector": ([
        _r(_CORE, ["nodes"], ["get"]),
        _r(_CORE, ["nodes/status"], ["patch"]),
        _events(),
    ], {}, ""),
    "system:persistent-volume-provisioner": ([
        _r(_CORE, ["persistentvolumes"], ["create", "delete", "get", "list", "watch"]),
        _r(_CORE, ["persistentvolumeclaims"], ["get", "list", "update", "watch"]),
        _r(_STORAGE, ["storageclasses"], list(_READ)),
        _r(_CORE, ["events"], ["watch"]),
        _events(),
    ], {}, ""),
}

# controller_policy.go: one ClusterRole per kube-controller-manager loop, in the golden file's (name) order.
CONTROLLER_ROLES: dict[str, list[dict[str, Any]]] = {
    "attachdetach-controller": [
        _r(_CORE, ["persistentvolumeclaims", "persistentvolumes"], ["list", "watch"]),
        _r(_CORE, ["nodes"], list(_READ)),
        _r(_CORE, ["nodes/status"], ["patch", "update"]),
        _r(_CORE, ["pods"], ["list", "watch"]),
        _events(),
        _r(_STORAGE, ["volumeattachments"], ["create", "delete", "get", "list", "watch"]),
        _r(_STORAGE, ["csidrivers"], list(_READ)),
        _r(_STORAGE, ["csinodes"], list(_READ)),
    ],
    "certificate-controller": [
        _r(["certificates.k8s.io"], ["certificatesigningrequests"], ["delete", "get", "list", "watch"]),
        _r(["certificates.k8s.io"], ["certificatesigningrequests/approval", "certificatesigningrequests/status"],
           ["update"]),
        _r(["certificates.k8s.io"], ["signers"], ["approve"], ["kubernetes.io/kube-apiserver-client-kubelet"]),
        _r(["certificates.k8s.io"], ["signers"], ["sign"],
           ["kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet",
            "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown"]),
        _r(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]),
        _events(),
    ],
    "clusterrole-aggregation-controller": [
        _r(["rbac.authorization.k8s.io"], ["clusterroles"], ["escalate", "get", "list", "patch", "update", "watch"]),
    ],
    "cronjob-controller": [
        _r(["batch"], ["cronjobs"], ["get", "list", "update", "watch"]),
        _r(["batch"], ["jobs"], list(_RW)),
        _r(["batch"], ["cronjobs/status"], ["update"]),
        _r(["batch"], ["cronjobs/finalizers"], ["update"]),
        _r(_CORE, ["pods"], ["delete", "list", "watch"]),
        _events(),
    ],
    "daemon-set-controller": [
        _r(_APPS_EXT, ["daemonsets"], list(_READ)),
        _r(_APPS_EXT, ["daemonsets/status"], ["update"]),
        _r(_APPS_EXT, ["daemonsets/finalizers"], ["update"]),
        _r(_CORE, ["nodes"], ["list", "watch"]),
        _r(_CORE, ["pods"], ["create", "delete", "list", "patch", "watch"]),
        _r(_CORE, ["pods/binding"], ["create"]),
        _r(["apps"], ["controllerrevisions"], list(_RW)),
        _events(),
    ],
    "deployment-controller": [
        _r(_APPS_EXT, ["deployments"], ["get", "list", "update", "watch"]),
        _r(_APPS_EXT, ["deployments/status"], ["update"]),
        _r(_APPS_EXT, ["deployments/finalizers"], ["update"]),
        _r(_APPS_EXT, ["replicasets"], list(_RW)),
        _r(_CORE, ["pods"], ["get", "list", "update", "watch"]),
        _events(),
    ],
    "device-taint-eviction-controller": [
        _r(_CORE, ["pods"], ["delete", "get", "list", "watch"]),
        _r(_CORE, ["pods/status"], ["patch", "update"]),
        _r(_DRA, ["resourceclaims"], list(_READ)),
        _r(_DRA, ["resourceslices"], list(_READ)),
        _r(_DRA, ["deviceclasses"], list(_READ)),
        _events(),
    ],
    "disruption-controller": [
        _r(_APPS_EXT, ["deployments"], list(_READ)),
        _r(_APPS_EXT, ["replicasets"], list(_READ)),
        _r(_CORE, ["replicationcontrollers"], list(_READ)),
        _r(["policy"], ["poddisruptionbudgets"], list(_READ)),
        _r(["apps"], ["statefulsets"], list(_READ)),
        _r(["policy"], ["poddisruptionbudgets/status"], ["update"]),
        _r(_CORE, ["pods/status"], ["patch", "update"]),
        _r(["*"], ["*/scale"], ["get"]),
        _events(),
    ],
    "endpoint-controller": [
        _r(_CORE, ["pods", "services"], list(_READ)),
        _r(_CORE, ["endpoints"], ["create", "delete", "get", "list", "update", "watch"]),
        _r(_CORE, ["endpoints/restricted"], ["create"]),
        _events(),
    ],
    "endpointslice-controller": [
        _r(_CORE, ["nodes", "pods", "services"], list(_READ)),
        _r(_CORE, ["services/finalizers"], ["update"]),
        _r(["discovery.k8s.io"], ["endpointslices"], ["create", "delete", "get", "list", "update", "watch"]),
        _events(),
    ],
    "endpointslicemirroring-controller": [
        _r(_CORE, ["endpoints", "services"], list(_READ)),
        _r(_CORE, ["services/finalizers"], ["update"]),
        _r(_CORE, ["endpoints/finalizers"], ["update"]),
        _r(["discovery.k8s.io"], ["endpointslices"], ["create", "delete", "get", "list", "update", "watch"]),
        _events(),
    ],
    "ephemeral-volume-controller": [
        _r(_CORE, ["pods"], list(_READ)),
        _r(_CORE, ["pods/finalizers"], ["update"]),
        _r(_CORE, ["persistentvolumeclaims"], ["create", "get", "list", "watch"]),
        _events(),
    ],
    "expand-controller": [
        _r(_CORE, ["persistentvolumes"], ["get", "list", "patch", "update", "watch"]),
        _r(_CORE, ["persistentvolumeclaims/status"], ["patch", "update"]),
        _r(_CORE, ["persistentvolumeclaims"], list(_READ)),
        _events(),
    ],
    "generic-garbage-collector": [
        _r(["*"], ["*"], ["delete", "get", "list", "patch", "update", "watch"]),
        _events(),
    ],
    "horizontal-pod-autoscaler": [
        _r(["autoscaling"], ["horizontalpodautoscalers"], list(_READ)),
        _r(["autoscaling"], ["horizontalpodautoscalers/status"], ["update"]),
        _r(["*"], ["*/scale"], ["get", "update"]),
        _r(_CORE, ["pods"], ["list", "watch"]),
        _r(["metrics.k8s.io"], ["pods"], ["list", "watch"]),
        _r(["custom.metrics.k8s.io"], ["*"], list(_READ)),
        _r(["external.metrics.k8s.io"], ["*"], list(_READ)),
        _events(),
    ],
    "job-controller": [
        _r(["batch"], ["jobs"], ["get", "list", "patch", "update", "watch"]),
        _r(["batch"], ["jobs/status"], ["update"]),
        _r(["batch"], ["jobs/finalizers"], ["update"]),
        _r(_CORE, ["pods"], ["create", "delete", "list", "patch", "watch"]),
        _events(),
    ],
    "legacy-service-account-token-cleaner": [
        _r(_CORE, ["configmaps"], ["get"], ["kube-apiserver-legacy-service-account-token-tracking"]),
        _r(_CORE, ["secrets"], ["delete", "patch"]),
    ],
    "namespace-controller": [
        _r(_CORE, ["namespaces"], ["delete", "get", "list", "watch"]),
        _r(_CORE, ["namespaces/finalize", "namespaces/status"], ["update"]),
        _r(["*"], ["*"], ["delete", "deletecollection", "get", "list", "watch"]),
    ],
    "node-controller": [
        _r(_CORE, ["nodes"], ["delete", "get", "list", "patch", "update", "watch"]),
        _r(_CORE, ["nodes/status"], ["patch", "update"]),
        _r(_CORE, ["pods/status"], ["patch", "update"]),
        _r(_CORE, ["pods"], ["delete", "get", "list", "watch"]),
        _events(),
    ],
    "persistent-volume-binder": [
        _r(_CORE, ["persistentvolumes"], ["create", "delete", "get", "list", "update", "watch"]),
        _r(_CORE, ["persistentvolumes/status"], ["update"]),
        _r(_CORE, ["persistentvolumeclaims"], ["get", "list", "update", "watch"]),
        _r(_CORE, ["persistentvolumeclaims/status"], ["update"]),
        _r(_CORE, ["pods"], ["create", "delete", "get", "list", "watch"]),
        _r(_STORAGE, ["storageclasses"], list(_READ)),
        _r(_CORE, ["nodes"], ["list", "watch"]),
        _events(),
        _r(_CORE, ["events"], ["watch"]),
    ],
    "pod-garbage-collector": [
        _r(_CORE, ["pods"], ["delete", "list", "watch"]),
        _r(_CORE, ["nodes"], list(_READ)),
        _r(_CORE, ["pods/status"], ["patch"]),
    ],
    "pv-protection-controller": [
        _r(_CORE, ["persistentvolumes"], ["get", "list", "update", "watch"]),
        _events(),
    ],
    "pvc-protection-controller": [
        _r(_CORE, ["persistentvolumeclaims"], ["get", "list", "update", "watch"]),
        _r(_CORE, ["persistentvolumeclaims/status"], ["update"]),
        _r(_CORE, ["pods"], list(_READ)),
        _events(),
    ],
    "replicaset-controller": [
        _r(_APPS_EXT, ["replicasets"], ["get", "list", "update", "watch"]),
        _r(_APPS_EXT, ["replicasets/status"], ["update"]),
        _r(_APPS_EXT, ["replicasets/finalizers"], ["update"]),
        _r(_CORE, ["pods"], ["create", "delete", "list", "patch", "watch"]),
        _events(),
    ],
    "replication-controller": [
        _r(_CORE, ["replicationcontrollers"], ["get", "list", "update", "watch"]),
        _r(_CORE, ["replicationcontrollers/status"], ["update"]),
        _r(_CORE, ["replicationcontrollers/finalizers"], ["update"]),
        _r(_CORE, ["pods"], ["create", "delete", "list", "patch", "watch"]),
        _events(),
    ],
    "resource-claim-controller": [
        _r(_CORE, ["pods"], list(_READ)),
        _r(_CORE, ["pods/finalizers"], ["update"]),
        _r(_DRA, ["resourceclaims"], ["create", "delete", "get", "list", "watch"]),
        _r(_DRA, ["resourceclaims", "resourceclaims/status"], ["patch", "update"]),
        _r(_CORE, ["pods/status"], ["patch", "update"]),
        _events(),
        _r(_DRA, ["resourceclaims/binding"], ["patch", "update"]),
    ],
    "resourcequota-controller": [
        _r(["*"], ["*"], ["list", "watch"]),
        _r(_CORE, ["resourcequotas/status"], ["update"]),
        _events(),
    ],
    "root-ca-cert-publisher": [
        _r(_CORE, ["configmaps"], ["create", "update"]),
        _events(),
    ],
    "route-controller": [
        _r(_CORE, ["nodes"], ["list", "watch"]),
        _r(_CORE, ["nodes/status"], ["patch"]),
        _events(),
    ],
    "selinux-warning-controller": [
        _events(),
        _r(_CORE, ["persistentvolumes"], list(_READ)),
        _r(_CORE, ["persistentvolumeclaims"], list(_READ)),
        _r(_CORE, ["pods"], list(_READ)),
        _r(_STORAGE, ["csidrivers"], list(_READ)),
    ],
    "service-account-controller": [
        _r(_CORE, ["serviceaccounts"], ["create"]),
        _events(),
    ],
    "service-cidrs-controller": [
        _r(_NET, ["servicecidrs"], ["get", "list", "patch", "update", "watch"]),
        _r(_NET, ["servicecidrs/finalizers"], ["patch", "update"]),
        _r(_NET, ["servicecidrs/status"], ["patch", "update"]),
        _r(_NET, ["ipaddresses"], list(_READ)),
        _events(),
    ],
    "service-controller": [
        _r(_CORE, ["services"], list(_READ)),
        _r(_CORE, ["services/status"], ["patch", "update"]),
        _r(_CORE, ["nodes"], ["list", "watch"]),
        _events(),
    ],
    "statefulset-controller": [
        _r(_CORE, ["pods"], ["list", "watch"]),
        _r(["apps"], ["statefulsets"], list(_READ)),
        _r(["apps"], ["statefulsets/status"], ["update"]),
        _r(["apps"], ["statefulsets/finalizers"], ["update"]),
        _r(_CORE, ["pods"], ["create", "delete", "get", "patch", "update"]),
        _r(["apps"], ["controllerrevisions"], list(_RW)),
        _r(_CORE, ["persistentvolumeclaims"], ["create", "get", "list", "watch"]),
        _r(_CORE, ["persistentvolumeclaims"], ["delete", "update"]),
        _r(_CORE, ["pods/finalizers"], ["update"]),
        _events(),
    ],
    "ttl-after-finished-controller": [
        _r(["batch"], ["jobs"], ["delete", "get", "list", "watch"]),
        _events(),
    ],
    "ttl-controller": [
        _r(_CORE, ["nodes"], ["list", "patch", "update", "watch"]),
        _events(),
    ],
    "validatingadmissionpolicy-status-controller": [
        _r(["admissionregistration.k8s.io"], ["validatingadmissionpolicies"], list(_READ)),
        _r(["admissionregistration.k8s.io"], ["validatingadmissionpolicies/status"], ["get", "patch", "update"]),
        _events(),
    ],
    "volumeattributesclass-protection-controller": [
        _r(_CORE, ["persistentvolumeclaims"], list(_READ)),
        _r(_CORE, ["persistentvolumes"], list(_READ)),
        _r(_STORAGE, ["volumeattributesclasses"], ["get", "list", "update", "watch"]),
        _events(),
    ],
}

_LEADER_LOCKING = [
    _r(["coordination.k8s.io"], ["leases"], ["create", "get", "list", "update", "watch"]),
    _r(["coordination.k8s.io"], ["leasecandidates"], ["create", "get", "list", "update", "watch"]),
]

# namespace_policy.go, in the golden file's (namespace, name) order.
NAMESPACED_ROLES: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("kube-public", "system:controller:bootstrap-signer"): [
        _r(_CORE, ["configmaps"], list(_READ)),
        _r(_CORE, ["configmaps"], ["update"], ["cluster-info"]),
        _events(),
    ],
    ("kube-system", "extension-apiserver-authentication-reader"): [
        _r(_CORE, ["configmaps"], list(_READ), ["extension-apiserver-authentication"]),
    ],
    ("kube-system", "system::leader-locking-kube-controller-manager"): [dict(r) for r in _LEADER_LOCKING],
    ("kube-system", "system::leader-locking-kube-scheduler"): [dict(r) for r in _LEADER_LOCKING],
    ("kube-system", "system:controller:bootstrap-signer"): [_r(_CORE, ["secrets"], list(_READ))],
    ("kube-system", "system:controller:cloud-provider"): [_r(_CORE, ["configmaps"], ["create", "get", "list",
                                                                                       "watch"])],
    ("kube-system", "system:controller:token-cleaner"): [
        _r(_CORE, ["secrets"], ["delete", "get", "list", "watch"]),
        _events(),
    ],
}

_KCM_USER = ("User", "system:kube-controller-manager", "")
_SCHEDULER_USER = ("User", "system:kube-scheduler", "")


def _sa(name: str) -> tuple[str, str, str]:
    return ("ServiceAccount", name, "kube-system")


NAMESPACED_ROLE_BINDINGS: dict[tuple[str, str], tuple[str, tuple[tuple[str, str, str], ...]]] = {
    ("kube-public", "system:controller:bootstrap-signer"): ("system:controller:bootstrap-signer",
                                                            (_sa("bootstrap-signer"),)),
    ("kube-system", "system::extension-apiserver-authentication-reader"): (
        "extension-apiserver-authentication-reader", (_KCM_USER, _SCHEDULER_USER)),
    ("kube-system", "system::leader-locking-kube-controller-manager"): (
        "system::leader-locking-kube-controller-manager",
        (_KCM_USER, _sa("kube-controller-manager"), _sa("leader-election-controller"))),
    ("kube-system", "system::leader-locking-kube-scheduler"): (
        "system::leader-locking-kube-scheduler", (_SCHEDULER_USER, _sa("kube-scheduler"))),
    ("kube-system", "system:controller:bootstrap-signer"): ("system:controller:bootstrap-signer",
                                                            (_sa("bootstrap-signer"),)),
    ("kube-system", "system:controller:cloud-provider"): ("system:controller:cloud-provider",
                                                          (_sa("cloud-provider"),)),
    ("kube-system", "system:controller:token-cleaner"): ("system:controller:token-cleaner",
                                                         (_sa("token-cleaner"),)),
}

# kapi-only: kapi's controller manager runs every loop as the one user system:kube-controller-manager (kube runs
# each loop as its kube-system ServiceAccount), so each controller role one of kapi's loops needs is also bound
# to that user, under a kapi name; kube's own binding of the role (to the ServiceAccount) stays exactly kube's.
KAPI_LOOP_BINDING_PREFIX = "kapi:controller-manager:"
# kapi-only: the ResourceQuota loop re-reads a quota (GET) before its conditional status PUT (kube's reads its
# informer cache), which kube's resourcequota-controller role does not grant.
KAPI_ONLY_ROLES: dict[str, tuple[list[dict[str, Any]], dict[str, str], str]] = {
    "kapi:controller:resourcequota-reader": ([_r(_CORE, ["resourcequotas"], ["get"])], {}, ""),
}


def merge(cluster_roles: dict[str, Any], cluster_role_bindings: dict[str, Any],
          namespaced_roles: dict[tuple[str, str], Any], namespaced_role_bindings: dict[tuple[str, str], Any],
          kapi_loop_roles: list[str]) -> None:
    """Fold kube's objects into ``bootstrap.py``'s tables (in place); kube's rules replace same-named ones.

    ``kapi_loop_roles`` names the ``system:controller:*`` ClusterRoles kapi's own loops use: each keeps a
    kapi-only ClusterRoleBinding ``kapi:controller-manager:<controller>`` to ``system:kube-controller-manager``,
    while ``system:controller:<controller>`` binds kube's ServiceAccount ``kube-system/<controller>`` only.
    Raises KeyError if a loop names a controller role kube does not define.
    """
    cluster_roles.update(CLUSTER_ROLES)
    for short, rules in CONTROLLER_ROLES.items():
        name = "system:controller:" + short
        cluster_roles[name] = (rules, {}, "")
        cluster_role_bindings[name] = (name, (_sa(short),))
    for name in kapi_loop_roles:
        short = name.removeprefix("system:controller:")
        if short not in CONTROLLER_ROLES:
            raise KeyError(name)
        cluster_role_bindings[KAPI_LOOP_BINDING_PREFIX + short] = (name, (_KCM_USER,))
    cluster_roles.update(KAPI_ONLY_ROLES)
    for name in KAPI_ONLY_ROLES:
        cluster_role_bindings[name] = (name, (_KCM_USER,))
    namespaced_roles.update(NAMESPACED_ROLES)
    namespaced_role_bindings.update(NAMESPACED_ROLE_BINDINGS)
