"""Small kube-parity rows of issue #17 (docs/kube-parity.md), each against kube 1.37's source:

- CustomResourceDefinition ``/status``: statusStrategy.PrepareForUpdate
  (apiextensions-apiserver ``pkg/registry/customresourcedefinition/strategy.go``) resets the new ObjectMeta
  from itself, so labels, annotations, finalizers and ownerReferences change with the request; other kinds'
  ``/status`` keeps the stored ones (ResetObjectMetaForStatus(new, old)).
- StatefulSet: ValidatePodTemplateSpecForStatefulSet (``pkg/apis/apps/validation/validation.go``) leaves the
  template's PodSpec unvalidated (a TODO) but checks the selector match, the pod-specific annotations, the
  ``restartPolicy`` Always and no ``activeDeadlineSeconds``; the template is still defaulted.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime

from kapi import strategy
from kapi.kinds import strategy_for
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


def _statefulset(pod_spec: dict, labels: dict | None = None) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "n"},
            "spec": {"selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"} if labels is None else labels},
                                  "spec": pod_spec}}}


def _causes(obj: dict) -> list[tuple[str, str]]:
    sts = strategy_for("apps", "StatefulSet")
    sts.default(obj)
    return [(c.field, c.message) for c in sts.validate(obj)]


def test_statefulset_template_pod_spec_is_not_validated_but_defaulted():
    bad = {"containers": [{"name": "Bad_Name", "ports": [{"containerPort": 0}],
                           "volumeMounts": [{"name": "missing", "mountPath": "/m"}]}],
           "dnsPolicy": "Nowhere"}
    obj = _statefulset(bad)
    assert _causes(obj) == []
    container = obj["spec"]["template"]["spec"]["containers"][0]
    assert container["terminationMessagePath"] == "/dev/termination-log"  # defaults still run
    assert container["ports"][0]["protocol"] == "TCP"
    assert _causes(_statefulset({})) == []  # no containers at all: kube's TODO lets it through


def test_statefulset_template_still_checks_selector_restart_policy_and_active_deadline():
    pod_spec = {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never", "activeDeadlineSeconds": 5}
    assert _causes(_statefulset(pod_spec, labels={"app": "other"})) == [
        ("spec.template.metadata.labels",
         'Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`'),
        ("spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"'),
        ("spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in StatefulSet is not "
                                                     "Supported")]


def test_other_workloads_still_validate_the_template_pod_spec():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n"},
                  "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                      "metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c"}]}}}}
    kind = strategy_for("apps", "Deployment")
    kind.default(deployment)
    assert ("spec.template.spec.containers[0].image", "Required value") in [
        (c.field, c.message) for c in kind.validate(deployment)]
