"""Defaults, validation and update rules of discovery.k8s.io, node.k8s.io and the storage.k8s.io CSI kinds.

As kube-apiserver's ``pkg/apis/discovery/validation``, ``pkg/apis/node/validation``
and ``pkg/apis/storage/validation`` (with the v1 ``SetDefaults_*`` functions):

- EndpointSlice: ``addressType`` required, one of IPv4/IPv6/FQDN and
  immutable; at most 1000 endpoints of 1-100 addresses valid for the
  address type; hostname a DNS label, nodeName a DNS subdomain; at most
  20000 ports, names DNS labels and unique, protocol TCP/UDP/SCTP (default
  TCP), appProtocol a qualified name.
- RuntimeClass: ``handler`` a DNS label, immutable.
- CSIDriver: spec defaults (attachRequired, podInfoOnMount, storageCapacity,
  fsGroupPolicy, requiresRepublish, volumeLifecycleModes, seLinuxMount),
  name a DNS subdomain of at most 63 characters, fsGroupPolicy and modes
  enums, token request audiences unique with expirations of at least 10
  minutes; attachRequired and volumeLifecycleModes immutable.
- CSINode: drivers named as CSI drivers, unique, with a nodeID (at most 192
  characters) and qualified topology keys.
- VolumeAttachment: attacher and nodeName required, exactly one source;
  spec immutable.
- CSIStorageCapacity: storageClassName a DNS subdomain, capacities not
  negative; storageClassName and nodeTopology immutable.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kapi.errors import Cause
from kapi.objectmeta import invalid, required, validate_labels
from kapi.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

Obj = dict[str, Any]

ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
PROTOCOLS = ("SCTP", "TCP", "UDP")
MAX_ENDPOINTS = 1000
MAX_ADDRESSES = 100
MAX_PORTS = 20000
MAX_TOPOLOGY_LABELS = 16
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Ephemeral", "Persistent")
CSI_NODE_ID_MAX = 192
MIN_TOKEN_SECONDS = 600
MAX_TOKEN_SECONDS = 1 << 32


def too_many(path: str, actual: int, maximum: int) -> Cause:
    """field.TooMany: ``Too many: <n>: must have at most <max> items``."""
    return Cause("FieldValueTooMany", f"Too many: {actual}: must have at most {maximum} items", path)


def immutable(path: str, value: Any) -> Cause:
    """apivalidation.ValidateImmutableField's ``field is immutable``."""
    return invalid(path, value if isinstance(value, (str, int, bool)) or value is None else str(value),
                   "field is immutable")


# ------------------------------------------------------------ defaults

def default_endpoint_slice(obj: Obj) -> None:
    """SetDefaults_EndpointPort: port name "" and protocol TCP."""
    for port in _list(obj.get("ports")):
        if isinstance(port, dict):
            port.setdefault("name", "")
            port.setdefault("protocol", "TCP")


