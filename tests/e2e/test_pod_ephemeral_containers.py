"""pods/ephemeralcontainers end to end: ``kubectl debug`` adds a container, nothing else of the Pod changes, and an
added one can neither go nor change (kube's podEphemeralContainersStrategy)."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "app", "image": "nginx"}]}}


def test_kubectl_debug_adds_an_ephemeral_container(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(POD))
    resources = json.loads(kubectl.run("get", "--raw", "/api/v1").stdout)["resources"]
    entry = next(r for r in resources if r["name"] == "pods/ephemeralcontainers")
    assert (entry["kind"], entry["verbs"]) == ("Pod", ["get", "patch", "update"])
    kubectl.run("-n", namespace, "debug", "web", "--image=busybox", "-c", "debugger", "--profile=general")
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json").stdout)
    debugger = stored["spec"]["ephemeralContainers"]
    assert [(c["name"], c["image"]) for c in debugger] == [("debugger", "busybox")]
    assert debugger[0]["terminationMessagePath"] == "/dev/termination-log"  # defaulted as any container
    assert stored["spec"]["containers"][0]["image"] == "nginx" and stored["metadata"]["labels"] == {"app": "web"}
    base = f"/api/v1/namespaces/{namespace}/pods/web/ephemeralcontainers"
    assert json.loads(kubectl.run("get", "--raw", base).stdout)["kind"] == "Pod"
    # the subresource takes nothing but spec.ephemeralContainers: the image change and the label are dropped
    kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource=ephemeralcontainers", "-p", json.dumps({
        "metadata": {"labels": {"app": "other"}}, "spec": {"containers": [{"name": "app", "image": "evil"}]}}))
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json").stdout)
    assert stored["spec"]["containers"][0]["image"] == "nginx" and stored["metadata"]["labels"] == {"app": "web"}
    proc = kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource=ephemeralcontainers", "--type=json",
                       "-p", '[{"op": "replace", "path": "/spec/ephemeralContainers/0/image", "value": "alpine"}]',
                       check=False)
    assert proc.returncode != 0
    assert ('The Pod "web" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers '
            '"debugger" may not be changed') in proc.stderr, proc.stderr
    proc = kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource=ephemeralcontainers", "--type=json",
                       "-p", '[{"op": "remove", "path": "/spec/ephemeralContainers/0"}]', check=False)
    assert ('spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be '
            "removed") in proc.stderr, proc.stderr
    # a direct update of the Pod cannot add one (ValidatePodUpdate: only the subresource may)
    proc = kubectl.run("-n", namespace, "patch", "pod", "web", "--type=json", "-p", json.dumps([
        {"op": "add", "path": "/spec/ephemeralContainers/-", "value": {"name": "sneaky", "image": "busybox"}}]),
        check=False)
    assert proc.returncode != 0 and "Forbidden: pod updates may not change fields" in proc.stderr, proc.stderr


def test_pod_security_guards_the_ephemeral_containers_door(kubectl: Kubectl, namespace: str) -> None:
    """The subresource goes through the one write path, so admission runs on it: PodSecurity's baseline level
    refuses a privileged debug container (kube evaluates pods/ephemeralcontainers updates too)."""
    kubectl.run("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=baseline")
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(POD))
    proc = kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource=ephemeralcontainers", "-p", json.dumps({
        "spec": {"ephemeralContainers": [{"name": "root", "image": "busybox",
                                          "securityContext": {"privileged": True}}]}}), check=False)
    assert proc.returncode != 0 and "violates PodSecurity" in proc.stderr, proc.stderr
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json").stdout)
    assert "ephemeralContainers" not in stored["spec"]
    for dry_run in ("--dry-run=server", None):  # an allowed one passes, dry run or not
        args = ["-n", namespace, "patch", "pod", "web", "--subresource=ephemeralcontainers", "-p", json.dumps({
            "spec": {"ephemeralContainers": [{"name": "ok", "image": "busybox"}]}})]
        kubectl.run(*args, *([dry_run] if dry_run else []))
