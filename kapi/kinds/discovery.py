"""The discovery.k8s.io group's EndpointSlice: defaults and validation as kube-apiserver's.

From ``pkg/apis/discovery/v1/defaults.go`` and ``pkg/apis/discovery/validation``:
``addressType`` required, one of IPv4/IPv6/FQDN and immutable; at most 1000
endpoints of 1-100 addresses valid for the address type; hostname a DNS
label, nodeName a DNS subdomain; at most 20000 ports, names DNS labels and
unique, protocol TCP/UDP/SCTP (default TCP), appProtocol a qualified name.

The strategy (``pkg/registry/discovery/endpointslice/strategy.go``): generation 1
on create, bumped by an update that changes anything but metadata, or the
labels (the kind has no spec); ``deprecatedTopology`` is dropped on v1 writes
(kept on an update that leaves the endpoints as they were; an update first moves
a stored ``kubernetes.io/hostname`` topology into an unset ``nodeName``). Kube's typed
encoding always writes ``endpoints`` and ``ports`` (no ``omitempty``: ``null``
when absent) and each endpoint's ``conditions`` struct (``{}``).
"""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Any

from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import duplicate, immutable, not_supported, too_many
from kapi.objectmeta import invalid, required, validate_labels
from kapi.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
PROTOCOLS = ("SCTP", "TCP", "UDP")
MAX_ENDPOINTS = 1000
MAX_ADDRESSES = 100
MAX_PORTS = 20000
MAX_TOPOLOGY_LABELS = 16


def default_endpoint_slice(obj: Obj) -> None:
    """SetDefaults_EndpointPort: port name "" and protocol TCP; the fields kube always encodes (``endpoints`` and
    ``ports`` ``null`` when absent, each endpoint's ``conditions`` ``{}``)."""
    for key in ("endpoints", "ports"):
        if obj.get(key) is None:
            obj[key] = None
    for port in _list(obj.get("ports")):
        if isinstance(port, dict):
            port.setdefault("name", "")
            port.setdefault("protocol", "TCP")
    for endpoint in _list(obj.get("endpoints")):
        if isinstance(endpoint, dict) and endpoint.get("conditions") is None:
            endpoint["conditions"] = {}


HOSTNAME_LABEL = "kubernetes.io/hostname"


def drop_deprecated_topology(obj: Obj, old: Obj | None = None) -> None:
    """dropTopologyOnV1: writes to ``endpoints[i].deprecatedTopology`` through v1 are ignored.

    On an update (``old`` the stored slice) an endpoint without ``nodeName`` whose topology still names a
    ``kubernetes.io/hostname`` the stored slice's topologies named, and that is a valid node name (a DNS
    subdomain), gets it as its ``nodeName`` first, so a partial update keeps the node. Source:
    ``pkg/registry/discovery/endpointslice/strategy.go`` dropTopologyOnV1, getDeprecatedTopologyNodeNames.
    """
    previous = {str(name) for endpoint in _list((old or {}).get("endpoints")) if isinstance(endpoint, dict)
                if (name := _dict(endpoint.get("deprecatedTopology")).get(HOSTNAME_LABEL))}
    for endpoint in _list(obj.get("endpoints")):
        if not isinstance(endpoint, dict):
            continue
        topology = _dict(endpoint.get("deprecatedTopology"))
        name = topology.get(HOSTNAME_LABEL)
        if (endpoint.get("nodeName") is None and isinstance(name, str) and name in previous
                and not is_dns1123_subdomain(name)):
            endpoint["nodeName"] = name
        endpoint.pop("deprecatedTopology", None)


def _address_errors(kind: Any, path: str, address: Any) -> list[Cause]:
    text = str(address)
    if kind in ("IPv4", "IPv6"):
        try:
            parsed = ipaddress.ip_address(text)
        except ValueError:
            parsed = None
        if parsed is None or parsed.version != (4 if kind == "IPv4" else 6):
            return [invalid(path, text, f"must be a valid {kind} address")]
    elif kind == "FQDN":
        labels = text.split(".")
        if len(labels) < 2:
            return [invalid(path, text, "should be a domain with at least two segments separated by dots")]
        return [invalid(path, text, m) for m in is_dns1123_subdomain(text)]
    return []


MAX_ZONE_HINTS = 8


def _validate_hints(hints: Obj, path: str) -> list[Cause]:
    """validateHints: at most 8 ``forZones`` (then nothing else is checked), each name unique and a label value.
    (``forNodes``, newer than the source read, is not checked.)"""
    zones = _list(hints.get("forZones"))
    if len(zones) > MAX_ZONE_HINTS:
        return [too_many(f"{path}.forZones", len(zones), MAX_ZONE_HINTS)]
    out: list[Cause] = []
    seen: set[str] = set()
    for i, zone in enumerate(zones):
        name = _dict(zone).get("name")
        name = name if isinstance(name, str) else ""
        zpath = f"{path}.forZones[{i}].name"
        if name in seen:
            out.append(duplicate(zpath, name))
        seen.add(name)
        out.extend(invalid(zpath, name, m) for m in is_valid_label_value(name))
    return out


