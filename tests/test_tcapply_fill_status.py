"""kapi.strategy.fill_status writes a built-in kind's status as kube's decode-and-encode does (encoding/json over
the Go struct): zero metav1.Time fields of conditions are ``null``, omitempty zeros are left out, the always
written fields stay; a custom resource's status is left as it is."""

from __future__ import annotations

from datetime import UTC, datetime

from kapi import kinds
from kapi.resources import REGISTRY, Resource
from kapi.strategy import fill_status, prepare_for_create, prepare_for_update

PODS = REGISTRY.get("", "v1", "pods")
REPLICASETS = REGISTRY.get("apps", "v1", "replicasets")
DEPLOYMENTS = REGISTRY.get("apps", "v1", "deployments")


def _strategy(resource: Resource | None) -> kinds.Strategy:
    assert resource is not None
    return kinds.strategy_for(resource.group, resource.kind)


def test_pod_condition_times_left_out_are_null() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "status": {"conditions": [{"type": "example.io/Foo", "status": "True", "reason": "r"}]}}
    fill_status(pod, _strategy(PODS), PODS)
    assert pod["status"]["conditions"] == [{"type": "example.io/Foo", "status": "True", "lastProbeTime": None,
                                            "lastTransitionTime": None, "reason": "r"}]


def test_set_times_and_other_fields_are_kept() -> None:
    condition = {"type": "Ready", "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": "2026-12-04T01:00:00Z"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "status": {"phase": "Pending", "conditions": [condition], "qosClass": "BestEffort"}}
    fill_status(pod, _strategy(PODS), PODS)
    assert pod["status"] == {"phase": "Pending", "conditions": [condition], "qosClass": "BestEffort"}


def test_omitempty_zeros_go_and_plain_fields_stay() -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
          "status": {"replicas": 0, "readyReplicas": 0}}
    fill_status(rs, _strategy(REPLICASETS), REPLICASETS)
    assert rs["status"] == {"replicas": 0}  # ReplicaSetStatus.Replicas has no omitempty, ReadyReplicas has
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "status": {"replicas": 0, "conditions": [{"type": "Available", "status": "True"}]}}
    fill_status(deployment, _strategy(DEPLOYMENTS), DEPLOYMENTS)
    assert deployment["status"] == {"conditions": [{"type": "Available", "status": "True", "lastUpdateTime": None,
                                                    "lastTransitionTime": None}]}


def test_create_and_status_update_write_the_null_times() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert PODS is not None
    created = prepare_for_create(pod, PODS, "ns", datetime(2026, 12, 4, tzinfo=UTC))
    status = {**created, "status": {"conditions": [{"type": "example.io/Foo", "status": "True"}]}}
    updated = prepare_for_update(status, created, PODS, subresource="status")
    assert updated["status"]["conditions"] == [{"type": "example.io/Foo", "status": "True", "lastProbeTime": None,
                                                "lastTransitionTime": None}]
