"""The Service rules of kube 1.37's ValidateService / ValidateServiceUpdate that ServiceStrategy did not have yet.

Source: kubernetes ``pkg/apis/core/validation/validation.go`` (kube 1.37):
``validateService`` (the body ``ValidateServiceCreate`` and
``ValidateServiceUpdate`` share), ``validateServicePort``,
``validateClientIPAffinityConfig`` / ``validateAffinityTimeout``,
``validateLoadBalancerClassField``, ``validateServiceExternalTrafficFieldsUpdate``,
``validateServiceInternalTrafficFieldsValue``, ``validateServiceTrafficDistribution``,
``validateUpgradeDowngradeIPFamilies``, the ``IsValidIPForLegacyField`` /
``IsValidCIDRForLegacyField`` wrappers (StrictIPCIDRValidation on, values the
old object already held pass unchecked) and ``ValidateEndpointIP``.

Every function takes the v1 ``spec`` dict kapi stores (defaulted: ``type``,
``sessionAffinity``, port ``protocol``, ``internalTrafficPolicy``,
``allocateLoadBalancerNodePorts``), plus the object's annotations or the old
spec where kube looks at them, and returns kube's causes in kube's order. An
absent key is the Go zero value (a nil pointer for the pointer fields
``appProtocol``, ``loadBalancerClass``, ``allocateLoadBalancerNodePorts``,
``internalTrafficPolicy``, ``trafficDistribution``, ``sessionAffinityConfig``);
a value of the wrong JSON type is left to the schema layer (no cause, no crash).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kapi.errors import Cause
from kapi.kinds.endpoints import validate_endpoint_ip
from kapi.kinds.fields import duplicate, go_strings, go_value, is_valid_port_name, not_supported
from kapi.objectmeta import forbidden, invalid, required, validate_labels
from kapi.validation import (
    VALID_CIDR_MSG,
    is_qualified_name,
    is_valid_ip_for_legacy_field,
    parse_ip_sloppy,
)
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list
from kapi.values import as_str as _str

__all__ = [
    "ANNOTATION_LOAD_BALANCER_SOURCE_RANGES",
    "ANNOTATION_TOPOLOGY_AWARE_HINTS",
    "ANNOTATION_TOPOLOGY_MODE",
    "INTERNAL_TRAFFIC_POLICIES",
    "MAX_CLIENT_IP_AFFINITY_SECONDS",
    "TRAFFIC_DISTRIBUTIONS",
    "validate_allocate_load_balancer_node_ports",
    "validate_duplicate_ports",
    "validate_external_ips",
    "validate_external_traffic_fields_update",
    "validate_internal_traffic_policy",
    "validate_load_balancer_class",
    "validate_load_balancer_source_ranges",
    "validate_service_port_rest",
    "validate_service_selector",
    "validate_service_update_rest",
    "validate_session_affinity_config",
    "validate_spec_after_external_traffic_policy",
    "validate_spec_before_external_traffic_policy",
    "validate_topology_annotations",
    "validate_traffic_distribution",
    "validate_upgrade_downgrade_ip_families",
]

Obj = dict[str, Any]

ANNOTATION_TOPOLOGY_MODE = "service.kubernetes.io/topology-mode"  # core.AnnotationTopologyMode
ANNOTATION_TOPOLOGY_AWARE_HINTS = "service.kubernetes.io/topology-aware-hints"  # DeprecatedAnnotationTopologyAwareHints
ANNOTATION_LOAD_BALANCER_SOURCE_RANGES = "service.beta.kubernetes.io/load-balancer-source-ranges"
MAX_CLIENT_IP_AFFINITY_SECONDS = 86400  # core.MaxClientIPServiceAffinitySeconds
INTERNAL_TRAFFIC_POLICIES = ("Cluster", "Local")  # sets.List(supportedServiceInternalTrafficPolicy)
# PreferSameTrafficDistribution is GA (locked on) since 1.35: kube's list, in its (unsorted) order
TRAFFIC_DISTRIBUTIONS = ("PreferClose", "PreferSameZone", "PreferSameNode")
LOAD_BALANCER_ONLY = "may only be used when `type` is 'LoadBalancer'"
CHANGED = "may not change once set"
IMMUTABLE = "field is immutable"
CLIENT_IP_REQUIRED = "when session affinity type is ClientIP"
SOURCE_RANGES_PATH = "spec.LoadBalancerSourceRanges"  # kube's path, capital L (a historical accident)
SOURCE_RANGES_ANNOTATION_PATH = f"metadata.annotations[{ANNOTATION_LOAD_BALANCER_SOURCE_RANGES}]"


# ------------------------------------------------------------ small helpers

# unicode.IsSpace, what strings.TrimSpace trims (Python's str.isspace adds U+001C-U+001F)
_GO_SPACE = "".join(chr(c) for c in range(0x3000 + 1) if chr(c).isspace() and c not in range(0x1C, 0x20))


def _type(spec: Obj) -> str:
    return _str(spec.get("type"))


def _cluster_ips(spec: Obj) -> list[Any]:
    """The internal ``ClusterIPs`` (NormalizeClusterIPs ran: a lone ``clusterIP`` stands for ``[clusterIP]``)."""
    ips = _list(spec.get("clusterIPs"))
    if not ips and isinstance(spec.get("clusterIP"), str) and spec["clusterIP"]:
        return [spec["clusterIP"]]
    return ips


def _headless(spec: Obj) -> bool:
    """isHeadlessService: ``clusterIPs`` is exactly ``["None"]``."""
    return _cluster_ips(spec) == ["None"]


def needs_health_check(spec: Obj) -> bool:
    """apiservice.NeedsHealthCheck: a LoadBalancer Service with ``externalTrafficPolicy: Local`` (it gets a
    ``healthCheckNodePort``)."""
    return _type(spec) == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _pointer(spec: Obj, key: str) -> str | None:
    """A ``*string`` field: its value when it is a JSON string (``""`` is a set pointer), else None (nil)."""
    value = spec.get(key)
    return value if isinstance(value, str) else None


def _legacy_cidr(value: str) -> list[str]:
    """apimachinery parseCIDR with strict validation (IsValidCIDRForLegacyField, StrictIPCIDRValidation on): one
    message at most, and no canonical-form rule (``2001:DB8::/64`` passes)."""
    ip, sep, bits = value.partition("/")
    sloppy = parse_ip_sloppy(ip)
    if not sep or sloppy is None or not bits.isascii() or not bits.isdigit() or int(bits) > sloppy.max_prefixlen:
        return [VALID_CIDR_MSG]
    try:
        strict = None if "%" in ip else ipaddress.ip_address(ip)
    except ValueError:
        strict = None
    if strict is None or (len(bits) > 1 and bits.startswith("0")):
        return ["must not have leading 0s in IP or prefix length"]
    if isinstance(strict, ipaddress.IPv6Address) and strict.ipv4_mapped is not None:
        return ["must not have an IPv4-mapped IPv6 address"]
    if strict != ipaddress.ip_network(f"{strict}/{int(bits)}", strict=False).network_address:
        return ["must not have bits set beyond the prefix length"]
    return []


def _go_families(values: Any) -> str:
    """A ``[]core.IPFamily`` as ``%#v`` prints it: ``[]core.IPFamily{"IPv4"}``, ``[]core.IPFamily(nil)``."""
    if not isinstance(values, list):
        return "[]core.IPFamily(nil)"
    return "[]core.IPFamily{" + ", ".join(go_value(v) for v in values) + "}"


