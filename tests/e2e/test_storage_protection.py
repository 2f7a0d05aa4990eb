"""StorageObjectInUseProtection and the pvc-/pv-protection loops, through kubectl: an unused claim's delete
completes, a claim a scheduled pod uses stays Terminating until the pod is gone, a volume's delete completes."""

from __future__ import annotations

import json
import time

from tests.e2e.conftest import Kubectl, wait_for


def _claim(name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})


def _get(kubectl: Kubectl, *args: str) -> dict[str, object]:
    return json.loads(kubectl.run(*args, "-o", "json").stdout)  # type: ignore[no-any-return]


def test_unused_claim_delete_completes(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=_claim("data"))
    got = _get(kubectl, "-n", namespace, "get", "pvc", "data")
    assert got["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]  # type: ignore[index]
    kubectl.run("-n", namespace, "delete", "pvc", "data", "--timeout=30s")  # kubectl waits until it is gone
    assert "NotFound" in kubectl.run("-n", namespace, "get", "pvc", "data", check=False).stderr


def test_claim_in_use_stays_terminating_until_the_pod_is_gone(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=_claim("used"))
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "nginx",
                                                       "volumeMounts": [{"name": "d", "mountPath": "/d"}]}],
                 "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "used"}}]}}))
    kubectl.run("-n", namespace, "delete", "pvc", "used", "--wait=false")
    wait_for(lambda: _get(kubectl, "-n", namespace, "get", "pvc", "used")["metadata"].get(  # type: ignore[attr-defined]
        "deletionTimestamp"))
    out = kubectl.run("-n", namespace, "get", "pvc", "used").stdout.splitlines()
    assert out[1].split()[:2] == ["used", "Terminating"]
    time.sleep(2)  # the loop (a watch event away) has looked at it, found the scheduled pod, and keeps it
    got = _get(kubectl, "-n", namespace, "get", "pvc", "used")
    assert got["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]  # type: ignore[index]
    # the scheduled pod is deleted gracefully; without a kubelet, its final grace-0 delete is done by force
    kubectl.run("-n", namespace, "delete", "pod", "web", "--grace-period=0", "--force", "--timeout=30s")
    wait_for(lambda: "NotFound" in kubectl.run("-n", namespace, "get", "pvc", "used", check=False).stderr)


def test_volume_delete_completes(kubectl: Kubectl, namespace: str) -> None:
    name = f"{namespace}-pv"[:63]
    kubectl.run("create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/pv"}}}))
    got = _get(kubectl, "get", "pv", name)
    assert got["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]  # type: ignore[index]
    kubectl.run("delete", "pv", name, "--timeout=30s")
    assert "NotFound" in kubectl.run("get", "pv", name, check=False).stderr
