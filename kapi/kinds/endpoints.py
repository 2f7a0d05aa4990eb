"""Endpoints (core/v1) validation as kube-apiserver 1.37 does it, cause for cause.

Source: kubernetes ``pkg/apis/core/validation/validation.go`` (kube 1.37):
``ValidateEndpoints``, ``ValidateEndpointsCreate``, ``ValidateEndpointsUpdate``,
``validateEndpointSubsets``, ``validateEndpointAddress``, ``ValidateEndpointIP``
(formerly ``ValidateNonSpecialIP``), ``validateEndpointPort``, with the
legacy IP rule (apimachinery ``IsValidIPForLegacyField``, StrictIPCIDRValidation
on). ``ValidateEndpointsSpecificAnnotations`` checks nothing; ObjectMeta is
validated elsewhere. kube does not validate ``targetRef`` nor duplicate port
names, and port names are DNS-1123 labels here (not IANA service names).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kapi.errors import Cause
from kapi.kinds.fields import not_supported
from kapi.kinds.podspec import PORT_RANGE_MSG, PROTOCOLS
from kapi.objectmeta import invalid, required
from kapi.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_ip_for_legacy_field,
    parse_ip_sloppy,
)
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list
from kapi.values import as_str as _str

__all__ = ["validate_endpoint_ip", "validate_endpoints", "validate_endpoints_create", "validate_endpoints_update"]

Obj = dict[str, Any]

ADDRESSES_REQUIRED = "must specify `addresses` or `notReadyAddresses`"
LOOPBACK = "may not be in the loopback range (127.0.0.0/8, ::1/128)"
LINK_LOCAL = "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
LINK_LOCAL_MULTICAST = "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
# Go pointer fields of EndpointAddress/EndpointPort: "" is a set value there, not the zero value
_POINTER_FIELDS = frozenset(("nodeName", "appProtocol"))


def _each(path: str, value: Any, messages: list[str]) -> list[Cause]:
    return [invalid(path, value, msg) for msg in messages]


def validate_endpoint_ip(ip: str, path: str, *, allow_loopback: bool = False) -> list[Cause]:
    """ValidateEndpointIP: an IP netutils.ParseIPSloppy accepts (else ``must be a valid IP address``) that is not
    unspecified, loopback, link-local unicast or link-local multicast (net.IP's tests, so an IPv4-mapped address is
    judged as its IPv4 address; link-local multicast is 224.0.0.0/24 or ``ff?2::/16``). Also kube's rule for a
    Service's ``externalIPs``. ``allow_loopback`` skips the loopback range (kapi's Endpoints addresses: see
    :func:`_address`)."""
    addr = parse_ip_sloppy(ip)
    if addr is None:
        return [invalid(path, ip, "must be a valid IP address")]
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    out: list[Cause] = []
    if addr.is_unspecified:
        out.append(invalid(path, ip, f"may not be unspecified ({ip})"))
    if isinstance(addr, ipaddress.IPv4Address):
        loopback, link_local = addr in ipaddress.IPv4Network("127.0.0.0/8"), addr in ipaddress.IPv4Network(
            "169.254.0.0/16")
        multicast = addr in ipaddress.IPv4Network("224.0.0.0/24")
    else:
        packed = addr.packed
        loopback = addr == ipaddress.IPv6Address("::1")
        link_local = packed[0] == 0xFE and packed[1] & 0xC0 == 0x80
        multicast = packed[0] == 0xFF and packed[1] & 0x0F == 0x02
    if loopback and not allow_loopback:
        out.append(invalid(path, ip, LOOPBACK))
    if link_local:
        out.append(invalid(path, ip, LINK_LOCAL))
    if multicast:
        out.append(invalid(path, ip, LINK_LOCAL_MULTICAST))
    return out


def _address(address: Obj, path: str) -> list[Cause]:
    """validateEndpointAddress: ``ip`` by the legacy IP rule, a set ``hostname`` a DNS-1123 label, a set
    ``nodeName`` (even "") a DNS-1123 subdomain, then :func:`validate_endpoint_ip` of ``ip`` (so a bad IP reports
    both ``must be a valid IP address, (e.g. ...)`` and ``must be a valid IP address``)."""
    ip = _str(address.get("ip"))
    out = _each(f"{path}.ip", ip, is_valid_ip_for_legacy_field(ip))
    hostname = _str(address.get("hostname"))
    if hostname:
        out.extend(_each(f"{path}.hostname", hostname, is_dns1123_label(hostname)))
    node_name = address.get("nodeName")
    if isinstance(node_name, str):
        out.extend(_each(f"{path}.nodeName", node_name, is_dns1123_subdomain(node_name)))
    # kapi differs here: a loopback address is allowed, as kapi's own service resolver (aggregated APIServices,
    # CRD conversion webhooks) is the only client of Endpoints and dials them on this machine; kube refuses it
    # because kube-proxy cannot route a node's loopback (docs/kube-parity.md)
    out.extend(validate_endpoint_ip(ip, f"{path}.ip", allow_loopback=True))
    return out


def _port(port: Obj, require_name: bool, path: str) -> list[Cause]:
    """validateEndpointPort: ``name`` Required when the subset has more than one port, else a set one a DNS-1123
    label; ``port`` 1-65535; ``protocol`` Required or SCTP/TCP/UDP; a set ``appProtocol`` a qualified name."""
    out: list[Cause] = []
    name = _str(port.get("name"))
    if require_name and not name:
        out.append(required(f"{path}.name"))
    elif name:
        out.extend(_each(f"{path}.name", name, is_dns1123_label(name)))
    number = _int(port.get("port"))
    number = 0 if number is None else number
    if not 1 <= number <= 65535:
        out.append(invalid(f"{path}.port", number, PORT_RANGE_MSG))
    protocol = _str(port.get("protocol"))
    if not protocol:
        out.append(required(f"{path}.protocol"))
    elif protocol not in PROTOCOLS:
        out.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    app_protocol = port.get("appProtocol")
    if isinstance(app_protocol, str):
        out.extend(_each(f"{path}.appProtocol", app_protocol, is_qualified_name(app_protocol)))
    return out


def _subsets(subsets: Any) -> list[Cause]:
    """validateEndpointSubsets: each subset needs an address (``subsets[i]: Required value: must specify
    `addresses` or `notReadyAddresses```); then its addresses, not-ready addresses and ports."""
    out: list[Cause] = []
    for i, subset in enumerate(_list(subsets)):
        subset = _dict(subset)
        spath = f"subsets[{i}]"
        addresses, not_ready = _list(subset.get("addresses")), _list(subset.get("notReadyAddresses"))
        if not addresses and not not_ready:
            out.append(required(spath, ADDRESSES_REQUIRED))
        for j, address in enumerate(addresses):
            out.extend(_address(_dict(address), f"{spath}.addresses[{j}]"))
        for j, address in enumerate(not_ready):
            out.extend(_address(_dict(address), f"{spath}.notReadyAddresses[{j}]"))
        ports = _list(subset.get("ports"))
        for j, port in enumerate(ports):
            out.extend(_port(_dict(port), len(ports) > 1, f"{spath}.ports[{j}]"))
    return out


def _semantic(value: Any, key: str = "") -> Any:
    """``value`` as apiequality.Semantic.DeepEqual compares it: empty and absent lists/maps alike, a non-pointer
    string "" the same as unset."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _semantic(v, k)
            if v is None or v == [] or v == {} or (v == "" and k not in _POINTER_FIELDS):
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def validate_endpoints(obj: Obj, old: Obj | None = None) -> list[Cause]:
    """ValidateEndpoints (ObjectMeta aside): the subsets' rules; on an update (``old`` given) whose ``subsets`` are
    semantically unchanged the subset causes are dropped (kube tolerates data older versions accepted). [] when
    valid."""
    out = _subsets(obj.get("subsets"))
    if out and old is not None and _semantic(_list(old.get("subsets"))) == _semantic(_list(obj.get("subsets"))):
        return []
    return out


def validate_endpoints_create(obj: Obj) -> list[Cause]:
    """ValidateEndpointsCreate: :func:`validate_endpoints` without a stored object."""
    return validate_endpoints(obj, None)


def validate_endpoints_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidateEndpointsUpdate (ObjectMeta update rules aside): :func:`validate_endpoints` against the stored
    object. kube allows any change (``nodeName`` included)."""
    return validate_endpoints(new, old)
