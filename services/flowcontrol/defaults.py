"""kube-apiserver's mandatory and suggested APF configuration objects (flowcontrol.apiserver.k8s.io/v1).

"API Priority and Fairness", "Defaults" and "Mandatory Configuration
Objects" (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go):
the mandatory objects are the ``exempt`` and ``catch-all``
PriorityLevelConfigurations and FlowSchemas; the suggested ones are the
``system``, ``node-high``, ``leader-election``, ``workload-high``,
``workload-low`` and ``global-default`` levels and their FlowSchemas
(``probes``, ``system-leader-election``, ``endpoint-controller``,
``workload-leader-election``, ``system-node-high``, ``system-nodes``,
``kube-controller-manager``, ``kube-scheduler``,
``kube-system-service-accounts``, ``service-accounts``,
``global-default``).
Every one carries ``apf.kubernetes.io/autoupdate-spec: "true"``. The
mandatory specs are :mod:`kapi.kinds.flowcontrol`'s (the one copy, which
validation also holds them to); every spec here is in v1-defaulted form, so
defaulting changes none of them.

Each function returns fresh dicts (callers may mutate them).
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Sequence
from typing import Any

from kapi.kinds import flowcontrol as kinds

GROUP = "flowcontrol.apiserver.k8s.io"
API_VERSION = f"{GROUP}/v1"
FLOW_SCHEMAS, PRIORITY_LEVELS = "flowschemas", "prioritylevelconfigurations"
AUTOUPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"

EXEMPT, CATCH_ALL = kinds.EXEMPT, kinds.CATCH_ALL
MANDATORY_NAMES = frozenset({EXEMPT, CATCH_ALL})

_AUTHENTICATED, _UNAUTHENTICATED = "system:authenticated", "system:unauthenticated"
_NODES, _SERVICEACCOUNTS = "system:nodes", "system:serviceaccounts"
_KCM, _SCHEDULER = "system:kube-controller-manager", "system:kube-scheduler"


def _queuing(shares: int, lendable: int, queues: int, hand_size: int, queue_length_limit: int = 50
             ) -> dict[str, Any]:
    return {"type": "Limited", "limited": {
        "nominalConcurrencyShares": shares, "lendablePercent": lendable,
        "limitResponse": {"type": "Queue", "queuing": {
            "queues": queues, "handSize": hand_size, "queueLengthLimit": queue_length_limit}}}}


def priority_level_specs() -> dict[str, dict[str, Any]]:
    """name -> PriorityLevelConfiguration spec of every default level (mandatory first)."""
    return {
        **kinds.mandatory_priority_level_specs(),
        "system": _queuing(30, 33, 64, 6),
        "node-high": _queuing(40, 25, 64, 6),
        "leader-election": _queuing(10, 0, 16, 4),
        "workload-high": _queuing(40, 50, 128, 6),
        "workload-low": _queuing(100, 90, 128, 6),
        "global-default": _queuing(20, 50, 128, 6),
    }


def _users(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "User", "user": {"name": n}} for n in names]


def _groups(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def _kube_system_service_accounts(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": n}}
            for n in names or ("*",)]


def _resource_rule(verbs: Sequence[str], groups: Sequence[str], resources: Sequence[str],
                   namespaces: Sequence[str], cluster_scope: bool) -> dict[str, Any]:
    rule: dict[str, Any] = {"verbs": list(verbs), "apiGroups": list(groups), "resources": list(resources)}
    if cluster_scope:
        rule["clusterScope"] = True
    if namespaces:
        rule["namespaces"] = list(namespaces)
    return rule


def _everything(subjects: list[dict[str, Any]]) -> dict[str, Any]:
    return {"subjects": subjects,
            "resourceRules": [_resource_rule(["*"], ["*"], ["*"], ["*"], True)],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}


def _schema(level: str, precedence: int, distinguisher: str | None, rules: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence,
                            "rules": rules}
    if distinguisher:
        spec["distinguisherMethod"] = {"type": distinguisher}
    return spec


def flow_schema_specs() -> dict[str, dict[str, Any]]:
    """name -> FlowSchema spec of every default schema (mandatory first)."""
    leases = _resource_rule(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], ["*"], False)
    return {
        **kinds.mandatory_flow_schema_specs(),
        "probes": _schema(EXEMPT, 2, None, [{
            "subjects": _groups(_UNAUTHENTICATED, _AUTHENTICATED),
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]),
        "system-leader-election": _schema("leader-election", 100, "ByUser", [{
            "subjects": [*_users(_KCM, _SCHEDULER), *_kube_system_service_accounts()], "resourceRules": [leases]}]),
        # kube keeps endpoint-controller's endpoints writes out of workload-leader-election (kubernetes#80289)
        "endpoint-controller": _schema("workload-high", 150, "ByUser", [{
            "subjects": [*_users(_KCM), *_kube_system_service_accounts("endpoint-controller",
                                                                      "endpointslicemirroring-controller")],
            "resourceRules": [_resource_rule(["get", "create", "update"], [""], ["endpoints"], ["*"], False)]}]),
        "workload-leader-election": _schema("leader-election", 200, "ByUser", [{
            "subjects": _kube_system_service_accounts(),
            "resourceRules": [_resource_rule(["get", "create", "update"], [""], ["endpoints", "configmaps"], ["*"],
                                             False), leases]}]),
        "system-node-high": _schema("node-high", 400, "ByUser", [{
            "subjects": _groups(_NODES),
            "resourceRules": [_resource_rule(["*"], [""], ["nodes", "nodes/status"], ["*"], True),
                              _resource_rule(["*"], ["coordination.k8s.io"], ["leases"], ["*"], False)]}]),
        "system-nodes": _schema("system", 500, "ByUser", [_everything(_groups(_NODES))]),
        "kube-controller-manager": _schema("workload-high", 800, "ByNamespace", [_everything(_users(_KCM))]),
        "kube-scheduler": _schema("workload-high", 800, "ByNamespace", [_everything(_users(_SCHEDULER))]),
        "kube-system-service-accounts": _schema("workload-high", 900, "ByNamespace",
                                                [_everything(_kube_system_service_accounts())]),
        "service-accounts": _schema("workload-low", 9000, "ByUser", [_everything(_groups(_SERVICEACCOUNTS))]),
        "global-default": _schema("global-default", 9900, "ByUser",
                                  [_everything(_groups(_UNAUTHENTICATED, _AUTHENTICATED))]),
    }


def new_object(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A complete default object (uid, creationTimestamp, generation 1, the autoupdate annotation, empty status)."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": API_VERSION, "kind": kind,
            "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": now, "generation": 1,
                         "annotations": {AUTOUPDATE_ANNOTATION: "true"}},
            "spec": spec, "status": {}}


def default_objects() -> list[tuple[str, dict[str, Any]]]:
    """(resource, object) of every default object: priority levels first, then flow schemas."""
    out = [(PRIORITY_LEVELS, new_object("PriorityLevelConfiguration", n, s))
           for n, s in priority_level_specs().items()]
    out += [(FLOW_SCHEMAS, new_object("FlowSchema", n, s)) for n, s in flow_schema_specs().items()]
    return out
