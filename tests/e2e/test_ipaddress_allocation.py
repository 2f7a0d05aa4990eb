"""IPAddress objects as the clusterIP allocation state, end to end with real kubectl (kube 1.33+,
MultiCIDRServiceAllocator GA: ``pkg/registry/core/service/ipallocator/ipallocator.go``, ``cidrallocator.go``,
``pkg/registry/core/service/storage/alloc.go`` allocIPs).

A hand-made IPAddress reserves its IP; a user's Ready ServiceCIDR lends its IPs to Services asking for one; an IP
outside every Ready ServiceCIDR is refused with kube's message. The stack is shared: every name and range here is
unique to the run, and the ServiceCIDR and IPAddresses are removed at the end.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Kubectl, wait_for

RNG = random.Random()
# an IP of the flag's range (10.96.0.0/12) that no other test asks for, and a /24 outside it
HAND_MADE_IP = f"10.110.{RNG.randrange(1, 255)}.{RNG.randrange(2, 255)}"
EXTRA_NET = f"10.{RNG.randrange(200, 250)}.{RNG.randrange(0, 256)}"
EXTRA_CIDR_NAME = f"extra-{RNG.randrange(10**6)}"


def _service(name: str, ip: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                       "spec": {"clusterIP": ip, "ports": [{"port": 80}]}})


def _get(kubectl: Kubectl, *what: str) -> dict:
    return json.loads(kubectl.run("get", *what, "-o", "json").stdout)


def _refused(kubectl: Kubectl, namespace: str, name: str, ip: str) -> str:
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=_service(name, ip), check=False)
    assert proc.returncode != 0, proc.stdout
    return proc.stderr.strip()


@pytest.fixture
def cleanup(kubectl: Kubectl) -> Iterator[None]:
    yield
    kubectl.run("delete", "ipaddress", HAND_MADE_IP, "--ignore-not-found", "--wait=false", check=False)
    kubectl.run("delete", "servicecidr", EXTRA_CIDR_NAME, "--ignore-not-found", "--wait=false", check=False)


def test_a_hand_made_ip_address_reserves_its_ip(kubectl: Kubectl, namespace: str, cleanup: None) -> None:
    hand_made = {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": HAND_MADE_IP},
                 "spec": {"parentRef": {"group": "", "resource": "services", "namespace": namespace,
                                        "name": "ghost"}}}
    kubectl.run("create", "-f", "-", input=json.dumps(hand_made))
    assert _refused(kubectl, namespace, "x", HAND_MADE_IP) == (
        f'The Service "x" is invalid: spec.clusterIPs: Invalid value: []string{{"{HAND_MADE_IP}"}}: failed to '
        f"allocate IP {HAND_MADE_IP}: provided IP is already allocated")
    # a dry run is refused alike; the hand-made object is untouched
    proc = kubectl.run("-n", namespace, "create", "--dry-run=server", "-f", "-",
                       input=_service("x", HAND_MADE_IP), check=False)
    assert proc.returncode != 0 and "provided IP is already allocated" in proc.stderr
    assert _get(kubectl, "ipaddress", HAND_MADE_IP)["spec"]["parentRef"]["name"] == "ghost"
    # once it is deleted the IP is free
    kubectl.run("delete", "ipaddress", HAND_MADE_IP)
    kubectl.run("-n", namespace, "create", "-f", "-", input=_service("x", HAND_MADE_IP))
    owned = wait_for(lambda: _get(kubectl, "ipaddress", HAND_MADE_IP))
    assert owned["spec"]["parentRef"] == {"group": "", "resource": "services", "namespace": namespace, "name": "x"}
    kubectl.run("-n", namespace, "delete", "service", "x")
    wait_for(lambda: kubectl.run("get", "ipaddress", HAND_MADE_IP, check=False).returncode != 0)


def test_a_user_service_cidr_lends_its_ips(kubectl: Kubectl, namespace: str, cleanup: None) -> None:
    outside = _refused(kubectl, namespace, "far", "1.2.3.4")
    assert outside == ('The Service "far" is invalid: spec.clusterIPs: Invalid value: []string{"1.2.3.4"}: failed '
                       "to allocate IP 1.2.3.4: the provided network does not match the current range")
    ip = f"{EXTRA_NET}.10"
    assert "the provided network does not match the current range" in _refused(kubectl, namespace, "near", ip)

    cidr = {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": EXTRA_CIDR_NAME},
            "spec": {"cidrs": [f"{EXTRA_NET}.0/24"]}}
    kubectl.run("create", "-f", "-", input=json.dumps(cidr))
    wait_for(lambda: any(c["type"] == "Ready" and c["status"] == "True" for c in
                         (_get(kubectl, "servicecidr", EXTRA_CIDR_NAME).get("status") or {}).get("conditions", [])))
    assert _refused(kubectl, namespace, "net", f"{EXTRA_NET}.0") == (
        f'The Service "net" is invalid: spec.clusterIPs: Invalid value: []string{{"{EXTRA_NET}.0"}}: failed to '
        f"allocate IP {EXTRA_NET}.0: the provided IP ({EXTRA_NET}.0) is not in the valid range. The range of valid "
        f"IPs is {EXTRA_NET}.0/24")

    # a dry run reserves nothing
    dry = json.loads(kubectl.run("-n", namespace, "create", "--dry-run=server", "-o", "json", "-f", "-",
                                 input=_service("near", ip)).stdout)
    assert dry["spec"]["clusterIPs"] == [ip]
    assert kubectl.run("get", "ipaddress", ip, check=False).returncode != 0

    kubectl.run("-n", namespace, "create", "-f", "-", input=_service("near", ip))
    svc = _get(kubectl, "-n", namespace, "service", "near")
    assert (svc["spec"]["clusterIP"], svc["spec"]["clusterIPs"]) == (ip, [ip])
    held = _get(kubectl, "ipaddress", ip)
    assert held["metadata"]["labels"] == {"ipaddress.kubernetes.io/ip-family": "IPv4",
                                          "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}
    assert held["spec"]["parentRef"] == {"group": "", "resource": "services", "namespace": namespace,
                                         "name": "near"}
    assert _refused(kubectl, namespace, "twin", ip) == (
        f'The Service "twin" is invalid: spec.clusterIPs: Invalid value: []string{{"{ip}"}}: failed to allocate IP '
        f"{ip}: provided IP is already allocated")

    # deleting the Service releases the IP (its IPAddress goes), and the ServiceCIDR may then go
    kubectl.run("-n", namespace, "delete", "service", "near")
    wait_for(lambda: kubectl.run("get", "ipaddress", ip, check=False).returncode != 0)
    kubectl.run("delete", "servicecidr", EXTRA_CIDR_NAME, timeout=60)
    assert kubectl.run("get", "servicecidr", EXTRA_CIDR_NAME, check=False).returncode != 0
