"""What the gateways create at start, as kube-apiserver's bootstrap controllers and post-start hooks do: the
system namespaces, the ``kubernetes`` Service and its Endpoints, the two system PriorityClasses."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl, wait_for


def _get(kubectl: Kubectl, *what: str) -> dict:
    return json.loads(kubectl.run("get", *what, "-o", "json").stdout)


def test_system_namespaces_exist_active(kubectl: Kubectl) -> None:
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        ns = _get(kubectl, "namespace", name)
        assert ns["status"]["phase"] == "Active" and ns["spec"]["finalizers"] == ["kubernetes"]
        assert ns["metadata"]["labels"]["kubernetes.io/metadata.name"] == name


def test_kubernetes_service_has_the_first_cluster_ip_and_endpoints(kubectl: Kubectl) -> None:
    svc = _get(kubectl, "-n", "default", "service", "kubernetes")
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["clusterIP"] == "10.96.0.1"  # the first address of --service-cluster-ip-range
    assert [(p["name"], p["port"]) for p in svc["spec"]["ports"]] == [("https", 443)]
    endpoints = wait_for(lambda: _get(kubectl, "-n", "default", "endpoints", "kubernetes"))
    assert endpoints["subsets"][0]["ports"][0]["name"] == "https"


def test_system_priority_classes_exist(kubectl: Kubectl) -> None:
    classes = {c["metadata"]["name"]: c for c in _get(kubectl, "priorityclasses")["items"]}
    assert classes["system-node-critical"]["value"] == 2000001000
    assert classes["system-cluster-critical"]["value"] == 2000000000
    assert classes["system-cluster-critical"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_system_priority_classes_cannot_be_deleted(kubectl: Kubectl) -> None:
    """kube's REST.Delete: 403 for either system class, with or without dry run; other classes delete."""
    for extra in ((), ("--dry-run=server",)):
        proc = kubectl.run("delete", "priorityclass", "system-node-critical", *extra, check=False)
        assert proc.returncode != 0
        assert ('priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority '
                "class and cannot be deleted") in proc.stderr, proc.stderr
    assert _get(kubectl, "priorityclass", "system-node-critical")["value"] == 2000001000
    kubectl.run("create", "priorityclass", "bootstrap-test-deletable", "--value=10")
    kubectl.run("delete", "priorityclass", "bootstrap-test-deletable")
