"""Break-it pass over ServiceCIDR/IPAddress, refusal warnings, CRD conditions, Job status and pod validation
(session C): each test pins one bug found by using the stack as a kube-apiserver 1.37 user would, with the
pinned kubectl and the official Python client, and asserts kube's behaviour."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for


@pytest.fixture(scope="module")
def api(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(stack.kubeconfig))


def _get(kubectl: Kubectl, *what: str) -> dict:
    return json.loads(kubectl.run("get", *what, "-o", "json").stdout)


def _absent(kubectl: Kubectl, *what: str) -> bool:
    proc = kubectl.run("get", *what, check=False)
    return proc.returncode != 0 and "NotFound" in proc.stderr


def test_service_deleted_by_removing_its_last_finalizer_releases_ip_port_and_ipaddress(
        kubectl: Kubectl, namespace: str) -> None:
    # kube's Service REST releases allocations in AfterDelete, which the generic store also runs when an update
    # clearing the last finalizer deletes the object (kubernetes issue 87603, PR 90753)
    kubectl.run("-n", namespace, "create", "service", "nodeport", "held", "--tcp=80")
    svc = _get(kubectl, "-n", namespace, "service", "held")
    ip, port = svc["spec"]["clusterIP"], svc["spec"]["ports"][0]["nodePort"]
    wait_for(lambda: _get(kubectl, "ipaddress", ip))
    kubectl.run("-n", namespace, "patch", "service", "held", "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    kubectl.run("-n", namespace, "delete", "service", "held", "--wait=false")
    assert _get(kubectl, "ipaddress", ip)["spec"]["parentRef"]["name"] == "held"  # still held while pending
    kubectl.run("-n", namespace, "patch", "service", "held", "--type=json",
                "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    assert _absent(kubectl, "-n", namespace, "service", "held")
    wait_for(lambda: _absent(kubectl, "ipaddress", ip))
    again = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "again", "namespace": namespace},
             "spec": {"type": "NodePort", "clusterIP": ip, "ports": [{"port": 80, "nodePort": port}]}}
    kubectl.run("create", "-f", "-", input=json.dumps(again))  # was: 422 provided IP is already allocated
    owner = wait_for(lambda: _get(kubectl, "ipaddress", ip))
    assert owner["spec"]["parentRef"] == {"group": "", "resource": "services", "namespace": namespace,
                                          "name": "again"}


def test_external_name_back_to_cluster_ip_gets_a_cluster_ip(kubectl: Kubectl, namespace: str) -> None:
    # kubectl patch to ExternalName with clusterIP "" (Go's omitempty never stores it), then back to ClusterIP:
    # kube allocates a new clusterIP (was: the Service kept clusterIP "" and no IP, no IPAddress)
    kubectl.run("-n", namespace, "create", "service", "clusterip", "flip", "--tcp=80")
    kubectl.run("-n", namespace, "patch", "service", "flip", "-p", json.dumps(
        {"spec": {"type": "ExternalName", "externalName": "db.example.com", "clusterIP": "", "clusterIPs": None}}))
    kubectl.run("-n", namespace, "patch", "service", "flip", "-p",
                '{"spec":{"type":"ClusterIP","externalName":null}}')
    spec = _get(kubectl, "-n", namespace, "service", "flip")["spec"]
    assert spec["clusterIP"] not in ("", "None") and spec["clusterIPs"] == [spec["clusterIP"]]
    owner = wait_for(lambda: _get(kubectl, "ipaddress", spec["clusterIP"]))
    assert owner["spec"]["parentRef"]["name"] == "flip"
