"""The disruption loop (kube-controller-manager's PodDisruptionBudget status), through the pinned kubectl as
kube's test/cmd scripts drive it: the status counts the budget's Ready pods, follows spec changes
(observedGeneration, the DisruptionAllowed condition), takes a controller's scale for maxUnavailable, fails
safe on a controller it cannot find, and gates evictions, so ``kubectl drain`` stops at the budget.

Before the loop, every budget kept an empty status (observedGeneration 0), so each eviction of a running pod
under any budget was refused for ever with ``The disruption budget <name> is still being processed by the
server.``
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Kubectl, own_stack, wait_for


@pytest.fixture(scope="module")
def kubectl() -> Iterator[Kubectl]:
    """The admin's kubectl on a stack of this module's own: the shared one runs no disruption loop."""
    with own_stack([]) as stack:
        yield Kubectl(Path(stack.kubeconfig))


@pytest.fixture
def namespace(kubectl: Kubectl, request: pytest.FixtureRequest) -> str:
    """A fresh namespace named after the test, on this module's stack."""
    name = "t-" + request.node.name.replace("_", "-").lower()[:50].strip("-")
    kubectl.run("create", "namespace", name)
    return name


def _get(kubectl: Kubectl, *args: str) -> dict[str, Any]:
    return json.loads(kubectl.run(*args, "-o", "json").stdout)  # type: ignore[no-any-return]


def _ready_pod(kubectl: Kubectl, namespace: str, name: str, labels: dict[str, str], node: str = "",
               owner: dict[str, Any] | None = None) -> None:
    """A pod made Running and Ready through its status (kapi runs no kubelet)."""
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "test-image"}]}
    if node:
        spec["nodeName"] = node
    kubectl.run("-n", namespace, "create", "-f", "-",
                input=json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}))
    kubectl.run("-n", namespace, "patch", "pod", name, "--subresource=status", "--type=merge", "-p", json.dumps(
        {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}))


def _budget_status(kubectl: Kubectl, namespace: str, name: str, generation: int) -> dict[str, Any]:
    """The budget's status once the loop has synced ``generation``."""
    def synced() -> dict[str, Any] | None:
        status: dict[str, Any] = _get(kubectl, "-n", namespace, "get", "pdb", name).get("status") or {}
        return status if status.get("observedGeneration") == generation else None
    return wait_for(synced)  # type: ignore[no-any-return]


def _condition(status: dict[str, Any]) -> tuple[str, str, str]:
    [cond] = [c for c in status["conditions"] if c["type"] == "DisruptionAllowed"]
    return cond["status"], cond["reason"], cond["message"]


def _evict(kubectl: Kubectl, namespace: str, pod: str) -> Any:
    """POST the pod's eviction; -v=8 puts the answer's body (its causes) on stderr."""
    return kubectl.run("-v=8", "create", "--raw", f"/api/v1/namespaces/{namespace}/pods/{pod}/eviction", "-f", "-",
                       check=False, input=json.dumps({"apiVersion": "policy/v1", "kind": "Eviction",
                                                      "metadata": {"name": pod, "namespace": namespace}}))


