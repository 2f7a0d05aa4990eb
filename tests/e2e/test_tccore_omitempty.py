"""Empty ``omitempty`` fields, found replaying kube's ``test/cmd/core.sh`` (quotas) against the stack.

kube decodes a built-in object into its Go struct and stores it as protobuf: an ``omitempty`` field's empty
map or slice (``labels: {}``, ``finalizers: []``, ``ports: []``, a ResourceQuota's ``status.hard: {}``) and a
non-pointer ``omitempty`` scalar's zero (``hostNetwork: false``) leave no trace, so neither the create answer
nor a later read has them. ``metadata.managedFields: []`` still resets the managed fields (isResetManagedFields).
"""

from __future__ import annotations

import json

import yaml

from tests.e2e.conftest import Kubectl, wait_for

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "empties", "labels": {}, "annotations": {}, "finalizers": []},
    "spec": {"hostNetwork": False, "nodeSelector": {}, "imagePullSecrets": [], "tolerations": [],
             "containers": [{"name": "c", "image": "nginx", "ports": [], "env": [], "args": []}]},
}


def test_create_stores_no_empty_omitempty_fields(kubectl: Kubectl, namespace: str) -> None:
    created = json.loads(kubectl.run("create", "-n", namespace, "-f", "-", "-o", "json",
                                     input=json.dumps(POD)).stdout)
    stored = json.loads(kubectl.run("get", "-n", namespace, "pod", "empties", "-o", "json").stdout)
    for obj in (created, stored):
        meta, spec = obj["metadata"], obj["spec"]
        assert not {"labels", "annotations", "finalizers"} & meta.keys(), meta
        assert not {"hostNetwork", "nodeSelector", "imagePullSecrets"} & spec.keys(), spec
        container = spec["containers"][0]
        assert not {"ports", "env", "args"} & container.keys(), container
        assert container["name"] == "c"
        # DefaultTolerationSeconds added the tolerations after the field manager saw the request's empty list
        assert [t["key"] for t in spec["tolerations"]] == ["node.kubernetes.io/not-ready",
                                                           "node.kubernetes.io/unreachable"]
    tracked = json.loads(kubectl.run("get", "-n", namespace, "pod", "empties", "-o", "json",
                                     "--show-managed-fields").stdout)["metadata"]["managedFields"]
    owned = json.dumps([entry["fieldsV1"] for entry in tracked])
    for field in ("f:tolerations", "f:hostNetwork", "f:nodeSelector", "f:labels", "f:ports", "f:env"):
        assert field not in owned, owned


def test_an_update_with_empty_fields_stores_none(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "-n", namespace, "configmap", "cm", "--from-literal=a=b")
    live = json.loads(kubectl.run("get", "-n", namespace, "configmap", "cm", "-o", "json").stdout)
    live["metadata"]["labels"] = {}
    live["binaryData"] = {}
    kubectl.run("replace", "-n", namespace, "-f", "-", input=json.dumps(live))
    stored = yaml.safe_load(kubectl.run("get", "-n", namespace, "configmap", "cm", "-o", "yaml").stdout)
    assert "labels" not in stored["metadata"] and "binaryData" not in stored
    assert stored["data"] == {"a": "b"}


def test_an_empty_managed_fields_list_still_resets_them(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "-n", namespace, "configmap", "reset", "--from-literal=a=b")
    kubectl.run("patch", "-n", namespace, "configmap", "reset", "--type=merge",
                "-p", '{"metadata":{"managedFields":[]}}')
    stored = json.loads(kubectl.run("get", "-n", namespace, "configmap", "reset", "-o", "json",
                                    "--show-managed-fields").stdout)
    assert "managedFields" not in stored["metadata"], stored["metadata"]


def test_a_quota_without_hard_limits_has_an_empty_status(kubectl: Kubectl, namespace: str) -> None:
    # core.sh run_namespace_tests: kubectl create quota test-quota (no --hard); kube's controller writes
    # Status{Hard: {}, Used: {}}, which the apiserver stores and answers as "status": {}
    kubectl.run("create", "-n", namespace, "quota", "test-quota")
    kubectl.run("create", "-n", namespace, "quota", "pods", "--hard=pods=3")

    def counted() -> bool:
        quota = json.loads(kubectl.run("get", "-n", namespace, "quota", "pods", "-o", "json").stdout)
        return (quota.get("status") or {}).get("used") == {"pods": "0"}

    wait_for(counted)  # the controller has been through the namespace's quotas
    quota = json.loads(kubectl.run("get", "-n", namespace, "quota", "test-quota", "-o", "json").stdout)
    assert quota["spec"] == {} and quota["status"] == {}, quota