def _bad(path: str, shown: str, detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


# ------------------------------------------------------------ ValidateService, in kube's order

def validate_topology_annotations(annotations: Any) -> list[Cause]:
    """validateService's first check: with both ``service.kubernetes.io/topology-mode`` and the deprecated
    ``service.kubernetes.io/topology-aware-hints`` set, they must agree (``metadata.annotations[<mode key>]:
    Invalid value: "<mode>": must match annotations[<hints key>] when both are specified``).

    ``annotations``: the Service's ``metadata.annotations`` dict.
    """
    annotations = _dict(annotations)
    if ANNOTATION_TOPOLOGY_MODE in annotations and ANNOTATION_TOPOLOGY_AWARE_HINTS in annotations:
        mode = annotations[ANNOTATION_TOPOLOGY_MODE]
        if mode != annotations[ANNOTATION_TOPOLOGY_AWARE_HINTS]:
            return [invalid(f"metadata.annotations[{ANNOTATION_TOPOLOGY_MODE}]", mode,
                            f"must match annotations[{ANNOTATION_TOPOLOGY_AWARE_HINTS}] when both are specified")]
    return []


def validate_service_port_rest(port: Any, path: str) -> list[Cause]:
    """validateServicePort's tail: ``targetPort`` as a string (ValidatePortNumOrName's name case: an
    IANA_SVC_NAME, ``<path>.targetPort: Invalid value: "<name>": <IsValidPortName message>``; the numeric case is
    ServiceStrategy's), then ``appProtocol`` (ValidateQualifiedName, when set, ``""`` included).

    ``port``: one ``spec.ports[i]`` dict; ``path``: ``"spec.ports[<i>]"``.
    """
    port = _dict(port)
    out: list[Cause] = []
    target = port.get("targetPort")
    if isinstance(target, str):
        out.extend(invalid(f"{path}.targetPort", target, msg) for msg in is_valid_port_name(target))
    app_protocol = _pointer(port, "appProtocol")
    if app_protocol is not None:
        out.extend(invalid(f"{path}.appProtocol", app_protocol, msg) for msg in is_qualified_name(app_protocol))
    return out


def validate_service_selector(spec: Obj) -> list[Cause]:
    """validateService's ``selector``: ValidateLabels at ``spec.selector`` (each key a qualified name, each value a
    label value; every cause on ``spec.selector``)."""
    selector = spec.get("selector")
    return validate_labels(selector, "spec.selector") if isinstance(selector, dict) else []


def validate_session_affinity_config(spec: Obj) -> list[Cause]:
    """validateService's ``sessionAffinityConfig`` after the ``sessionAffinity`` value check.

    ClientIP (validateClientIPAffinityConfig): the config, its ``clientIP`` and its ``timeoutSeconds`` are each
    Required (``Required value: when session affinity type is ClientIP``, stopping at the first missing one),
    and the timeout is 1-86400 (validateAffinityTimeout: ``spec.sessionAffinityConfig.clientIP.timeoutSeconds:
    Invalid value: 0: must be greater than 0 and less than 86400``). None: no config (``spec.sessionAffinityConfig:
    Forbidden: must not be set when session affinity is None``; defaulting drops it, so only a webhook gets here).
    """
    affinity = spec.get("sessionAffinity")
    config = spec.get("sessionAffinityConfig")
    path = "spec.sessionAffinityConfig"
    if affinity == "None":
        return [forbidden(path, "must not be set when session affinity is None")] if config is not None else []
    if affinity != "ClientIP":
        return []
    if config is None:
        return [required(path, CLIENT_IP_REQUIRED)]
    if not isinstance(config, dict):
        return []
    client_ip = config.get("clientIP")
    if client_ip is None:
        return [required(f"{path}.clientIP", CLIENT_IP_REQUIRED)]
    if not isinstance(client_ip, dict):
        return []
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        return [required(f"{path}.clientIP.timeoutSeconds", CLIENT_IP_REQUIRED)]
    seconds = _int(timeout)
    if seconds is not None and not 0 < seconds <= MAX_CLIENT_IP_AFFINITY_SECONDS:
        return [invalid(f"{path}.clientIP.timeoutSeconds", seconds,
                        f"must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY_SECONDS}")]
    return []


def validate_external_ips(spec: Obj, old_spec: Obj | None = None) -> list[Cause]:
    """validateService's ``externalIPs``: each ``spec.externalIPs[i]`` an IP by the legacy rule
    (IsValidIPForLegacyField: ``must be a valid IP address, (e.g. ...)``, ``must not have leading 0s``, ``must not
    be an IPv4-mapped IPv6 address``; skipped for a value the old Service already listed), and only when that passes
    ValidateEndpointIP's non-special checks (unspecified, loopback, link-local, link-local multicast).

    ``old_spec``: the stored spec on update (its ``externalIPs`` ratchet), None on create.
    """
    existing = {ip for ip in _list(_dict(old_spec).get("externalIPs")) if isinstance(ip, str)}
    out: list[Cause] = []
    for i, ip in enumerate(_list(spec.get("externalIPs"))):
        if not isinstance(ip, str):
            continue
        path = f"spec.externalIPs[{i}]"
        errors = [] if ip in existing else [invalid(path, ip, msg) for msg in is_valid_ip_for_legacy_field(ip)]
        out.extend(errors or validate_endpoint_ip(ip, path))
    return out


def validate_duplicate_ports(spec: Obj) -> list[Cause]:
    """validateService's two duplicate checks, after the ClusterIP ``nodePort`` rule.

    First each non-zero ``nodePort`` unique per protocol (``spec.ports[i].nodePort: Duplicate value: 30080``), then
    each (protocol, port) pair unique (``spec.ports[i]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP",
    AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}``:
    kube prints the key struct it built, only Protocol and Port set).
    """
    ports = [_dict(p) for p in _list(spec.get("ports"))]
    out: list[Cause] = []
    node_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        node_port = _int(port.get("nodePort"))
        if not node_port:
            continue
        key = (_str(port.get("protocol")), node_port)
        if key in node_ports:
            out.append(duplicate(f"spec.ports[{i}].nodePort", node_port))
        node_ports.add(key)
    seen: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        number = _int(port.get("port"))
        if number is None and port.get("port") is not None:
            continue  # a wrong JSON type: the schema layer's
        protocol = _str(port.get("protocol"))
        key = (protocol, number or 0)
        if key in seen:
            shown = (f"core.ServicePort{{Name:\"\", Protocol:{go_value(protocol)}, AppProtocol:(*string)(nil), "
                     f"Port:{number or 0}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, "
                     f"NodePort:0}}")
            out.append(Cause("FieldValueDuplicate", f"Duplicate value: {shown}", f"spec.ports[{i}]"))
        seen.add(key)
    return out


def validate_load_balancer_source_ranges(spec: Obj, annotations: Any = None, old_spec: Obj | None = None,
                                         old_annotations: Any = None) -> list[Cause]:
    """validateService's source ranges: the ``loadBalancerSourceRanges`` field, else the
    ``service.beta.kubernetes.io/load-balancer-source-ranges`` annotation.

    Field (non-empty): only for LoadBalancer (``spec.LoadBalancerSourceRanges: Forbidden: may only be used when
    `type` is 'LoadBalancer'``: kube's capitalized path), then each value, trimmed of spaces, a CIDR by the legacy
    rule (``spec.LoadBalancerSourceRanges[i]: Invalid value: "<trimmed>": must be a valid CIDR value, (e.g.
    10.9.8.0/24 or 2001:db8::/64)`` / leading 0s / IPv4-mapped / bits beyond the prefix), a value the old spec
    held (trimmed) passing unchecked. Annotation (present, even empty): the same Forbidden on
    ``metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]``, then, unless the value is the
    old object's, each comma-separated trimmed piece of the trimmed value a CIDR (causes on the annotation path).

    ``annotations`` / ``old_annotations``: ``metadata.annotations`` of the new / stored object; ``old_spec``: the
    stored spec (None on create).
    """
    out: list[Cause] = []
    ranges = _list(spec.get("loadBalancerSourceRanges"))
    is_lb = _type(spec) == "LoadBalancer"
    if ranges:
        if not is_lb:
            out.append(forbidden(SOURCE_RANGES_PATH, LOAD_BALANCER_ONLY))
        existing = {v.strip(_GO_SPACE) for v in _list(_dict(old_spec).get("loadBalancerSourceRanges"))
                    if isinstance(v, str)} if old_spec is not None else set()
        for i, value in enumerate(ranges):
            if not isinstance(value, str):
                continue
            value = value.strip(_GO_SPACE)
            if value not in existing:
                out.extend(invalid(f"{SOURCE_RANGES_PATH}[{i}]", value, msg) for msg in _legacy_cidr(value))
        return out
    annotations = _dict(annotations)
    if ANNOTATION_LOAD_BALANCER_SOURCE_RANGES not in annotations:
        return out
    value = annotations[ANNOTATION_LOAD_BALANCER_SOURCE_RANGES]
    if not is_lb:
        out.append(forbidden(SOURCE_RANGES_ANNOTATION_PATH, LOAD_BALANCER_ONLY))
    if not isinstance(value, str):
        return out
    if old_spec is not None and _dict(old_annotations).get(ANNOTATION_LOAD_BALANCER_SOURCE_RANGES, "") == value:
        return out
    value = value.strip(_GO_SPACE)
    if value:
        for piece in value.split(","):
            piece = piece.strip(_GO_SPACE)
            out.extend(invalid(SOURCE_RANGES_ANNOTATION_PATH, piece, msg) for msg in _legacy_cidr(piece))
    return out


def validate_allocate_load_balancer_node_ports(spec: Obj) -> list[Cause]:
    """validateService's ``allocateLoadBalancerNodePorts``: set only for LoadBalancer (``spec.allocateLoadBalancer
    NodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'``), and a LoadBalancer's must be set
    (``allocateLoadBalancerNodePorts: Required value``: kube's path lacks ``spec.``; defaulting sets it, so only a
    webhook that clears it gets here)."""
    value = spec.get("allocateLoadBalancerNodePorts")
    is_lb = _type(spec) == "LoadBalancer"
    if value is not None and not is_lb:
        return [forbidden("spec.allocateLoadBalancerNodePorts", LOAD_BALANCER_ONLY)]
    if is_lb and value is None:
        return [required("allocateLoadBalancerNodePorts")]
    return []


def validate_load_balancer_class(spec: Obj, old_spec: Obj | None = None) -> list[Cause]:
    """validateLoadBalancerClassField(old, new).

    On update (``old_spec`` given) with both LoadBalancer, the class may not change, nor be set or unset
    (``spec.loadBalancerClass: Invalid value: "<new>" (or "null"): may not change once set``). Then a
    LoadBalancer's class, when set, is a qualified name; any other type may not set it (``spec.loadBalancerClass:
    Forbidden: may only be used when `type` is 'LoadBalancer'``).

    kube calls it twice on update: ``validate_load_balancer_class(spec, old_spec)`` in ValidateServiceUpdate's
    prefix (:func:`validate_service_update_rest`), and ``validate_load_balancer_class(spec)`` inside
    validateService, so an update repeats the format / Forbidden causes.
    """
    out: list[Cause] = []
    value = _pointer(spec, "loadBalancerClass")
    is_lb = _type(spec) == "LoadBalancer"
    if old_spec is not None and is_lb and _type(old_spec) == "LoadBalancer":
        if _pointer(old_spec, "loadBalancerClass") != value:
            out.append(invalid("spec.loadBalancerClass", value, CHANGED))
    if value is not None:
        if is_lb:
            out.extend(invalid("spec.loadBalancerClass", value, msg) for msg in is_qualified_name(value))
        else:
            out.append(forbidden("spec.loadBalancerClass", LOAD_BALANCER_ONLY))
    return out


def validate_internal_traffic_policy(spec: Obj) -> list[Cause]:
    """validateServiceInternalTrafficFieldsValue: unset is Required for ClusterIP, NodePort and LoadBalancer
    (``spec.internalTrafficPolicy: Required value``; ExternalName may leave it unset), a set value Cluster or Local
    (``Unsupported value: "x": supported values: "Cluster", "Local"``, for any type)."""
    policy = spec.get("internalTrafficPolicy")
    if policy is None:
        if _type(spec) in ("ClusterIP", "NodePort", "LoadBalancer"):
            return [required("spec.internalTrafficPolicy")]
        return []
    if isinstance(policy, str) and policy not in INTERNAL_TRAFFIC_POLICIES:
        return [not_supported("spec.internalTrafficPolicy", policy, INTERNAL_TRAFFIC_POLICIES)]
    return []


def validate_traffic_distribution(spec: Obj) -> list[Cause]:
    """validateServiceTrafficDistribution: a set ``trafficDistribution`` (``""`` included) is PreferClose,
    PreferSameZone or PreferSameNode (PreferSameTrafficDistribution GA since 1.35: ``Unsupported value: "x":
    supported values: "PreferClose", "PreferSameZone", "PreferSameNode"``)."""
    value = _pointer(spec, "trafficDistribution")
    if value is not None and value not in TRAFFIC_DISTRIBUTIONS:
        return [not_supported("spec.trafficDistribution", value, TRAFFIC_DISTRIBUTIONS)]
    return []


def validate_spec_before_external_traffic_policy(spec: Obj, annotations: Any = None, old_spec: Obj | None = None,
                                                 old_annotations: Any = None) -> list[Cause]:
    """validateService from the duplicate checks to the class, in order, for the slot between the ClusterIP
    ``nodePort`` Forbidden and validateServiceExternalTrafficPolicy: :func:`validate_duplicate_ports`,
    :func:`validate_load_balancer_source_ranges`, :func:`validate_allocate_load_balancer_node_ports`,
    :func:`validate_load_balancer_class` (without the old spec, as validateService calls it)."""
    return (validate_duplicate_ports(spec)
            + validate_load_balancer_source_ranges(spec, annotations, old_spec, old_annotations)
            + validate_allocate_load_balancer_node_ports(spec)
            + validate_load_balancer_class(spec))


def validate_spec_after_external_traffic_policy(spec: Obj) -> list[Cause]:
    """validateService's last two checks, after validateServiceExternalTrafficPolicy:
    :func:`validate_internal_traffic_policy`, then :func:`validate_traffic_distribution`."""
    return validate_internal_traffic_policy(spec) + validate_traffic_distribution(spec)


# ------------------------------------------------------------ ValidateServiceUpdate's own checks

def validate_upgrade_downgrade_ip_families(spec: Obj, old_spec: Obj) -> list[Cause]:
    """validateUpgradeDowngradeIPFamilies: assigned ``ipFamilies`` keep their order (none of it for ExternalName on
    either side, nor when either side is headless).

    Same count: each changed family gives ``spec.ipFamilies[0]: Invalid value: []core.IPFamily{...}: may not change
    once set`` (kube always says ``[0]``). Fewer: no clusterIPs left gives ``... primary ipFamily can not be unset``
    (the families shown), a changed primary ``spec.ipFamilies[0]: Invalid value: []string{<clusterIPs>}: may not
    change once set``, and one family left needs SingleStack (``spec.ipFamilyPolicy: Invalid value: "<policy>" or
    "null": must be set to 'SingleStack' when releasing the secondary ipFamily``). More: a changed primary as in
    the fewer case.
    """
    if "ExternalName" in (_type(spec), _type(old_spec)):
        return []
    if _headless(spec) or _headless(old_spec):
        return []
    families, old = _list(spec.get("ipFamilies")), _list(old_spec.get("ipFamilies"))
    shown_ips = go_strings(spec.get("clusterIPs"))
    out: list[Cause] = []
    if len(families) == len(old):
        shown = _go_families(spec.get("ipFamilies"))
        out.extend(_bad("spec.ipFamilies[0]", shown, CHANGED) for i, family in enumerate(old) if family != families[i])
    elif len(families) < len(old):
        if not _cluster_ips(spec):
            out.append(_bad("spec.ipFamilies[0]", _go_families(spec.get("ipFamilies")),
                            "primary ipFamily can not be unset"))
        if families and families[0] != old[0]:
            out.append(_bad("spec.ipFamilies[0]", shown_ips, CHANGED))
        if len(families) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            policy = _pointer(spec, "ipFamilyPolicy")
            out.append(invalid("spec.ipFamilyPolicy", policy,
                               "must be set to 'SingleStack' when releasing the secondary ipFamily"))
    elif old and families and families[0] != old[0]:
        out.append(_bad("spec.ipFamilies[0]", shown_ips, CHANGED))
    return out


def validate_external_traffic_fields_update(spec: Obj, old_spec: Obj) -> list[Cause]:
    """validateServiceExternalTrafficFieldsUpdate: while both sides need a health check (LoadBalancer with
    ``externalTrafficPolicy: Local``), ``healthCheckNodePort`` may not change (``spec.healthCheckNodePort:
    Forbidden: field is immutable``)."""
    if needs_health_check(old_spec) and needs_health_check(spec):
        if (_int(spec.get("healthCheckNodePort")) or 0) != (_int(old_spec.get("healthCheckNodePort")) or 0):
            return [forbidden("spec.healthCheckNodePort", IMMUTABLE)]
    return []


def validate_service_update_rest(spec: Obj, old_spec: Obj) -> list[Cause]:
    """ValidateServiceUpdate's checks after validateUpgradeDowngradeClusterIPs and before validateService, in order:
    :func:`validate_upgrade_downgrade_ip_families`, :func:`validate_load_balancer_class` with the old spec,
    :func:`validate_external_traffic_fields_update`."""
    return (validate_upgrade_downgrade_ip_families(spec, old_spec)
            + validate_load_balancer_class(spec, old_spec)
            + validate_external_traffic_fields_update(spec, old_spec))
