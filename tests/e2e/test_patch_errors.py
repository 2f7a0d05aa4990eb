"""A strategic merge patch whose result the kind's Go struct cannot hold is kube's 422 from applyPatchToObject
(apiserver handlers/patch.go): ``"" is invalid: patch: Invalid value: "<the patch, as Go's %+v>": <the unstructured
converter's error>``, which kubectl prints as ``The request is invalid: patch: ...`` (no kind in the details);
kubectl's own test/cmd/core.sh checks ``cannot restore map from string``."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl


def test_kubectl_patch_labels_as_a_string(kubectl: Kubectl, namespace: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "valid-pod", "labels": {"name": "valid-pod"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod))
    out = kubectl.run("-n", namespace, "patch", "pod", "valid-pod", "-p", '{"metadata":{"labels":"invalid"}}',
                      check=False)
    assert out.returncode != 0
    assert ('The request is invalid: patch: Invalid value: "map[metadata:map[labels:invalid]]": cannot restore map '
            "from string") in out.stderr, out.stderr
    raw = kubectl.run("-n", namespace, "patch", "pod", "valid-pod", "-p", '{"spec":{"containers":{"a":1}}}',
                      "-v=0", "-o", "json", check=False)
    assert "cannot restore slice from map" in raw.stderr, raw.stderr
    labels = json.loads(kubectl.run("-n", namespace, "get", "pod", "valid-pod", "-o", "json").stdout)
    assert labels["metadata"]["labels"] == {"name": "valid-pod"}  # nothing written


def test_a_patched_int_field_given_a_string(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx")
    out = kubectl.run("-n", namespace, "patch", "deployment", "web", "-p", '{"spec":{"replicas":"3"}}', check=False)
    assert out.returncode != 0
    assert ('The request is invalid: patch: Invalid value: "map[spec:map[replicas:3]]": unrecognized type: int32'
            in out.stderr), out.stderr
