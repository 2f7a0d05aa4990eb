"""networking.k8s.io/v1 ServiceCIDR and IPAddress: kube's validation messages (ValidateServiceCIDR,
ValidateServiceCIDRUpdate, ValidateIPAddressName, ValidateIPAddress, ValidateIPAddressUpdate), strict IP/CIDR
parsing (apimachinery validation/ip.go), the printers, the IPAddress objects mirroring clusterIPs."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import resources
from kapi.kinds import strategy_for
from kapi.objectmeta import name_rule
from kapi.validation import is_valid_cidr, is_valid_ip
from services.gateway.printers_more import MORE_PRINTERS
from services.gateway.registry import ipaddresses

CIDR = strategy_for("networking.k8s.io", "ServiceCIDR")
IP = strategy_for("networking.k8s.io", "IPAddress")


def _cidr(*cidrs: str) -> dict[str, Any]:
    return {"metadata": {"name": "c"}, "spec": {"cidrs": list(cidrs)}}


def _msgs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


@pytest.mark.parametrize(("value", "want"), [
    ("10.0.0.1", []),
    ("2001:db8::1", []),
    ("010.0.0.1", ["must not have leading 0s"]),
    ("::ffff:1.2.3.4", ["must not be an IPv4-mapped IPv6 address"]),
    ("2001:DB8:0::1", ['must be in canonical form ("2001:db8::1")']),
    ("fe80::1%eth0", ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]),
    ("foo", ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]),
])
def test_is_valid_ip_is_strict(value: str, want: list[str]) -> None:
    assert is_valid_ip(value) == want


@pytest.mark.parametrize(("value", "want"), [
    ("10.96.0.0/12", []),
    ("2001:db8::/64", []),
    ("10.96.0.1/12", ["must not have bits set beyond the prefix length"]),
    ("010.96.0.0/12", ["must not have leading 0s in IP or prefix length"]),
    ("10.96.0.0/012", ["must not have leading 0s in IP or prefix length"]),
    ("::ffff:10.0.0.0/104", ["must not have an IPv4-mapped IPv6 address"]),
    ("2001:DB8::/64", ['must be in canonical form ("2001:db8::/64")']),
    ("10.96.0.0/33", ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]),
    ("10.96.0.0", ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]),
])
def test_is_valid_cidr_is_strict(value: str, want: list[str]) -> None:
    assert is_valid_cidr(value) == want


def test_service_cidr_spec_validation() -> None:
    assert CIDR.validate(_cidr("10.0.0.0/24")) == []
    assert CIDR.validate(_cidr("10.0.0.0/24", "2001:db8::/64")) == []
    assert _msgs(CIDR.validate(_cidr())) == [("spec.cidrs", "Required value: at least one CIDR required")]
    assert _msgs(CIDR.validate(_cidr("10.0.0.0/24", "10.1.0.0/24", "10.2.0.0/24"))) == [(
        "spec.cidrs", 'Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{"10.0.0.0/24", "10.1.0.0/24", '
        '"10.2.0.0/24"}}: may only hold up to 2 values')]
    assert _msgs(CIDR.validate(_cidr("10.0.0.0/24", "10.1.0.0/24"))) == [(
        "spec.cidrs", 'Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24"}: may specify no more than one IP for '
        "each IP family, i.e 192.168.0.0/24 and 2001:db8::/64")]
    assert _msgs(CIDR.validate(_cidr("10.0.0.1/24"))) == [
        ("spec.cidrs[0]", 'Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length')]


def test_service_cidr_update_rules() -> None:
    old = _cidr("10.0.0.0/24")
    assert CIDR.validate_again(_cidr("bad"), old) == []  # ValidateUpdate does not re-run ValidateServiceCIDR
    assert CIDR.validate_update(_cidr("10.0.0.0/24"), old) == []
    assert _msgs(CIDR.validate_update(_cidr("10.1.0.0/24"), old)) == [
        ("spec.cidrs[0]", 'Invalid value: "10.1.0.0/24": field is immutable')]
    assert CIDR.validate_update(_cidr("10.0.0.0/24", "2001:db8::/64"), old) == []  # adding the second family
    assert _msgs(CIDR.validate_update(_cidr("10.0.0.0/24", "10.2.0.0/24"), old))[0][0] == "spec.cidrs"
    assert _msgs(CIDR.validate_update(_cidr("10.1.0.0/24", "2001:db8::/64"), old)) == [
        ("spec.cidrs[0]", 'Invalid value: "10.1.0.0/24": field is immutable')]
    both = _cidr("10.0.0.0/24", "2001:db8::/64")
    assert _msgs(CIDR.validate_update(old, both)) == [
        ("spec.cidrs", 'Invalid value: []string{"10.0.0.0/24"}: field is immutable')]
    assert CIDR.validate_update(_cidr("10.9.0.0/24"), old, "status") == []  # the status strategy keeps the spec


def test_service_cidr_status_is_a_struct_and_no_generation() -> None:
    assert CIDR.status_zero == {} and not CIDR.keeps_status_on_create
    assert not CIDR.tracks_generation and not IP.tracks_generation


def _ip(ip: str, **ref: str) -> dict[str, Any]:
    return {"metadata": {"name": ip}, "spec": {"parentRef": ref} if ref else {}}


def test_ip_address_name_is_a_canonical_ip() -> None:
    row = resources.REGISTRY.get("networking.k8s.io", "v1", "ipaddresses")
    assert row is not None
    rule = name_rule(row)
    assert rule("192.168.1.5", False) == []
    assert rule("2001:db8::1", False) == []
    assert rule("2001:db8:0::1", False) == ['must be in canonical form ("2001:db8::1")']
    assert rule("192.168.001.5", False) == ["must not have leading 0s"]
    assert rule("web", False) == ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]


def test_ip_address_parent_ref_validation() -> None:
    assert IP.validate(_ip("10.0.0.1", resource="services", name="web", namespace="default")) == []
    assert _msgs(IP.validate(_ip("10.0.0.1"))) == [("spec.parentRef", "Required value")]
    assert _msgs(IP.validate(_ip("10.0.0.1", group="Bad_Group", namespace="a/b"))) == [
        ("spec.parentRef.group", 'Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower '
         "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
         "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
         "[a-z0-9])?)*')"),
        ("spec.parentRef.resource", "Required value"),
        ("spec.parentRef.name", "Required value"),
        ("spec.parentRef.namespace", "Invalid value: \"a/b\": may not contain '/'"),
    ]


def test_ip_address_parent_ref_is_immutable() -> None:
    old = _ip("10.0.0.1", resource="services", name="web", namespace="default")
    assert IP.validate_update(_ip("10.0.0.1", resource="services", name="web", namespace="default"), old) == []
    assert _msgs(IP.validate_update(_ip("10.0.0.1", resource="services", name="api", namespace="default"), old)) == [
        ("spec.parentRef", 'Invalid value: networking.ParentReference{Group:"", Resource:"services", '
         'Namespace:"default", Name:"api"}: field is immutable')]
    assert _msgs(IP.validate_update(_ip("10.0.0.1"), old)) == [
        ("spec.parentRef", 'Invalid value: "null": field is immutable')]


def test_served_rows_and_printers() -> None:
    cidrs = resources.REGISTRY.get("networking.k8s.io", "v1", "servicecidrs")
    ips = resources.REGISTRY.get("networking.k8s.io", "v1", "ipaddresses")
    assert cidrs is not None and ips is not None
    assert (cidrs.namespaced, cidrs.short_names, cidrs.subresources) == (False, (), ("status",))
    assert (ips.namespaced, ips.short_names, ips.subresources) == (False, ("ip",), ())
    printer = MORE_PRINTERS[("networking.k8s.io", "servicecidrs")]
    assert [c.name for c in printer.columns] == ["CIDRs"] and printer.with_age
    assert printer.cells(_cidr("10.0.0.0/24", "2001:db8::/64")) == ["10.0.0.0/24,2001:db8::/64"]
    printer = MORE_PRINTERS[("networking.k8s.io", "ipaddresses")]
    assert [c.name for c in printer.columns] == ["ParentRef"] and not printer.with_age
    assert printer.cells(_ip("10.0.0.1", resource="services", namespace="default", name="web")) == [
        "services/default/web"]
    assert printer.cells(_ip("10.0.0.1", group="Gateway.Networking.k8s.io", resource="Gateways", name="g")) == [
        "gateways.gateway.networking.k8s.io/g"]
    assert printer.cells(_ip("10.0.0.1")) == ["<none>"]


def test_ip_address_object_and_default_service_cidr() -> None:
    obj = ipaddresses.ip_address_object("10.96.0.10", "default", "web", "2026-01-01T00:00:00Z")
    assert obj["metadata"]["labels"] == {"ipaddress.kubernetes.io/ip-family": "IPv4",
                                         "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}
    assert obj["spec"] == {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "web"}}
    assert ipaddresses.ip_address_object("2001:db8::a", "d", "w")["metadata"]["labels"][
        "ipaddress.kubernetes.io/ip-family"] == "IPv6"
    assert IP.validate(obj) == []
    cidr = ipaddresses.default_service_cidr("10.96.0.0/12", "2026-01-01T00:00:00Z")
    assert cidr["metadata"]["name"] == "kubernetes" and cidr["spec"] == {"cidrs": ["10.96.0.0/12"]}
    assert cidr["status"]["conditions"] == [{"type": "Ready", "status": "True",
                                             "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "",
                                             "message": "Kubernetes default Service CIDR is ready"}]
    assert CIDR.validate(cidr) == []
    assert ipaddresses.cluster_ips({"spec": {"clusterIP": "None", "clusterIPs": ["None"]}}) == []
    assert ipaddresses.cluster_ips({"spec": {"clusterIP": "10.0.0.1"}}) == ["10.0.0.1"]
