"""The create/update warnings kube 1.37 gives for core/v1 PersistentVolumes, PersistentVolumeClaims, Nodes,
Endpoints and Services (the strategies' ``WarningsOnCreate`` / ``WarningsOnUpdate``).

Sources: ``pkg/api/persistentvolume/util.go`` (GetWarningsForPersistentVolume),
``pkg/api/persistentvolumeclaim/util.go`` (GetWarningsForPersistentVolumeClaim and
GetWarningsForPersistentVolumeClaimSpec), ``pkg/api/node/util.go`` (GetWarningsForNodeSelectorTerm),
``pkg/registry/core/node/strategy.go`` (fieldIsDeprecatedWarnings), ``pkg/registry/core/endpoint/strategy.go``
(endpointsWarnings), ``pkg/api/service/warnings.go`` (GetWarningsForService),
``pkg/registry/core/service/strategy.go`` (the /status strategy's WarningsOnUpdate) and k8s.io/apimachinery
``pkg/util/validation/ip.go`` (GetWarningsForIP, GetWarningsForCIDR).

Every function takes the defaulted, prepared v1 JSON object kapi stores (dicts/lists; absent keys are Go zero
values), never raises on wrongly typed input, and returns the warning texts in kube's order ([] when none).
The deprecated node label table is :data:`kapi.kinds.podwarnings.DEPRECATED_NODE_LABELS`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kapi.kinds.podwarnings import DEPRECATED_NODE_LABELS, fractional_bytes
from kapi.objectmeta import go_quote
from kapi.validation import is_valid_label_value, parse_ip_sloppy
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

Obj = dict[str, Any]

# core.BetaStorageClassAnnotation / core.MountOptionAnnotation with their messages, in kube's order
DEPRECATED_PV_ANNOTATIONS = (
    ("volume.beta.kubernetes.io/storage-class", 'deprecated since v1.8; use "storageClassName" attribute instead'),
    ("volume.beta.kubernetes.io/mount-options", 'deprecated since v1.31; use "mountOptions" attribute instead'),
)
RECYCLE_MSG = ("The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic "
               "provisioning.")
# (PersistentVolumeSource field, message), in the order warningsForPersistentVolumeSpecAndMeta checks them
DEPRECATED_PV_SOURCES = (
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("storageOS", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
)

# pkg/controller/endpoint: LabelManagedBy / ControllerName
ENDPOINTS_MANAGED_BY = "endpoints.kubernetes.io/managed-by"
ENDPOINTS_CONTROLLER = "endpoint-controller"

# core.DeprecatedAnnotationTopologyAwareHints / core.AnnotationTopologyMode
TOPOLOGY_AWARE_HINTS = "service.kubernetes.io/topology-aware-hints"
TOPOLOGY_MODE = "service.kubernetes.io/topology-mode"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


# ------------------------------------------------------------ IPs and CIDRs (apimachinery validation/ip.go)

def _strict_addr(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """netip.ParseAddr of a value ParseIPSloppy accepted: None when it refuses it (leading zeros)."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _mapped(addr: Any) -> ipaddress.IPv4Address | None:
    return addr.ipv4_mapped if isinstance(addr, ipaddress.IPv6Address) else None