def validate_endpoint_slice(obj: Obj) -> list[Cause]:
    """ValidateEndpointSlice: addressType, endpoints, ports."""
    out: list[Cause] = []
    kind = obj.get("addressType")
    if not kind:
        out.append(required("addressType"))
    elif kind not in ADDRESS_TYPES:
        out.append(not_supported("addressType", kind, ADDRESS_TYPES))
    endpoints = _list(obj.get("endpoints"))
    if len(endpoints) > MAX_ENDPOINTS:
        out.append(too_many("endpoints", len(endpoints), MAX_ENDPOINTS))
    else:
        for i, endpoint in enumerate(endpoints):
            endpoint = _dict(endpoint)
            path = f"endpoints[{i}]"
            addresses = _list(endpoint.get("addresses"))
            if not addresses:
                out.append(required(f"{path}.addresses", "must contain at least 1 address"))
            elif len(addresses) > MAX_ADDRESSES:
                out.append(too_many(f"{path}.addresses", len(addresses), MAX_ADDRESSES))
            for j, address in enumerate(addresses):
                out.extend(_address_errors(kind, f"{path}.addresses[{j}]", address))
            if isinstance(endpoint.get("nodeName"), str):
                out.extend(invalid(f"{path}.nodeName", endpoint["nodeName"], m)
                           for m in is_dns1123_subdomain(endpoint["nodeName"]))
            topology = _dict(endpoint.get("deprecatedTopology"))
            if len(topology) > MAX_TOPOLOGY_LABELS:
                out.append(too_many(f"{path}.deprecatedTopology", len(topology), MAX_TOPOLOGY_LABELS))
            out.extend(validate_labels(topology, f"{path}.deprecatedTopology"))
            if isinstance(endpoint.get("hostname"), str):
                out.extend(invalid(f"{path}.hostname", endpoint["hostname"], m)
                           for m in is_dns1123_label(endpoint["hostname"]))
            if isinstance(endpoint.get("hints"), dict):
                out.extend(_validate_hints(endpoint["hints"], f"{path}.hints"))
    ports = _list(obj.get("ports"))
    if len(ports) > MAX_PORTS:
        out.append(too_many("ports", len(ports), MAX_PORTS))
        return out
    names: set[str] = set()
    for i, port in enumerate(ports):
        port = _dict(port)
        path = f"ports[{i}]"
        name = str(port.get("name") or "")
        if name:
            out.extend(invalid(f"{path}.name", name, m) for m in is_dns1123_label(name))
        if name in names:
            out.append(duplicate(f"{path}.name", name))
        names.add(name)
        protocol = port.get("protocol")
        if protocol is None:
            out.append(required(f"{path}.protocol"))
        elif protocol not in PROTOCOLS:
            out.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
        if isinstance(port.get("appProtocol"), str):
            out.extend(invalid(f"{path}.appProtocol", port["appProtocol"], m)
                       for m in is_qualified_name(port["appProtocol"]))
    return out


@register
class EndpointSliceStrategy(Strategy):
    """EndpointSlice: port defaults, ValidateEndpointSlice, ``addressType`` immutable."""

    group, kind = "discovery.k8s.io", "EndpointSlice"
    generation_without_spec = True

    def default(self, obj: Obj) -> None:
        """:func:`default_endpoint_slice`."""
        default_endpoint_slice(obj)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """Generation 1 (the generic rule, with :attr:`generation_without_spec`); no deprecatedTopology."""
        drop_deprecated_topology(obj)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """deprecatedTopology dropped unless the endpoints are unchanged, a stored hostname topology moved
        into an unset ``nodeName`` (:func:`drop_deprecated_topology`)."""
        if new.get("endpoints") != old.get("endpoints"):
            drop_deprecated_topology(new, old)

    def bumps_generation(self, new: Obj, old: Obj) -> bool:
        """Anything but metadata changed, or the labels."""
        def rest(obj: Obj) -> Obj:
            return {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
        labels = [_dict(_dict(o.get("metadata")).get("labels")) for o in (new, old)]
        return rest(new) != rest(old) or labels[0] != labels[1]

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_endpoint_slice`."""
        return validate_endpoint_slice(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateEndpointSliceUpdate: ``addressType`` immutable."""
        if subresource or new.get("addressType") == old.get("addressType"):
            return []
        return [immutable("addressType", new.get("addressType"))]
