"""kubectl sees kube's printer columns, kube's verbs (no deletecollection on namespaces), and a tenant can delegate."""

from __future__ import annotations

import json
import time
from pathlib import Path

from kapi.local.launcher import Stack
from tests.e2e.conftest import TOKENS, Kubectl, token_kubeconfig


def test_pvc_and_ingress_columns(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
         "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
                                                                           "backend": {"service": {
                                                                               "name": "web",
                                                                               "port": {"number": 80}}}}]}}]}}]}))
    out = kubectl.run("-n", namespace, "get", "pvc", "-o", "wide").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                              "VOLUMEATTRIBUTESCLASS", "AGE", "VOLUMEMODE"]
    assert out[1].split()[0] == "data"
    out = kubectl.run("-n", namespace, "get", "ingress").stdout.splitlines()
    assert out[0].split() == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert out[1].split()[:4] == ["web", "<none>", "a.example.com", "80"]


def test_event_columns(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"}, "type": "Normal", "reason": "Tested",
        "message": "hello", "involvedObject": {"kind": "Pod", "name": "web", "namespace": namespace}}))
    out = kubectl.run("-n", namespace, "get", "events").stdout.splitlines()
    assert out[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert out[1].split()[1:] == ["Normal", "Tested", "pod/web", "hello"]
    wide = kubectl.run("-n", namespace, "get", "events.events.k8s.io", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-4:] == ["FIRST", "SEEN", "COUNT", "NAME"] and wide[1].split()[-1] == "e1"


def test_default_storage_class_and_pod_restarts_columns(kubectl: Kubectl, namespace: str) -> None:
    sc = f"{namespace}-sc"
    kubectl.run("apply", "-f", "-", input=json.dumps({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "example.com/p",
        "metadata": {"name": sc, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}}))
    try:
        out = kubectl.run("get", "storageclass", sc).stdout.splitlines()
        assert out[1].split()[:3] == [sc, "(default)", "example.com/p"]
    finally:
        kubectl.run("delete", "storageclass", sc)
    kubectl.run("-n", namespace, "run", "web", "--image=nginx")
    finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1800))
    kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource=status", "--type=merge", "-p", json.dumps({
        "status": {"phase": "Running", "containerStatuses": [
            {"name": "web", "image": "nginx", "imageID": "", "ready": True, "restartCount": 3,
             "state": {"running": {"startedAt": finished}},
             "lastState": {"terminated": {"exitCode": 1, "finishedAt": finished}}}]}}))
    out = kubectl.run("-n", namespace, "get", "pod", "web").stdout.splitlines()
    assert out[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert out[1].split()[1:6] == ["1/1", "Running", "3", "(30m", "ago)"]


def test_api_names_the_address_the_client_reached(kubectl: Kubectl, stack: Stack) -> None:
    server = kubectl.run("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}").stdout
    body = json.loads(kubectl.run("get", "--raw", "/api").stdout)
    assert body["serverAddressByClientCIDRs"] == [{"clientCIDR": "0.0.0.0/0",
                                                   "serverAddress": server.removeprefix("https://")}]


def test_namespaces_have_no_deletecollection(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("label", "namespace", namespace, "parity=yes")
    proc = kubectl.run("delete", "--raw", "/api/v1/namespaces?labelSelector=parity%3Dyes", check=False)
    assert proc.returncode != 0
    assert "does not allow this method" in proc.stderr or "MethodNotAllowed" in proc.stderr, proc.stderr
    assert kubectl.run("get", "namespace", namespace).returncode == 0
    resources = kubectl.run("api-resources", "-o", "wide", "--api-group=").stdout
    ns_line = next(line for line in resources.splitlines() if line.startswith("namespaces "))
    assert ns_line.split()[-1] == "create,delete,get,list,patch,update,watch"


def test_tenant_creator_delegates_view(stack: Stack, stack_dir: Path, alice: Kubectl) -> None:
    bob = Kubectl(token_kubeconfig(stack, "bob", TOKENS["bob"], stack_dir / "bob-parity.kubeconfig"))
    ns = "alice-parity"
    alice.run("create", "namespace", ns)
    try:
        deadline = time.monotonic() + 20
        while True:  # the tenant-rbac controller binds namespace-creator to alice
            proc = alice.run("-n", ns, "create", "rolebinding", "bobview", "--clusterrole=view", "--user=bob",
                             check=False)
            if proc.returncode == 0:
                break
            assert time.monotonic() < deadline, proc.stderr
            time.sleep(0.3)
        for role in ("edit", "admin"):
            alice.run("-n", ns, "create", "rolebinding", f"bob{role}", f"--clusterrole={role}", "--user=bob",
                      "--dry-run=server")
        deadline = time.monotonic() + 10
        while bob.run("-n", ns, "get", "pods", check=False).returncode != 0:
            assert time.monotonic() < deadline
            time.sleep(0.3)
        assert bob.run("-n", ns, "create", "configmap", "x", check=False).returncode != 0
    finally:
        alice.run("delete", "namespace", ns, "--wait=false", check=False)
