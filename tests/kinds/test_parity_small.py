"""Small kube-parity rows of issue #17 (docs/kube-parity.md), each against kube 1.37's source:

- CustomResourceDefinition ``/status``: statusStrategy.PrepareForUpdate
  (apiextensions-apiserver ``pkg/registry/customresourcedefinition/strategy.go``) resets the new ObjectMeta
  from itself, so labels, annotations, finalizers and ownerReferences change with the request; other kinds'
  ``/status`` keeps the stored ones (ResetObjectMetaForStatus(new, old)).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime

from kapi import strategy
from kapi.resources import REGISTRY

CRDS = REGISTRY.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
DEPLOYMENTS = REGISTRY.get("apps", "v1", "deployments")
NOW = datetime(2026, 1, 1, tzinfo=UTC)
OWNER = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-1"}]


def _crd() -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ws.e.com", "labels": {"a": "1"}, "annotations": {"n": "1"}},
            "spec": {"group": "e.com", "scope": "Namespaced", "names": {"plural": "ws", "kind": "W"},
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}


def _changed_metadata(obj: dict) -> dict:
    new = copy.deepcopy(obj)
    meta = new["metadata"]
    meta["labels"] = {"a": "2"}
    meta.pop("annotations")
    meta["finalizers"] = ["e.com/keep"]
    meta["ownerReferences"] = OWNER
    return new


def test_crd_status_update_takes_the_requests_labels_annotations_finalizers_and_owners():
    old = strategy.prepare_for_create(_crd(), CRDS, "", NOW)
    old["metadata"]["resourceVersion"] = "5"
    new = _changed_metadata(old)
    new["spec"]["scope"] = "Cluster"  # still reset: spec comes from the stored object
    new["status"]["storedVersions"] = ["v1", "v0"]
    out = strategy.prepare_for_update(new, old, CRDS, subresource="status")
    meta = out["metadata"]
    assert meta["labels"] == {"a": "2"}
    assert "annotations" not in meta
    assert meta["finalizers"] == ["e.com/keep"]
    assert meta["ownerReferences"] == OWNER
    assert out["spec"]["scope"] == "Namespaced"
    assert out["status"]["storedVersions"] == ["v1", "v0"]
    assert meta["generation"] == 1  # BeforeUpdate keeps the stored generation


def test_crd_main_resource_update_still_keeps_the_stored_status():
    old = strategy.prepare_for_create(_crd(), CRDS, "", NOW)
    new = _changed_metadata(old)
    new["status"]["storedVersions"] = ["v0"]
    out = strategy.prepare_for_update(new, old, CRDS)
    assert out["metadata"]["labels"] == {"a": "2"}
    assert out["status"]["storedVersions"] == ["v1"]


def test_other_kinds_status_update_keeps_the_stored_metadata():
    old = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "d", "namespace": "n", "labels": {"a": "1"}, "annotations": {"n": "1"},
                        "generation": 1, "resourceVersion": "3"},
           "spec": {"selector": {"matchLabels": {"a": "1"}}}, "status": {}}
    out = strategy.prepare_for_update(_changed_metadata(old), old, DEPLOYMENTS, subresource="status")
    meta = out["metadata"]
    assert meta["labels"] == {"a": "1"}
    assert meta["annotations"] == {"n": "1"}
    assert "finalizers" not in meta
    assert "ownerReferences" not in meta
