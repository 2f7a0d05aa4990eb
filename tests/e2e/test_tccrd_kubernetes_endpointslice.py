"""The ``kubernetes`` Service's EndpointSlice, as kube-apiserver's endpoint reconciler writes it next to the
Endpoints (pkg/controlplane/reconcilers/endpointsadapter.go): ``kubectl get endpointslices -n default`` lists it, and
a deleted one comes back. Found replaying kube's kubectl test scripts (get.sh's ``get all`` in ``default``)."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Kubectl, wait_for


def _slice(kubectl: Kubectl) -> dict[str, Any]:
    return dict(json.loads(kubectl.run("-n", "default", "get", "endpointslice", "kubernetes", "-o", "json").stdout))


def test_the_kubernetes_endpointslice_matches_the_endpoints(kubectl: Kubectl) -> None:
    got = wait_for(lambda: _slice(kubectl))
    endpoints = json.loads(kubectl.run("-n", "default", "get", "endpoints", "kubernetes", "-o", "json").stdout)
    subset = endpoints["subsets"][0]
    assert got["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert got["metadata"]["generation"] == 1
    assert got["addressType"] == "IPv4"
    assert got["endpoints"] == [{"addresses": [a["ip"]], "conditions": {"ready": True}} for a in subset["addresses"]]
    assert got["ports"] == [{"name": p["name"], "protocol": p["protocol"], "port": p["port"]} for p in subset["ports"]]
    table = kubectl.run("-n", "default", "get", "endpointslices", "-l", "kubernetes.io/service-name=kubernetes",
                        "--no-headers").stdout.split()
    assert table[:4] == ["kubernetes", "IPv4", str(subset["ports"][0]["port"]), subset["addresses"][0]["ip"]]


def test_a_deleted_kubernetes_endpointslice_comes_back(kubectl: Kubectl) -> None:
    old = wait_for(lambda: _slice(kubectl))["metadata"]["uid"]
    kubectl.run("-n", "default", "delete", "endpointslice", "kubernetes")
    back = wait_for(lambda: (got := _slice(kubectl))["metadata"]["uid"] != old and got, timeout=30)
    assert back["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