def default_csi_driver(obj: Obj) -> None:
    """SetDefaults_CSIDriver (storage/v1)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    for key, value in (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False),
                       ("fsGroupPolicy", "ReadWriteOnceWithFSType"), ("requiresRepublish", False),
                       ("seLinuxMount", False)):
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


# ------------------------------------------------------------ discovery.k8s.io

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


def validate_endpoint_slice(obj: Obj) -> list[Cause]:
    """ValidateEndpointSlice: addressType, endpoints, ports."""
    from kapi.kindvalidation import duplicate, not_supported

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


# ------------------------------------------------------------ node.k8s.io

def validate_runtime_class(obj: Obj) -> list[Cause]:
    """ValidateRuntimeClass: handler a DNS label; overhead and scheduling are checked by the schema."""
    handler = obj.get("handler")
    return [invalid("handler", handler if isinstance(handler, str) else "", m)
            for m in is_dns1123_label(handler if isinstance(handler, str) else "")]


# ------------------------------------------------------------ storage.k8s.io

def validate_csi_driver_name(name: Any, path: str) -> list[Cause]:
    """apivalidation.ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain (any case)."""
    text = name if isinstance(name, str) else ""
    out: list[Cause] = []
    if not text:
        out.append(required(path))
    if len(text) > 63:
        out.append(Cause("FieldValueTooLong", "Too long: may not be more than 63 bytes", path))
    out.extend(invalid(path, text, m) for m in is_dns1123_subdomain(text.lower()))
    return out


def validate_csi_driver(obj: Obj) -> list[Cause]:
    """ValidateCSIDriver: name, fsGroupPolicy, volumeLifecycleModes, tokenRequests."""
    from kapi.kindvalidation import duplicate, not_supported

    spec = _dict(obj.get("spec"))
    out = validate_csi_driver_name(_dict(obj.get("metadata")).get("name"), "name")
    for key in ("attachRequired", "podInfoOnMount"):
        if spec.get(key) is None:
            out.append(required(f"spec.{key}"))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        out.append(not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    for i, mode in enumerate(_list(spec.get("volumeLifecycleModes"))):
        if mode not in LIFECYCLE_MODES:
            out.append(not_supported(f"spec.volumeLifecycleModes[{i}]", mode, LIFECYCLE_MODES))
    audiences: set[str] = set()
    for i, request in enumerate(_list(spec.get("tokenRequests"))):
        request = _dict(request)
        path = f"spec.tokenRequests[{i}]"
        audience = str(request.get("audience") or "")
        if audience in audiences:
            out.append(duplicate(f"{path}.audience", audience))
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if isinstance(seconds, int) and seconds < MIN_TOKEN_SECONDS:
            out.append(invalid(f"{path}.expirationSeconds", seconds,
                               "may not specify a duration less than 10 minutes"))
        elif isinstance(seconds, int) and seconds >= MAX_TOKEN_SECONDS:
            out.append(invalid(f"{path}.expirationSeconds", seconds,
                               "may not specify a duration larger than 2^32 seconds"))
    return out


def validate_csi_node(obj: Obj) -> list[Cause]:
    """ValidateCSINode: driver names, uniqueness, nodeID, topology keys, allocatable count."""
    from kapi.kindvalidation import duplicate

    out: list[Cause] = []
    names: set[str] = set()
    for i, driver in enumerate(_list(_dict(obj.get("spec")).get("drivers"))):
        driver = _dict(driver)
        path = f"spec.drivers[{i}]"
        name = driver.get("name")
        out.extend(validate_csi_driver_name(name, f"{path}.name"))
        if isinstance(name, str):
            if name in names:
                out.append(duplicate(f"{path}.name", name))
            names.add(name)
        node_id = driver.get("nodeID")
        if not node_id:
            out.append(required(f"{path}.nodeID"))
        elif isinstance(node_id, str) and len(node_id) > CSI_NODE_ID_MAX:
            out.append(invalid(f"{path}.nodeID", node_id, f"must be {CSI_NODE_ID_MAX} characters or less"))
        keys: set[str] = set()
        for j, key in enumerate(_list(driver.get("topologyKeys"))):
            kpath = f"{path}.topologyKeys[{j}]"
            if not key:
                out.append(required(kpath))
                continue
            out.extend(invalid(kpath, key, m) for m in is_qualified_name(str(key)))
            if key in keys:
                out.append(duplicate(kpath, key))
            keys.add(key)
        count = _dict(driver.get("allocatable")).get("count")
        if isinstance(count, int) and count < 0:
            out.append(invalid(f"{path}.allocatable.count", count, "must be greater than or equal to 0"))
    return out


def validate_volume_attachment(obj: Obj) -> list[Cause]:
    """ValidateVolumeAttachment: attacher (a CSI driver name), nodeName, exactly one source."""
    spec = _dict(obj.get("spec"))
    out = validate_csi_driver_name(spec.get("attacher"), "spec.attacher")
    if not spec.get("nodeName"):
        out.append(required("spec.nodeName"))
    source = _dict(spec.get("source"))
    given = [k for k in ("persistentVolumeName", "inlineVolumeSpec") if source.get(k)]
    if len(given) != 1:
        out.append(Cause("FieldValueRequired", "Required value: must specify exactly one of persistentVolumeName "
                         "and inlineVolumeSpec", "spec.source"))
    return out


def validate_csi_storage_capacity(obj: Obj) -> list[Cause]:
    """ValidateCSIStorageCapacity: storageClassName, capacity and maximumVolumeSize not negative."""
    name = obj.get("storageClassName")
    out = [invalid("storageClassName", name if isinstance(name, str) else "", m)
           for m in is_dns1123_subdomain(name if isinstance(name, str) else "")]
    for key in ("capacity", "maximumVolumeSize"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip().startswith("-"):
            out.append(invalid(key, value, "must be greater than or equal to 0"))
    return out


_VALIDATORS = {
    ("discovery.k8s.io", "EndpointSlice"): validate_endpoint_slice,
    ("node.k8s.io", "RuntimeClass"): validate_runtime_class,
    ("storage.k8s.io", "CSIDriver"): validate_csi_driver,
    ("storage.k8s.io", "CSINode"): validate_csi_node,
    ("storage.k8s.io", "VolumeAttachment"): validate_volume_attachment,
    ("storage.k8s.io", "CSIStorageCapacity"): validate_csi_storage_capacity,
}


def validate(obj: Obj, group: str, kind: str) -> list[Cause]:
    """The semantic causes of an object of one of this module's kinds; [] for any other kind."""
    fn = _VALIDATORS.get((group, kind))
    return fn(obj) if fn is not None else []


