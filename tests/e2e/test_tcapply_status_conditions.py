"""kube's test/cmd apply tests (test/cmd/testdata/apply.txtar, "can add pod condition via status subresource")
replayed with the pinned kubectl: ``kubectl apply --server-side --subresource=status`` of hack/testdata's
pod-apply-status.yaml. kube decodes the applied status into its Go struct and encodes it back, so a
PodCondition's ``lastProbeTime`` and ``lastTransitionTime`` (non-pointer ``metav1.Time``, ``omitempty``, which
never omits a struct) are written ``null`` when the client left them out, and an Update's managed fields name
them (``f:lastProbeTime: {}``) as they do for a kubelet's status writes."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl

POD = """apiVersion: v1
kind: Pod
metadata:
  name: test-pod
  labels:
    name: test-pod-label
spec:
  containers:
  - name: kubernetes-pause
    image: registry.k8s.io/pause:3.10.1
"""

POD_STATUS = """apiVersion: v1
kind: Pod
metadata:
  name: test-pod
status:
  conditions:
  - type: example.io/Foo
    status: "True"
    message: message
    reason: reason
"""


def test_a_condition_applied_through_status_has_null_zero_times(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "apply", "--server-side", "-f", "-", input=POD)
    out = kubectl.run("-n", namespace, "apply", "--server-side", "--subresource=status",
                      "--field-manager=my-field-manager", "-f", "-", input=POD_STATUS).stdout
    assert out.strip() == "pod/test-pod serverside-applied"
    raw = kubectl.run("-n", namespace, "get", "--raw", f"/api/v1/namespaces/{namespace}/pods/test-pod").stdout
    assert '"conditions":[{"type":"example.io/Foo","status":"True","lastProbeTime":null,' \
           '"lastTransitionTime":null,"reason":"reason","message":"message"}]' in raw
    pod = json.loads(raw)
    applied = [m for m in pod["metadata"]["managedFields"] if m["manager"] == "my-field-manager"]
    assert [(m["operation"], m.get("subresource")) for m in applied] == [("Apply", "status")]
    assert applied[0]["fieldsV1"] == {"f:status": {"f:conditions": {'k:{"type":"example.io/Foo"}': {
        ".": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}}}}}


def test_a_condition_patched_through_status_has_null_zero_times_and_owns_them(kubectl: Kubectl,
                                                                               namespace: str) -> None:
    kubectl.run("-n", namespace, "apply", "-f", "-", input=POD)
    patch = json.dumps({"status": {"conditions": [{"type": "example.io/Bar", "status": "True"}]}})
    pod = json.loads(kubectl.run("-n", namespace, "patch", "pod", "test-pod", "--subresource=status",
                                 "--type=merge", "-p", patch, "-o", "json", "--show-managed-fields").stdout)
    assert pod["status"]["conditions"] == [{"type": "example.io/Bar", "status": "True", "lastProbeTime": None,
                                            "lastTransitionTime": None}]
    entry = [m for m in pod["metadata"]["managedFields"] if m["manager"] == "kubectl-patch"]
    assert entry[0]["fieldsV1"] == {"f:status": {"f:conditions": {".": {}, 'k:{"type":"example.io/Bar"}': {
        ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}}}}
    shown = kubectl.run("-n", namespace, "get", "pod", "test-pod", "-o", "yaml").stdout
    assert "  - lastProbeTime: null\n    lastTransitionTime: null\n    status: \"True\"\n" in shown
