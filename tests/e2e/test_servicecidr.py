"""networking.k8s.io/v1 ServiceCIDR and IPAddress end to end (kube 1.33+, MultiCIDRServiceAllocator): discovery,
the default ``kubernetes`` ServiceCIDR (Ready), the IPAddress of every allocated clusterIP, kube's printer columns
and validation messages, with real kubectl and the official Python client."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for

MANAGED = {"ipaddress.kubernetes.io/ip-family": "IPv4", "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}


@pytest.fixture(scope="module")
def networking(stack: Stack) -> client.NetworkingV1Api:
    return client.NetworkingV1Api(config.new_client_from_config(config_file=str(stack.kubeconfig)))


def _get(kubectl: Kubectl, *what: str) -> dict:
    return json.loads(kubectl.run("get", *what, "-o", "json").stdout)


def _apply_fails(kubectl: Kubectl, obj: dict, *verb: str) -> str:
    proc = kubectl.run(*(verb or ("create",)), "-f", "-", input=json.dumps(obj), check=False)
    assert proc.returncode != 0, proc.stdout
    return proc.stderr.strip()


def test_discovery_rows(kubectl: Kubectl) -> None:
    rows = {line.split()[0]: line.split() for line in
            kubectl.run("api-resources", "--api-group=networking.k8s.io").stdout.splitlines()[1:]}
    assert rows["servicecidrs"] == ["servicecidrs", "networking.k8s.io/v1", "false", "ServiceCIDR"]
    assert rows["ipaddresses"] == ["ipaddresses", "ip", "networking.k8s.io/v1", "false", "IPAddress"]


def test_default_service_cidr_is_ready(kubectl: Kubectl, networking: client.NetworkingV1Api) -> None:
    cidr = networking.read_service_cidr("kubernetes")
    assert cidr.spec is not None and cidr.status is not None
    assert cidr.spec.cidrs == ["10.96.0.0/12"]  # --service-cluster-ip-range
    ready = [c for c in cidr.status.conditions or [] if c.type == "Ready"]
    assert len(ready) == 1 and ready[0].status == "True"
    # kube-apiserver writes "Kubernetes default Service CIDR is ready"; kube-controller-manager's
    # service-cidr-controller then applies its own message and finalizer, as on a cluster
    final = wait_for(lambda: (lambda c: c if (c["status"]["conditions"][0]["message"], c["metadata"].get("finalizers"))
                              == ("Kubernetes Service CIDR is ready", ["networking.k8s.io/service-cidr-finalizer"])
                              else None)(_get(kubectl, "servicecidr", "kubernetes", "--show-managed-fields")))
    assert [(c["type"], c["status"], c.get("reason")) for c in final["status"]["conditions"]] == [
        ("Ready", "True", "")]  # metav1.Condition writes an empty reason
    assert {m["manager"]: m.get("subresource") for m in final["metadata"]["managedFields"]
            if m["operation"] == "Apply"} == {"service-cidr-controller": "status"}
    table = kubectl.run("get", "servicecidrs").stdout.splitlines()
    assert table[0].split() == ["NAME", "CIDRS", "AGE"]
    assert any(line.split()[:2] == ["kubernetes", "10.96.0.0/12"] for line in table[1:])
    kubernetes_ip = _get(kubectl, "ipaddress", "10.96.0.1")  # the kubernetes Service's clusterIP
    assert kubernetes_ip["spec"]["parentRef"] == {"group": "", "resource": "services", "namespace": "default",
                                                  "name": "kubernetes"}


def test_service_ip_gets_an_ipaddress_removed_on_delete(kubectl: Kubectl, namespace: str,
                                                        networking: client.NetworkingV1Api) -> None:
    kubectl.run("-n", namespace, "create", "service", "clusterip", "web", "--tcp=80:8080")
    ip = _get(kubectl, "-n", namespace, "service", "web")["spec"]["clusterIP"]
    obj = wait_for(lambda: _get(kubectl, "ipaddress", ip))
    assert obj["metadata"]["labels"] == MANAGED
    assert obj["spec"]["parentRef"] == {"group": "", "resource": "services", "namespace": namespace, "name": "web"}
    listed = {i.metadata.name if i.metadata else "" for i in networking.list_ip_address(
        label_selector="ipaddress.kubernetes.io/managed-by=ipallocator.k8s.io").items}
    assert ip in listed
    table = kubectl.run("get", "ipaddresses", ip).stdout.splitlines()
    assert table[0].split() == ["NAME", "PARENTREF"]
    assert table[1].split() == [ip, f"services/{namespace}/web"]

    # The IP stays taken: a second Service asking for it fails as before.
    proc = kubectl.run("-n", namespace, "create", "service", "clusterip", "copy", "--tcp=80:8080",
                       f"--clusterip={ip}", check=False)
    assert proc.returncode != 0
    assert (f'Service "copy" is invalid: spec.clusterIPs: Invalid value: []string{{"{ip}"}}: failed to allocate IP '
            f"{ip}: provided IP is already allocated") in proc.stderr, proc.stderr  # alloc.go allocIPs

    # Turning it into an ExternalName Service releases the IP, and its IPAddress.
    kubectl.run("-n", namespace, "patch", "service", "web", "--type=merge", "-p",
                json.dumps({"spec": {"type": "ExternalName", "externalName": "example.com", "clusterIP": "",
                                     "clusterIPs": None}}))
    wait_for(lambda: kubectl.run("get", "ipaddress", ip, check=False).returncode != 0)

    kubectl.run("-n", namespace, "create", "service", "clusterip", "api", "--tcp=80:8080")
    api_ip = _get(kubectl, "-n", namespace, "service", "api")["spec"]["clusterIP"]
    wait_for(lambda: _get(kubectl, "ipaddress", api_ip))
    kubectl.run("-n", namespace, "delete", "service", "api")
    wait_for(lambda: kubectl.run("get", "ipaddress", api_ip, check=False).returncode != 0)


def test_headless_service_has_no_ipaddress(kubectl: Kubectl, namespace: str) -> None:
    before = {i["metadata"]["name"] for i in _get(kubectl, "ipaddresses")["items"]}
    kubectl.run("-n", namespace, "create", "service", "clusterip", "headless", "--clusterip=None")
    after = {i["metadata"]["name"] for i in _get(kubectl, "ipaddresses")["items"]
             if i["spec"]["parentRef"].get("namespace") == namespace}
    assert after == set() and "None" not in before


def test_service_cidr_validation_and_status(kubectl: Kubectl) -> None:
    def cidr(name: str, *cidrs: str, **extra: object) -> dict:
        return {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": name},
                "spec": {"cidrs": list(cidrs)}, **extra}

    assert _apply_fails(kubectl, cidr("e2e-bad", "10.200.0.1/24")) == (
        'The ServiceCIDR "e2e-bad" is invalid: spec.cidrs[0]: Invalid value: "10.200.0.1/24": must not have bits '
        "set beyond the prefix length")
    assert _apply_fails(kubectl, cidr("e2e-bad", "10.200.0.0/24", "10.201.0.0/24")) == (
        'The ServiceCIDR "e2e-bad" is invalid: spec.cidrs: Invalid value: []string{"10.200.0.0/24", "10.201.0.0/24"}: '
        "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64")
    assert _apply_fails(kubectl, cidr("e2e-bad")) == (
        'The ServiceCIDR "e2e-bad" is invalid: spec.cidrs: Required value: at least one CIDR required')

    status = {"conditions": [{"type": "Ready", "status": "True", "reason": "Mine", "message": "x",
                              "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    created = json.loads(kubectl.run("create", "-o", "json", "-f", "-",
                                     input=json.dumps(cidr("e2e-extra", "10.200.0.0/24", status=status))).stdout)
    try:
        assert created.get("status") in ({}, None)  # status reset on create (ServiceCIDRStatusFieldWiping)
        assert "generation" not in created["metadata"]
        proc = kubectl.run("patch", "servicecidr", "e2e-extra", "--type=merge", "-p",
                           json.dumps({"spec": {"cidrs": ["10.201.0.0/24"]}}), check=False)
        assert proc.returncode != 0
        assert ('The ServiceCIDR "e2e-extra" is invalid: spec.cidrs[0]: Invalid value: "10.201.0.0/24": field is '
                "immutable") in proc.stderr, proc.stderr
        kubectl.run("patch", "servicecidr", "e2e-extra", "--type=merge", "-p",
                    json.dumps({"spec": {"cidrs": ["10.200.0.0/24", "fd00:10:96::/112"]}}))  # adds the second family
        kubectl.run("patch", "servicecidr", "e2e-extra", "--subresource=status", "--type=merge", "-p",
                    json.dumps({"status": status, "spec": {"cidrs": ["10.9.0.0/24"]}}))
        kubectl.run("patch", "servicecidr", "e2e-extra", "--type=merge", "-p",
                    json.dumps({"status": {"conditions": []}}))  # the main resource keeps the status
        got = _get(kubectl, "servicecidr", "e2e-extra")
        assert got["spec"]["cidrs"] == ["10.200.0.0/24", "fd00:10:96::/112"]
        assert [c["reason"] for c in got["status"]["conditions"]] == ["Mine"]
    finally:
        kubectl.run("delete", "servicecidr", "e2e-extra", "--wait=false")


def test_ip_address_validation(kubectl: Kubectl) -> None:
    def ip(name: str, spec: dict) -> dict:
        return {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": name}, "spec": spec}

    ref = {"group": "", "resource": "services", "namespace": "default", "name": "elsewhere"}
    assert _apply_fails(kubectl, ip("2001:db8:0::7", {"parentRef": ref})) == (
        'The IPAddress "2001:db8:0::7" is invalid: metadata.name: Invalid value: "2001:db8:0::7": must be in '
        'canonical form ("2001:db8::7")')
    assert _apply_fails(kubectl, ip("192.168.7.7", {})) == (
        'The IPAddress "192.168.7.7" is invalid: spec.parentRef: Required value')
    assert _apply_fails(kubectl, ip("192.168.7.7", {"parentRef": {"group": ""}})) == (
        'The IPAddress "192.168.7.7" is invalid: \n* spec.parentRef.resource: Required value\n'
        "* spec.parentRef.name: Required value")
    kubectl.run("create", "-f", "-", input=json.dumps(ip("192.168.7.7", {"parentRef": ref})))
    try:
        proc = kubectl.run("patch", "ipaddress", "192.168.7.7", "--type=merge", "-p",
                           json.dumps({"spec": {"parentRef": {"name": "other"}}}), check=False)
        assert proc.returncode != 0
        assert ('The IPAddress "192.168.7.7" is invalid: spec.parentRef: Invalid value: networking.ParentReference'
                '{Group:"", Resource:"services", Namespace:"default", Name:"other"}: field is immutable'
                ) in proc.stderr, proc.stderr
    finally:
        kubectl.run("delete", "ipaddress", "192.168.7.7")