def validate_update(new: Obj, old: Obj, group: str, kind: str, subresource: str = "") -> list[Cause]:
    """The immutable-field causes of an update of one of this module's kinds (main resource only)."""
    if subresource:
        return []
    out: list[Cause] = []

    def same(path: str, new_value: Any, old_value: Any, shown: Any = None) -> None:
        if new_value != old_value:
            out.append(immutable(path, new_value if shown is None else shown))

    if (group, kind) == ("discovery.k8s.io", "EndpointSlice"):
        same("addressType", new.get("addressType"), old.get("addressType"))
    elif (group, kind) == ("node.k8s.io", "RuntimeClass"):
        same("handler", new.get("handler"), old.get("handler"))
    elif (group, kind) == ("storage.k8s.io", "CSIDriver"):
        spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
        same("spec.attachedRequired", spec.get("attachRequired"), old_spec.get("attachRequired"))  # kube's path
        same("spec.volumeLifecycleModes", spec.get("volumeLifecycleModes"), old_spec.get("volumeLifecycleModes"),
             ",".join(map(str, _list(spec.get("volumeLifecycleModes")))))
    elif (group, kind) == ("storage.k8s.io", "CSINode"):
        before = {d.get("name"): d for d in _list(_dict(old.get("spec")).get("drivers")) if isinstance(d, dict)}
        for i, driver in enumerate(_list(_dict(new.get("spec")).get("drivers"))):
            old_driver = before.get(_dict(driver).get("name"))
            if old_driver is not None:
                same(f"spec.drivers[{i}].nodeID", _dict(driver).get("nodeID"), old_driver.get("nodeID"))
                same(f"spec.drivers[{i}].topologyKeys", _dict(driver).get("topologyKeys"),
                     old_driver.get("topologyKeys"), ",".join(map(str, _list(_dict(driver).get("topologyKeys")))))
    elif (group, kind) == ("storage.k8s.io", "VolumeAttachment"):
        same("spec", new.get("spec"), old.get("spec"), "spec")
    elif (group, kind) == ("storage.k8s.io", "CSIStorageCapacity"):
        same("storageClassName", new.get("storageClassName"), old.get("storageClassName"))
        same("nodeTopology", new.get("nodeTopology"), old.get("nodeTopology"), "nodeTopology")
    return out