def test_budget_status_counts_ready_pods_and_gates_evictions(kubectl: Kubectl, namespace: str) -> None:
    for name in ("web-1", "web-2"):
        _ready_pod(kubectl, namespace, name, {"app": "web"})
    kubectl.run("-n", namespace, "create", "pdb", "web", "--selector=app=web", "--min-available=2")
    status = _budget_status(kubectl, namespace, "web", 1)
    assert (status["expectedPods"], status["currentHealthy"], status["desiredHealthy"],
            status["disruptionsAllowed"]) == (2, 2, 2, 0)
    assert _condition(status) == ("False", "InsufficientPods", "")
    refused = _evict(kubectl, namespace, "web-1")
    assert refused.returncode != 0 and "needs 2 healthy pods and has 2 currently" in refused.stderr

    kubectl.run("-n", namespace, "patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    status = _budget_status(kubectl, namespace, "web", 2)
    assert (status["desiredHealthy"], status["disruptionsAllowed"]) == (1, 1)
    assert _condition(status) == ("True", "SufficientPods", "")
    row = kubectl.run("-n", namespace, "get", "pdb", "web", "--no-headers").stdout.split()
    assert row[:4] == ["web", "1", "N/A", "1"]

    assert _evict(kubectl, namespace, "web-1").returncode == 0
    # web-1 (unscheduled) is deleted at once: the loop counts one pod, healthy, and drops its disruptedPods entry
    status = wait_for(lambda: (s := _budget_status(kubectl, namespace, "web", 2))["expectedPods"] == 1 and s)
    assert (status["currentHealthy"], status["disruptionsAllowed"], "disruptedPods" in status) == (1, 0, False)
    refused = _evict(kubectl, namespace, "web-2")
    assert refused.returncode != 0 and "needs 1 healthy pods and has 1 currently" in refused.stderr


def test_max_unavailable_takes_the_controllers_scale(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "api"},
        "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "api"}},
                 "template": {"metadata": {"labels": {"app": "api"}},
                              "spec": {"containers": [{"name": "c", "image": "test-image"}]}}}}))
    rs = _get(kubectl, "-n", namespace, "get", "rs", "api")
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api", "uid": rs["metadata"]["uid"],
             "controller": True}
    for name in ("api-1", "api-2", "api-3"):
        _ready_pod(kubectl, namespace, name, {"app": "api"}, owner=owner)
    kubectl.run("-n", namespace, "create", "pdb", "api", "--selector=app=api", "--max-unavailable=50%")
    status = _budget_status(kubectl, namespace, "api", 1)
    # 4 replicas expected, 50% of 4 may be unavailable: 2 must be healthy, 3 are
    assert (status["expectedPods"], status["desiredHealthy"], status["currentHealthy"],
            status["disruptionsAllowed"]) == (4, 2, 3, 1)


def test_a_pod_of_an_unknown_controller_fails_the_sync(kubectl: Kubectl, namespace: str) -> None:
    # a live owner (the garbage collector keeps the pod) of a kind with no replicas and no scale subresource
    kubectl.run("-n", namespace, "create", "configmap", "owner")
    uid = _get(kubectl, "-n", namespace, "get", "configmap", "owner")["metadata"]["uid"]
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid, "controller": True}
    _ready_pod(kubectl, namespace, "db-0", {"app": "db"}, owner=owner)
    kubectl.run("-n", namespace, "create", "pdb", "db", "--selector=app=db", "--max-unavailable=1")

    def failed() -> dict[str, Any] | None:
        status: dict[str, Any] = _get(kubectl, "-n", namespace, "get", "pdb", "db").get("status") or {}
        return status if status.get("conditions") else None
    status = wait_for(failed)
    assert _condition(status) == ("False", "SyncFailed", 'found no controllers for pod "db-0"')
    assert status["disruptionsAllowed"] == 0 and "observedGeneration" not in status
    refused = _evict(kubectl, namespace, "db-0")
    assert refused.returncode != 0 and "still being processed by the server" in refused.stderr


def test_drain_stops_at_the_budget(kubectl: Kubectl, namespace: str) -> None:
    node = f"{namespace}-node"[:63]
    kubectl.run("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "Node",
                                                       "metadata": {"name": node}}))
    try:
        for name in ("test-pod-1", "test-pod-2"):
            _ready_pod(kubectl, namespace, name, {"type": "test-pod"}, node=node)
        kubectl.run("-n", namespace, "create", "pdb", "tp", "--selector=type=test-pod", "--min-available=1")
        _budget_status(kubectl, namespace, "tp", 1)
        out = kubectl.run("drain", node, "--force", "--pod-selector=type=test-pod", "--timeout=4s",
                          "--skip-wait-for-delete-timeout=1", check=False)
        assert out.returncode != 0
        assert "evicting pod" in out.stdout + out.stderr
        assert "Cannot evict pod as it would violate the pod's disruption budget." in out.stderr
        pods = _get(kubectl, "-n", namespace, "get", "pods")["items"]
        deleting = sorted(bool(p["metadata"].get("deletionTimestamp")) for p in pods)
        assert deleting == [False, True]  # one eviction went through, the budget kept the other pod
    finally:
        kubectl.run("delete", "node", node, "--wait=false")
