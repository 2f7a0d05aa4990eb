"""pods/resize end to end: ``kubectl patch --subresource resize`` changes a container's cpu request, nothing else of
the Pod changes, and a resize that would change the QoS class or touch another resource is refused (kube's
podResizeStrategy and ValidatePodResize)."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "c", "image": "nginx",
                                "resources": {"requests": {"cpu": "500m", "memory": "128Mi"},
                                              "limits": {"cpu": "1", "memory": "256Mi"}}}]}}


def test_kubectl_patch_resize_changes_only_resources(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(POD))
    resources = json.loads(kubectl.run("get", "--raw", "/api/v1").stdout)["resources"]
    entry = next(r for r in resources if r["name"] == "pods/resize")
    assert (entry["kind"], entry["verbs"]) == ("Pod", ["get", "patch", "update"])
    base = f"/api/v1/namespaces/{namespace}/pods/web/resize"
    assert json.loads(kubectl.run("get", "--raw", base).stdout)["kind"] == "Pod"
    generation = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json").stdout)[
        "metadata"]["generation"]
    kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource", "resize", "-p", json.dumps(
        {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "800m"}}}]}}))
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json").stdout)
    assert stored["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "800m", "memory": "128Mi"}
    assert stored["metadata"]["generation"] == generation + 1
    # the subresource takes nothing but resources and resizePolicy: the image and the label are dropped
    kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource", "resize", "-p", json.dumps({
        "metadata": {"labels": {"app": "other"}}, "spec": {"containers": [{"name": "c", "image": "evil"}]}}))
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json").stdout)
    assert stored["spec"]["containers"][0]["image"] == "nginx" and stored["metadata"]["labels"] == {"app": "web"}
    # requests equal to the limits would make the Burstable Pod Guaranteed
    proc = kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource", "resize", "-p", json.dumps(
        {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "256Mi"}}}]}}),
        check=False)
    assert proc.returncode != 0
    assert ('The Pod "web" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a '
            "result of resizing") in proc.stderr, proc.stderr
    proc = kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource", "resize", "-p", json.dumps(
        {"spec": {"containers": [{"name": "c", "resources": {"requests": {"ephemeral-storage": "1Gi"}}}]}}),
        check=False)
    assert ('The Pod "web" is invalid: spec: Forbidden: only cpu and memory resources are mutable'
            in proc.stderr), proc.stderr
    # the main resource still refuses a resources change
    proc = kubectl.run("-n", namespace, "patch", "pod", "web", "-p", json.dumps(
        {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "900m"}}}]}}), check=False)
    assert proc.returncode != 0 and "Forbidden: pod updates may not change fields" in proc.stderr, proc.stderr
