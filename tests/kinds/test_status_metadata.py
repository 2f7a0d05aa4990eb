"""Which metadata a ``/status`` update takes from the stored object, per kind (each kind's statusStrategy in kube
1.37: ``pkg/registry/<group>/<kind>/strategy.go``, kube-aggregator's APIService, apiextensions-apiserver's custom
resources and CRDs).

- Pod: spec, deletionTimestamp and ownerReferences (labels, annotations and finalizers are the request's);
- Deployment: spec and labels;
- APIService: spec, labels, annotations, finalizers and ownerReferences;
- VolumeAttachment, ResourceClaim, ValidatingAdmissionPolicy: spec and ``metav1.ResetObjectMetaForStatus``
  (deletionTimestamp, generation, selfLink, labels, annotations, finalizers, ownerReferences);
- FlowSchema, PriorityLevelConfiguration: spec and the whole ObjectMeta but managedFields;
- custom resources: the whole stored object but status and managedFields;
- every other kind (and a CRD, whose strategy resets the new ObjectMeta from itself): spec only.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi import strategy
from kapi.kinds import strategy_for
from kapi.kinds.base import RESET_OBJECT_META_FOR_STATUS, WHOLE_OBJECT_META
from kapi.resources import REGISTRY, Resource
from services.admission.crd_schema import CustomResourceStrategy

SPEC_ONLY: tuple[str, ...] = ()
OWNERS_OLD = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "old", "uid": "u-old"}]
OWNERS_NEW = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "new", "uid": "u-new"}]

# (group, kind) -> the metadata fields its statusStrategy.PrepareForUpdate takes from the stored object
EXPECTED: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Namespace"): SPEC_ONLY,
    ("", "Node"): SPEC_ONLY,
    ("", "PersistentVolume"): SPEC_ONLY,
    ("", "PersistentVolumeClaim"): SPEC_ONLY,
    ("", "Pod"): ("deletionTimestamp", "ownerReferences"),
    ("", "ReplicationController"): SPEC_ONLY,
    ("", "ResourceQuota"): SPEC_ONLY,
    ("", "Service"): SPEC_ONLY,
    ("apps", "DaemonSet"): SPEC_ONLY,
    ("apps", "Deployment"): ("labels",),
    ("apps", "ReplicaSet"): SPEC_ONLY,
    ("apps", "StatefulSet"): SPEC_ONLY,
    ("autoscaling", "HorizontalPodAutoscaler"): SPEC_ONLY,
    ("batch", "CronJob"): SPEC_ONLY,
    ("batch", "Job"): SPEC_ONLY,
    ("certificates.k8s.io", "CertificateSigningRequest"): SPEC_ONLY,
    ("networking.k8s.io", "Ingress"): SPEC_ONLY,
    ("networking.k8s.io", "ServiceCIDR"): SPEC_ONLY,
    ("policy", "PodDisruptionBudget"): SPEC_ONLY,
    ("resource.k8s.io", "ResourceClaim"): RESET_OBJECT_META_FOR_STATUS,
    ("storage.k8s.io", "VolumeAttachment"): RESET_OBJECT_META_FOR_STATUS,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): RESET_OBJECT_META_FOR_STATUS,
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): WHOLE_OBJECT_META,
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): WHOLE_OBJECT_META,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): SPEC_ONLY,
    ("apiregistration.k8s.io", "APIService"): ("labels", "annotations", "finalizers", "ownerReferences"),
}

# the request's metadata fields the table decides about, with the stored and the requested value
CHANGED = {
    "labels": ({"a": "old"}, {"a": "new"}),
    "annotations": ({"n": "old"}, {"n": "new"}),
    "finalizers": (["e.com/old"], ["e.com/new"]),
    "ownerReferences": (OWNERS_OLD, OWNERS_NEW),
    "generateName": ("old-", "new-"),
}


def _status_rows() -> dict[tuple[str, str], Resource]:
    rows: dict[tuple[str, str], Resource] = {}
    for row in REGISTRY.rows:
        if "status" in row.subresources:
            rows.setdefault((row.group, row.kind), row)
    return rows


ROWS = _status_rows()


def test_every_kind_with_a_status_subresource_is_in_the_table() -> None:
    assert set(ROWS) == set(EXPECTED)


def _objects(resource: Resource) -> tuple[dict[str, Any], dict[str, Any]]:
    meta: dict[str, Any] = {"name": "x", "uid": "u-1", "resourceVersion": "7", "generation": 3,
                            "creationTimestamp": "2026-01-01T00:00:00Z"}
    if resource.namespaced:
        meta["namespace"] = "n"
    old: dict[str, Any] = {"apiVersion": resource.group_version, "kind": resource.kind, "metadata": meta,
                           "spec": {"stored": True}, "status": {}}
    for key, (stored, _) in CHANGED.items():
        old["metadata"][key] = copy.deepcopy(stored)
    new = copy.deepcopy(old)
    for key, (_, requested) in CHANGED.items():
        new["metadata"][key] = copy.deepcopy(requested)
    new["metadata"]["deletionTimestamp"] = "2026-02-02T00:00:00Z"  # the stored object has none
    new["metadata"]["managedFields"] = [{"manager": "status-writer", "operation": "Update"}]
    new["spec"] = {"stored": False}
    return old, new


@pytest.mark.parametrize(("group", "kind"), sorted(EXPECTED), ids=lambda v: v or "core")
def test_status_update_takes_the_kinds_reset_metadata_from_the_stored_object(group: str, kind: str) -> None:
    expected = EXPECTED[(group, kind)]
    assert strategy_for(group, kind).status_reset_metadata == expected
    resource = ROWS[(group, kind)]
    old, new = _objects(resource)
    out = strategy.prepare_for_update(new, old, resource, subresource="status")
    meta = out["metadata"]
    if kind == "Namespace":  # the strategy's own label, whichever labels the update keeps
        assert meta["labels"].pop("kubernetes.io/metadata.name") == "x"
    if kind == "DaemonSet":  # conversion writes the stored templateGeneration (none stored: 0) whatever is kept
        assert meta["annotations"].pop("deprecated.daemonset.template.generation") == "0"
    for key, (stored, requested) in CHANGED.items():
        assert meta.get(key) == (stored if key in expected else requested), key
    if "deletionTimestamp" in expected:
        assert "deletionTimestamp" not in meta  # reset to the stored none
    else:
        assert meta["deletionTimestamp"] == "2026-02-02T00:00:00Z"  # left to validation (immutable)
    assert meta["managedFields"] == [{"manager": "status-writer", "operation": "Update"}]  # always the request's
    assert out["spec"] == {"stored": True}
    assert meta["uid"] == "u-1" and meta["resourceVersion"] == "7"


def test_pod_status_keeps_the_requests_labels_annotations_and_finalizers() -> None:
    resource = ROWS[("", "Pod")]
    old, new = _objects(resource)
    out = strategy.prepare_for_update(new, old, resource, subresource="status")
    assert out["metadata"]["labels"] == {"a": "new"}
    assert out["metadata"]["annotations"] == {"n": "new"}
    assert out["metadata"]["finalizers"] == ["e.com/new"]
    assert out["metadata"]["ownerReferences"] == OWNERS_OLD


def test_removed_fields_stay_removed_unless_reset() -> None:
    resource = ROWS[("apps", "Deployment")]
    old, new = _objects(resource)
    for key in ("labels", "annotations", "finalizers"):
        del new["metadata"][key]
    out = strategy.prepare_for_update(new, old, resource, subresource="status")
    assert out["metadata"]["labels"] == {"a": "old"}
    assert "annotations" not in out["metadata"] and "finalizers" not in out["metadata"]


def test_reset_fields_absent_from_the_stored_object_are_dropped() -> None:
    resource = ROWS[("", "Pod")]
    old, new = _objects(resource)
    del old["metadata"]["ownerReferences"]
    out = strategy.prepare_for_update(new, old, resource, subresource="status")
    assert "ownerReferences" not in out["metadata"]


def test_whole_object_meta_restores_the_grace_period_too() -> None:
    resource = ROWS[("flowcontrol.apiserver.k8s.io", "FlowSchema")]
    old, new = _objects(resource)
    old["metadata"]["deletionGracePeriodSeconds"] = 30
    new["metadata"]["deletionGracePeriodSeconds"] = 5
    out = strategy.prepare_for_update(new, old, resource, subresource="status")
    assert out["metadata"]["deletionGracePeriodSeconds"] == 30
    other = ROWS[("apps", "Deployment")]
    old, new = _objects(other)
    old["metadata"]["deletionGracePeriodSeconds"] = 30
    new["metadata"]["deletionGracePeriodSeconds"] = 5
    assert strategy.prepare_for_update(new, old, other, subresource="status")["metadata"][
        "deletionGracePeriodSeconds"] == 5  # left to validation (immutable)


def test_main_resource_updates_still_take_the_requests_metadata() -> None:
    for group, kind in (("", "Pod"), ("apps", "Deployment"), ("flowcontrol.apiserver.k8s.io", "FlowSchema")):
        resource = ROWS[(group, kind)]
        old, new = _objects(resource)
        del new["metadata"]["deletionTimestamp"]
        out = strategy.prepare_for_update(new, old, resource)
        assert out["metadata"]["labels"] == {"a": "new"} and out["metadata"]["ownerReferences"] == OWNERS_NEW


CUSTOM = Resource("e.com", "v1", "widgets", "Widget", True, subresources=("status",))


def _custom() -> tuple[dict[str, Any], dict[str, Any]]:
    meta = {"name": "w", "namespace": "n", "uid": "u-1", "resourceVersion": "4", "generation": 2,
            "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"a": "old"}, "annotations": {"n": "old"},
            "finalizers": ["e.com/old"], "ownerReferences": OWNERS_OLD}
    old: dict[str, Any] = {"apiVersion": "e.com/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 1},
                           "data": {"k": "old"}, "stale": True, "status": {"ready": False}}
    new = copy.deepcopy(old)
    new["metadata"].update(labels={"a": "new"}, annotations={"n": "new"}, finalizers=["e.com/new"],
                           ownerReferences=OWNERS_NEW,
                           managedFields=[{"manager": "status-writer", "operation": "Update"}])
    new["spec"] = {"size": 9}
    new["data"] = {"k": "new"}
    new["extra"] = 1
    del new["stale"]
    new["status"] = {"ready": True}
    return old, new


def test_custom_resource_status_takes_the_whole_stored_object_but_status_and_managed_fields() -> None:
    old, new = _custom()
    out = strategy.prepare_for_update(new, old, CUSTOM, subresource="status", kind=CustomResourceStrategy())
    meta = out["metadata"]
    assert meta["labels"] == {"a": "old"} and meta["annotations"] == {"n": "old"}
    assert meta["finalizers"] == ["e.com/old"] and meta["ownerReferences"] == OWNERS_OLD
    assert meta["managedFields"] == [{"manager": "status-writer", "operation": "Update"}]
    assert out["spec"] == {"size": 1} and out["data"] == {"k": "old"} and out["stale"] is True
    assert "extra" not in out
    assert out["status"] == {"ready": True}


def test_custom_resource_main_update_is_unchanged() -> None:
    old, new = _custom()
    out = strategy.prepare_for_update(new, old, CUSTOM, kind=CustomResourceStrategy())
    assert out["metadata"]["labels"] == {"a": "new"} and out["spec"] == {"size": 9} and out["extra"] == 1
    assert out["status"] == {"ready": False}  # the status subresource: the stored status
