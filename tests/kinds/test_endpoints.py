"""kapi.kinds.endpoints: kube 1.37's ValidateEndpoints, cause for cause."""

from __future__ import annotations

from kapi.kinds.endpoints import (
    validate_endpoint_ip,
    validate_endpoints,
    validate_endpoints_create,
    validate_endpoints_update,
)
from kapi.validation import VALID_IP_MSG

DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                 "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def pairs(causes):
    return [(c.field, c.message) for c in causes]


def endpoints(*subsets):
    return {"metadata": {"name": "svc", "namespace": "default"}, "subsets": list(subsets)}


def test_valid_endpoints():
    obj = endpoints({"addresses": [{"ip": "10.0.0.1", "hostname": "a", "nodeName": "node-1",
                                    "targetRef": {"kind": "Pod", "name": "Whatever_Name"}}],
                     "notReadyAddresses": [{"ip": "2001:DB8::1"}],
                     "ports": [{"name": "http", "port": 80, "protocol": "TCP", "appProtocol": "kubernetes.io/h2c"},
                               {"name": "dns", "port": 53, "protocol": "UDP"}]})
    assert validate_endpoints_create(obj) == []
    assert validate_endpoints_create(endpoints()) == []
    assert validate_endpoints_create({"metadata": {}}) == []


def test_subset_needs_an_address():
    assert pairs(validate_endpoints_create(endpoints({"ports": [{"port": 80, "protocol": "TCP"}]}))) == [
        ("subsets[0]", "Required value: must specify `addresses` or `notReadyAddresses`")]


def test_address_rules():
    obj = endpoints({"addresses": [{"ip": "010.0.0.1", "hostname": "Host_1", "nodeName": "Node 1"},
                                   {"ip": ""}],
                     "notReadyAddresses": [{"ip": "::ffff:1.2.3.4", "nodeName": ""}]})
    assert pairs(validate_endpoints_create(obj)) == [
        ("subsets[0].addresses[0].ip", 'Invalid value: "010.0.0.1": must not have leading 0s'),
        ("subsets[0].addresses[0].hostname", f'Invalid value: "Host_1": {DNS_LABEL}'),
        ("subsets[0].addresses[0].nodeName", f'Invalid value: "Node 1": {DNS_SUBDOMAIN}'),
        ("subsets[0].addresses[1].ip", f'Invalid value: "": {VALID_IP_MSG}'),
        ("subsets[0].addresses[1].ip", 'Invalid value: "": must be a valid IP address'),
        ("subsets[0].notReadyAddresses[0].ip",
         'Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address'),
        ("subsets[0].notReadyAddresses[0].nodeName", f'Invalid value: "": {DNS_SUBDOMAIN}'),
    ]


def test_special_ips():
    cases = {
        "0.0.0.0": ["may not be unspecified (0.0.0.0)"],
        "::": ["may not be unspecified (::)"],
        "127.0.0.2": ["may not be in the loopback range (127.0.0.0/8, ::1/128)"],
        "::1": ["may not be in the loopback range (127.0.0.0/8, ::1/128)"],
        "169.254.1.1": ["may not be in the link-local range (169.254.0.0/16, fe80::/10)"],
        "fe80::1": ["may not be in the link-local range (169.254.0.0/16, fe80::/10)"],
        "224.0.0.1": ["may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"],
        "ff02::1": ["may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"],
        "::ffff:127.0.0.1": ["may not be in the loopback range (127.0.0.0/8, ::1/128)"],
        "224.0.1.1": [], "ff05::1": [], "10.1.2.3": [],
        "nope": ["must be a valid IP address"],
    }
    for ip, messages in cases.items():
        assert pairs(validate_endpoint_ip(ip, "p")) == [("p", f'Invalid value: "{ip}": {m}') for m in messages], ip


def test_port_rules():
    obj = endpoints({"addresses": [{"ip": "10.0.0.1"}],
                     "ports": [{"port": 0, "protocol": "TCP"}, {"name": "Bad_Name", "port": 70000, "protocol": "ICMP"},
                               {"name": "p", "port": 1, "protocol": "", "appProtocol": "a/b/c"}]})
    assert pairs(validate_endpoints_create(obj)) == [
        ("subsets[0].ports[0].name", "Required value"),
        ("subsets[0].ports[0].port", "Invalid value: 0: must be between 1 and 65535, inclusive"),
        ("subsets[0].ports[1].name", f'Invalid value: "Bad_Name": {DNS_LABEL}'),
        ("subsets[0].ports[1].port", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
        ("subsets[0].ports[1].protocol", 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'),
        ("subsets[0].ports[2].protocol", "Required value"),
        ("subsets[0].ports[2].appProtocol",
         "Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
         "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
         "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
         "and '/' (e.g. 'example.com/MyName')"),
    ]
    # one port may go unnamed
    assert validate_endpoints_create(endpoints({"addresses": [{"ip": "10.0.0.1"}],
                                                "ports": [{"port": 80, "protocol": "SCTP"}]})) == []


def test_endpoints_addresses_may_be_loopback_in_kapi():
    """kapi differs: its own resolver dials Endpoints on this machine (aggregated APIs, conversion webhooks)."""
    assert validate_endpoints_create(endpoints({"addresses": [{"ip": "127.0.0.1"}],
                                                "ports": [{"port": 80, "protocol": "TCP"}]})) == []
    assert validate_endpoint_ip("127.0.0.1", "p", allow_loopback=True) == []


def test_update_with_unchanged_subsets_ignores_their_errors():
    old = endpoints({"addresses": [{"ip": "169.254.0.1"}], "ports": []})
    same = endpoints({"addresses": [{"ip": "169.254.0.1", "hostname": ""}]})
    assert validate_endpoints_update(same, old) == []
    changed = endpoints({"addresses": [{"ip": "169.254.0.1", "nodeName": "n"}]})
    assert pairs(validate_endpoints_update(changed, old)) == [
        ("subsets[0].addresses[0].ip", 'Invalid value: "169.254.0.1": may not be in the link-local range '
                                       "(169.254.0.0/16, fe80::/10)")]
    assert pairs(validate_endpoints(changed)) == pairs(validate_endpoints_update(changed, old))


def test_wrong_types_do_not_raise():
    validate_endpoints_create({"subsets": "x"})
    validate_endpoints_create({"subsets": [1, {"addresses": "x", "ports": [2, {"port": "80", "name": 3}]}]})
    validate_endpoints_create({"subsets": [{"addresses": [{"ip": 5, "nodeName": 5}]}]})