def _net_ip_text(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """net.IP.String(): an IPv4-mapped IPv6 address prints as its dotted IPv4 address."""
    return str(_mapped(addr) or addr)


def ip_warnings(path: str, value: Any) -> list[str]:
    """validation.GetWarningsForIP for the IP ``value`` at ``path``: one that only the sloppy parser takes (leading
    zeros) or an IPv4-mapped IPv6 address is ``non-standard ... use "<ip>"``; a non-canonical IPv6 address
    ``should be in RFC 5952 canonical format``. [] for a standard value, or one that is no IP at all (kube logs
    that case and warns nothing)."""
    text = _str(value)
    sloppy = parse_ip_sloppy(text) if text else None
    if sloppy is None:
        return []
    strict = _strict_addr(text)
    if strict is None or _mapped(strict) is not None:
        return [f"{path}: non-standard IP address {go_quote(text)} will be considered invalid in a future Kubernetes "
                f"release: use {go_quote(_net_ip_text(sloppy))}"]
    if isinstance(strict, ipaddress.IPv6Address) and str(strict) != text:
        return [f"{path}: IPv6 address {go_quote(text)} should be in RFC 5952 canonical format "
                f"({go_quote(str(strict))})"]
    return []


def _parse_cidr_sloppy(value: str) -> tuple[Any, int, int] | None:
    """netutils.ParseCIDRSloppy: (the address, the prefix length, the address length in bits: 32 for a dotted
    IPv4 address, 128 otherwise, an IPv4-mapped one included); None when it refuses the value."""
    ip, sep, bits = value.partition("/")
    if not sep:
        return None
    addr = parse_ip_sloppy(ip)
    if addr is None or not bits or not (bits.isascii() and bits.isdigit()):
        return None
    addrlen = 32 if isinstance(addr, ipaddress.IPv4Address) else 128
    if int(bits) > addrlen:
        return None
    return addr, int(bits), addrlen


def _ipnet_text(addr: Any, prefix: int, addrlen: int) -> str:
    """The ``*net.IPNet`` ParseCIDRSloppy returns, as its String() prints it: the masked address, shown as IPv4
    when it is IPv4-mapped (the mask then loses its first 96 bits)."""
    masked = int(addr) & (((1 << prefix) - 1) << (addrlen - prefix))
    if addrlen == 32:
        return f"{ipaddress.IPv4Address(masked)}/{prefix}"
    network = ipaddress.IPv6Address(masked)
    if network.ipv4_mapped is not None:
        return f"{network.ipv4_mapped}/{max(prefix - 96, 0)}"
    return f"{network}/{prefix}"


def cidr_warnings(path: str, value: Any) -> list[str]:
    """validation.GetWarningsForCIDR for the CIDR ``value`` at ``path``, in kube's order: bits set past the prefix
    (``CIDR value "..." is ambiguous in this context (should be "<net>" or "<ip>/<len>"?)``), then a value only
    the sloppy parser takes (leading zeros in the address or the prefix length) or with an IPv4-mapped address
    (``non-standard CIDR value ...``); only when neither, a non-canonical IPv6 prefix (``should be in RFC 5952
    canonical format``). [] for a standard value or one that is no CIDR (kube logs and warns nothing)."""
    text = _str(value)
    parsed = _parse_cidr_sloppy(text)
    if parsed is None:
        return []
    addr, prefix, addrlen = parsed
    ip, bits = text.split("/", 1)
    network = _ipnet_text(addr, prefix, addrlen)
    out = []
    if int(addr) & ((1 << (addrlen - prefix)) - 1):
        single = f"{_net_ip_text(addr)}/{addrlen}"
        out.append(f"{path}: CIDR value {go_quote(text)} is ambiguous in this context (should be "
                   f"{go_quote(network)} or {go_quote(single)}?)")
    strict = _strict_addr(ip)
    if strict is None or (len(bits) > 1 and bits.startswith("0")) or _mapped(strict) is not None:
        out.append(f"{path}: non-standard CIDR value {go_quote(text)} will be considered invalid in a future "
                   f"Kubernetes release: use {go_quote(network)}")
    if not out and isinstance(strict, ipaddress.IPv6Address):
        canonical = f"{strict}/{prefix}"
        if canonical != text:
            out.append(f"{path}: IPv6 CIDR value {go_quote(text)} should be in RFC 5952 canonical format "
                       f"({go_quote(canonical)})")
    return out


# ------------------------------------------------------------ PersistentVolume / PersistentVolumeClaim

def node_selector_term_warnings(term: Any, path: str, check_label_value: bool = False) -> list[str]:
    """nodeapi.GetWarningsForNodeSelectorTerm of a NodeSelectorTerm at ``path``: for each
    ``matchExpressions[<i>]`` a deprecated node label key (``<path>.matchExpressions[<i>].key: <key> is <why>``),
    then, with ``check_label_value``, each value that is no label value (``....values[<j>]: <value> is invalid,
    <IsValidLabelValue message>``). ``matchFields`` are not looked at."""
    out = []
    for i, expr in enumerate(_list(_dict(term).get("matchExpressions"))):
        expr = _dict(expr)
        key = expr.get("key")
        if isinstance(key, str) and key in DEPRECATED_NODE_LABELS:
            out.append(f"{path}.matchExpressions[{i}].key: {key} is {DEPRECATED_NODE_LABELS[key]}")
        if check_label_value:
            for j, value in enumerate(_list(expr.get("values"))):
                if isinstance(value, str):
                    out.extend(f"{path}.matchExpressions[{i}].values[{j}]: {value} is invalid, {msg}"
                               for msg in is_valid_label_value(value))
    return out


def persistent_volume_warnings(obj: Obj) -> list[str]:
    """GetWarningsForPersistentVolume (the PV strategy's WarningsOnCreate) of a PV: the deprecated
    ``volume.beta.kubernetes.io/storage-class`` then ``.../mount-options`` annotations, the Recycle reclaim
    policy, deprecated node labels (and invalid label values) in ``spec.nodeAffinity.required``'s terms, then
    the deprecated volume sources (cephfs, photonPersistentDisk, scaleIO, storageOS, glusterfs, rbd)."""
    obj = _dict(obj)
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    spec = _dict(obj.get("spec"))
    out = [f"metadata.annotations[{key}]: {message}" for key, message in DEPRECATED_PV_ANNOTATIONS
           if key in annotations]
    if spec.get("persistentVolumeReclaimPolicy") == "Recycle":
        out.append(f"spec.persistentVolumeReclaimPolicy: {RECYCLE_MSG}")
    required = _dict(spec.get("nodeAffinity")).get("required")
    if isinstance(required, dict):
        for i, term in enumerate(_list(required.get("nodeSelectorTerms"))):
            out.extend(node_selector_term_warnings(term, f"spec.nodeAffinity.required.nodeSelectorTerms[{i}]",
                                                   check_label_value=True))
    out.extend(f"spec.{source}: {message}" for source, message in DEPRECATED_PV_SOURCES
               if spec.get(source) is not None)
    return out


def persistent_volume_update_warnings(new: Obj, old: Obj) -> list[str]:
    """The PV strategy's WarningsOnUpdate: :func:`persistent_volume_warnings` of ``new`` (``/status``: none)."""
    return persistent_volume_warnings(new)


def claim_spec_warnings(spec: Any, path: str = "spec") -> list[str]:
    """GetWarningsForPersistentVolumeClaimSpec of a claim spec at ``path`` (``spec``; a pod's ephemeral volume:
    ``spec.volumes[<i>].ephemeral.volumeClaimTemplate.spec``): a fractional ``resources.requests[storage]``, then
    ``resources.limits[storage]`` (``fractional byte value "1500m" is invalid, must be an integer``)."""
    resources = _dict(_dict(spec).get("resources"))
    out = []
    for which in ("requests", "limits"):
        out.extend(fractional_bytes(f"{path}.resources.{which}[storage]",
                                       _dict(resources.get(which)).get("storage")))
    return out


def persistent_volume_claim_warnings(obj: Obj) -> list[str]:
    """GetWarningsForPersistentVolumeClaim (the PVC strategy's WarningsOnCreate): the deprecated
    ``volume.beta.kubernetes.io/storage-class`` annotation, then :func:`claim_spec_warnings` of ``spec``."""
    obj = _dict(obj)
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    key, message = DEPRECATED_PV_ANNOTATIONS[0]
    out = [f"metadata.annotations[{key}]: {message}"] if key in annotations else []
    return out + claim_spec_warnings(obj.get("spec"))


def persistent_volume_claim_update_warnings(new: Obj, old: Obj) -> list[str]:
    """The PVC strategy's WarningsOnUpdate: :func:`persistent_volume_claim_warnings` of ``new`` (``/status`` and
    the storage class subresource: none)."""
    return persistent_volume_claim_warnings(new)


# ------------------------------------------------------------ Node

def node_warnings(obj: Obj) -> list[str]:
    """The Node strategy's fieldIsDeprecatedWarnings (WarningsOnCreate) of a prepared Node: ``spec.configSource:
    the feature is removed`` (PrepareForCreate drops it, so only an update keeping a stored one shows it), then
    ``spec.externalID: this field is deprecated, and is unused by Kubernetes``."""
    spec = _dict(_dict(obj).get("spec"))
    out = []
    if spec.get("configSource") is not None:
        out.append("spec.configSource: the feature is removed")
    if _str(spec.get("externalID")):
        out.append("spec.externalID: this field is deprecated, and is unused by Kubernetes")
    return out


def node_update_warnings(new: Obj, old: Obj) -> list[str]:
    """The Node strategy's WarningsOnUpdate: :func:`node_warnings` of ``new`` (``/status``: none)."""
    return node_warnings(new)


# ------------------------------------------------------------ Endpoints

def endpoints_warnings(obj: Obj) -> list[str]:
    """endpointsWarnings (the Endpoints strategy's WarningsOnCreate): :func:`ip_warnings` of every
    ``subsets[<i>].addresses[<j>].ip`` then ``notReadyAddresses[<j>].ip``, subset by subset; none for an
    Endpoints labelled ``endpoints.kubernetes.io/managed-by: endpoint-controller``."""
    obj = _dict(obj)
    if _dict(_dict(obj.get("metadata")).get("labels")).get(ENDPOINTS_MANAGED_BY) == ENDPOINTS_CONTROLLER:
        return []
    out = []
    for i, subset in enumerate(_list(obj.get("subsets"))):
        subset = _dict(subset)
        for key in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(_list(subset.get(key))):
                out.extend(ip_warnings(f"subsets[{i}].{key}[{j}].ip", _dict(address).get("ip")))
    return out


def endpoints_update_warnings(new: Obj, old: Obj) -> list[str]:
    """The Endpoints strategy's WarningsOnUpdate: :func:`endpoints_warnings` of ``new``."""
    return endpoints_warnings(new)


# ------------------------------------------------------------ Service

def service_warnings(obj: Obj, old: Obj | None = None) -> list[str]:
    """GetWarningsForService (the Service strategy's WarningsOnCreate; ``old`` is unused, as in kube) of a
    defaulted, prepared Service, in kube's order: the ``service.kubernetes.io/topology-aware-hints`` annotation;
    :func:`ip_warnings` of ``spec.clusterIPs[<i>]`` when ``spec.clusterIP`` is set and not None; for a headless
    ClusterIP Service the ignored ``spec.loadBalancerIP``, ``spec.externalIPs`` and ``spec.SessionAffinity``;
    :func:`ip_warnings` of ``spec.externalIPs[<i>]``; the externalIPs deprecation (not headless, not
    ExternalName); :func:`ip_warnings` of ``spec.loadBalancerIP``; :func:`cidr_warnings` of
    ``spec.loadBalancerSourceRanges[<i>]``; externalIPs on an ExternalName Service; an ``externalName`` on
    another type; ``trafficDistribution: PreferClose``."""
    obj = _dict(obj)
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    spec = _dict(obj.get("spec"))
    service_type = _str(spec.get("type")) or "ClusterIP"  # SetDefaults_Service
    cluster_ip = _str(spec.get("clusterIP"))
    external_ips = _list(spec.get("externalIPs"))
    headless = service_type == "ClusterIP" and cluster_ip == "None"
    out = []
    if TOPOLOGY_AWARE_HINTS in annotations:
        out.append(f"annotation {TOPOLOGY_AWARE_HINTS} is deprecated, please use {TOPOLOGY_MODE} instead")
    if cluster_ip and cluster_ip != "None":  # helper.IsServiceIPSet
        for i, ip in enumerate(_list(spec.get("clusterIPs"))):
            out.extend(ip_warnings(f"spec.clusterIPs[{i}]", ip))
    load_balancer_ip = _str(spec.get("loadBalancerIP"))
    if headless:
        if load_balancer_ip:
            out.append("spec.loadBalancerIP is ignored for headless services")
        if external_ips:
            out.append("spec.externalIPs is ignored for headless services")
        if (_str(spec.get("sessionAffinity")) or "None") != "None":
            out.append("spec.SessionAffinity is ignored for headless services")
    for i, ip in enumerate(external_ips):
        out.extend(ip_warnings(f"spec.externalIPs[{i}]", ip))
    if external_ips and not headless and service_type != "ExternalName":
        out.append("spec.externalIPs is deprecated and may no longer be implemented in some clusters")
    if load_balancer_ip:
        out.extend(ip_warnings("spec.loadBalancerIP", load_balancer_ip))
    for i, cidr in enumerate(_list(spec.get("loadBalancerSourceRanges"))):
        out.extend(cidr_warnings(f"spec.loadBalancerSourceRanges[{i}]", cidr))
    if service_type == "ExternalName" and external_ips:
        out.append('spec.externalIPs is ignored when spec.type is "ExternalName"')
    if service_type != "ExternalName" and _str(spec.get("externalName")):
        out.append('spec.externalName is ignored when spec.type is not "ExternalName"')
    if spec.get("trafficDistribution") == "PreferClose":
        out.append('spec.trafficDistribution: "PreferClose" is deprecated; use "PreferSameZone"')
    return out


def service_update_warnings(new: Obj, old: Obj) -> list[str]:
    """The Service strategy's WarningsOnUpdate: GetWarningsForService(new, old) (:func:`service_warnings`)."""
    return service_warnings(new, old)


def service_status_update_warnings(new: Obj, old: Obj) -> list[str]:
    """serviceStatusStrategy.WarningsOnUpdate (``/status``): :func:`ip_warnings` of every set
    ``status.loadBalancer.ingress[<i>].ip``."""
    ingress = _list(_dict(_dict(_dict(new).get("status")).get("loadBalancer")).get("ingress"))
    out = []
    for i, item in enumerate(ingress):
        ip = _str(_dict(item).get("ip"))
        if ip:
            out.extend(ip_warnings(f"status.loadBalancer.ingress[{i}]", ip))
    return out
