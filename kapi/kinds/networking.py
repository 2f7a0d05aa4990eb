"""The networking.k8s.io group's kinds: NetworkPolicy, Ingress, IngressClass, ServiceCIDR, IPAddress.

From ``pkg/apis/networking/v1/defaults.go``, ``pkg/apis/networking/validation/validation.go`` and
``pkg/registry/networking/<kind>/strategy.go`` (kube-apiserver 1.37):

- NetworkPolicy: SetDefaults_NetworkPolicyPort (``protocol: TCP``), SetDefaults_NetworkPolicy
  (no ``policyTypes``: ``[Ingress]``, plus ``Egress`` when there are egress rules); the spec is a struct
  with a non-``omitempty`` ``podSelector`` (``spec: {podSelector: {}}`` at least). Validation: the pod
  selector, each rule's ports (protocol, port number or name, ``endPort``) and peers (exactly one kind of
  peer, ``ipBlock`` CIDRs, ``except`` a strict subset), at most two policy types, each Ingress or Egress.
  Generation 1 on create, bumped by spec changes (the generic rules).
- Ingress: PrepareForCreate resets ``status`` to the zero ``IngressStatus`` (``{loadBalancer: {}}``);
  validation: ``defaultBackend`` or ``rules``, hosts (DNS names, wildcards), HTTP paths (``pathType``
  required and one of the three, absolute paths without ``//``, ``/./``, ...), backends (service xor
  resource, a DNS-1035 service name, a port name or number), TLS hosts and secret names, the
  ``ingressClassName``; on create the ``kubernetes.io/ingress.class`` annotation must match
  ``ingressClassName``, and it warns as deprecated.
- IngressClass: SetDefaults_IngressClass (a parameters reference without ``scope`` is ``Cluster``);
  ``controller`` required, a domain-prefixed path of at most 250 characters, immutable; the parameters
  reference's kind, name, scope and namespace.
- ServiceCIDR (GA in kube 1.33): ``spec.cidrs`` one or two CIDRs (strict IsValidCIDR), one per IP family; on
  update the CIDRs are immutable, except that a single-CIDR object may gain a second family (kube issue 131261).
  Its status (conditions) is reset on create and kept on main-resource updates (the ServiceCIDRStatusFieldWiping
  gate, on since kube 1.36); the ``status`` subresource keeps the spec.
- IPAddress: the name is an IP in canonical form (ValidateIPAddressName: strict IsValidIP); ``spec.parentRef``
  required, with ``resource`` and ``name`` (path segment names), a DNS-subdomain ``group`` when set; the parent
  reference is immutable.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.core import VALID_IP, ip_family
from kapi.kinds.fields import (
    go_strings,
    go_value,
    immutable,
    immutable_shown,
    is_valid_port_name,
    not_supported,
    validate_label_selector,
)
from kapi.kinds.podspec import PORT_RANGE_MSG
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import (
    domain_prefixed_path_errors,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_cidr,
    is_valid_path_segment_name,
    is_wildcard_dns1123_subdomain,
    parse_ip_sloppy,
)
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list
from kapi.values import as_str as _text

GROUP = "networking.k8s.io"
PROTOCOLS = ("TCP", "UDP", "SCTP")  # ValidateNetworkPolicyPort's order
POLICY_TYPES = ("Ingress", "Egress")
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")  # sets.List: sorted
PARAMETER_SCOPES = ("Cluster", "Namespace")  # sets.List: sorted
INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
INVALID_PATH_SUFFIXES = ("/..", "/.")
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
MAX_CONTROLLER_LENGTH = 250
VALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
NOT_AN_IP = "must be a DNS name, not an IP address"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def parse_cidr(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """netutils.ParseCIDRSloppy: ``<ip>/<prefix>``, IPv4 parts may have leading zeros; the network it names
    (host bits masked), None when it is not a CIDR."""
    ip, sep, prefix = value.partition("/")
    family = ip_family(ip)
    if not sep or family is None or not prefix.isascii() or not prefix.isdigit():
        return None
    if family == "IPv4":
        ip = ".".join(str(int(part)) for part in ip.split("."))
    try:
        return ipaddress.ip_network(f"{ip}/{int(prefix)}", strict=False)
    except ValueError:
        return None


# ------------------------------------------------------------ NetworkPolicy

def default_network_policy(obj: Obj) -> None:
    """SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort; the spec struct and its ``podSelector``
    are always encoded."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if spec.get("podSelector") is None:
        spec["podSelector"] = {}
    for direction in ("ingress", "egress"):
        for rule in _list(spec.get(direction)):
            for port in _list(_dict(rule).get("ports")):
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not _list(spec.get("policyTypes")):
        spec["policyTypes"] = ["Ingress", "Egress"] if _list(spec.get("egress")) else ["Ingress"]


def validate_network_policy_port(port: Any, path: str) -> list[Cause]:
    """ValidateNetworkPolicyPort: protocol TCP/UDP/SCTP; a numeric port 1-65535 with ``endPort`` >= it; a named
    port an IANA service name without ``endPort``; no ``endPort`` without a port."""
    port = _dict(port)
    out: list[Cause] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        out.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    number, end = port.get("port"), _int(port.get("endPort"))
    if number is None:
        if end is not None:
            out.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is not specified"))
    elif isinstance(number, str):
        if end is not None:
            out.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is non-numeric"))
        out.extend(invalid(f"{path}.port", number, msg) for msg in is_valid_port_name(number))
    else:
        value = _int(number) or 0
        if not 1 <= value <= 65535:
            out.append(invalid(f"{path}.port", value, PORT_RANGE_MSG))
        if end is not None:
            if end < value:
                out.append(invalid(f"{path}.endPort", end, "must be greater than or equal to `port`"))
            if not 1 <= end <= 65535:
                out.append(invalid(f"{path}.endPort", end, PORT_RANGE_MSG))
    return out


def validate_ip_block(block: Any, path: str, allowed: frozenset[str]) -> list[Cause]:
    """ValidateIPBlock: ``cidr`` required and a CIDR, each ``except[i]`` a CIDR strictly inside it; CIDRs the
    stored object already had (``allowed``) are not checked again."""
    block = _dict(block)
    cidr = _str(block.get("cidr"))
    if not cidr:
        return [required(f"{path}.cidr")]
    network = parse_cidr(cidr)
    out: list[Cause] = []
    if network is None:
        if cidr not in allowed:
            out.append(invalid(f"{path}.cidr", cidr, VALID_CIDR))
        return out
    for i, text in enumerate(_list(block.get("except"))):
        text = _str(text)
        epath = f"{path}.except[{i}]"
        inner = parse_cidr(text)
        if inner is None:
            if text not in allowed:
                out.append(invalid(epath, text, VALID_CIDR))
            continue
        if (inner.version != network.version or inner.network_address not in network
                or network.prefixlen >= inner.prefixlen):
            out.append(invalid(epath, text, "must be a strict subset of `cidr`"))
    return out


def validate_network_policy_peer(peer: Any, path: str, allowed: frozenset[str]) -> list[Cause]:
    """ValidateNetworkPolicyPeer: at least one of podSelector, namespaceSelector, ipBlock; ipBlock alone."""
    peer = _dict(peer)
    out: list[Cause] = []
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            out.extend(validate_label_selector(peer[key], f"{path}.{key}"))
    if peer.get("ipBlock") is not None:
        count += 1
        out.extend(validate_ip_block(peer["ipBlock"], f"{path}.ipBlock", allowed))
    if count == 0:
        out.append(required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        out.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return out


def validate_network_policy(obj: Obj, allowed: frozenset[str] = frozenset()) -> list[Cause]:
    """ValidateNetworkPolicySpec in kube's order: podSelector, ingress rules (ports, from), egress rules
    (ports, to), policyTypes (at most two, each Ingress or Egress)."""
    spec = _dict(obj.get("spec"))
    out = validate_label_selector(spec.get("podSelector"), "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(_list(spec.get(direction))):
            rule, rpath = _dict(rule), f"spec.{direction}[{i}]"
            for j, port in enumerate(_list(rule.get("ports"))):
                out.extend(validate_network_policy_port(port, f"{rpath}.ports[{j}]"))
            for j, peer in enumerate(_list(rule.get(peers))):
                out.extend(validate_network_policy_peer(peer, f"{rpath}.{peers}[{j}]", allowed))
    types = _list(spec.get("policyTypes"))
    if len(types) > len(POLICY_TYPES):
        shown = "[]networking.PolicyType{" + ", ".join(f'"{_str(t)}"' for t in types) + "}"
        out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: may not specify more than two policyTypes",
                         "spec.policyTypes"))
        return out
    out.extend(not_supported(f"spec.policyTypes[{i}]", t, POLICY_TYPES)
               for i, t in enumerate(types) if t not in POLICY_TYPES)
    return out


def _policy_cidrs(obj: Obj) -> frozenset[str]:
    """Every ipBlock ``cidr`` and ``except`` value of a stored NetworkPolicy (ValidateNetworkPolicyUpdate's
    AllowCIDRsEvenIfInvalid)."""
    spec, out = _dict(obj.get("spec")), set[str]()
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for rule in _list(spec.get(direction)):
            for peer in _list(_dict(rule).get(peers)):
                block = _dict(_dict(peer).get("ipBlock"))
                out.update(_str(v) for v in [block.get("cidr"), *_list(block.get("except"))])
    return frozenset(out)


@register
class NetworkPolicyStrategy(Strategy):
    """NetworkPolicy: defaults and ValidateNetworkPolicy / ValidateNetworkPolicyUpdate."""

    group, kind = GROUP, "NetworkPolicy"

    def default(self, obj: Obj) -> None:
        """:func:`default_network_policy`."""
        default_network_policy(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_network_policy`."""
        return validate_network_policy(obj)

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """The spec again, letting CIDRs the stored object had stay (ValidateNetworkPolicyUpdate)."""
        return validate_network_policy(new, _policy_cidrs(old))


# ------------------------------------------------------------ Ingress

@dataclass(frozen=True)
class IngressOptions:
    """IngressValidationOptions: what an update tolerates because the stored Ingress already had it."""

    allow_invalid_secret_name: bool = False
    allow_invalid_wildcard_rule: bool = False
    relaxed_service_names: bool = False  # RelaxedServiceNameValidation is alpha (off) in kube 1.37


def _service_names(spec: Obj) -> list[str]:
    backends = [spec.get("defaultBackend")]
    for rule in _list(spec.get("rules")):
        backends.extend(_dict(e).get("backend") for e in _list(_dict(_dict(rule).get("http")).get("paths")))
    return [_str(_dict(_dict(b).get("service")).get("name")) for b in backends if _dict(b).get("service")]


def update_options(old: Obj) -> IngressOptions:
    """allowInvalidSecretName, allowInvalidWildcardHostRule and allowRelaxedServiceNameValidation of the stored
    Ingress: an invalid TLS secret name; a wildcard-host rule whose value is invalid; a backend service name that
    is a DNS label but not a DNS-1035 label."""
    spec = _dict(old.get("spec"))
    secret = any(is_dns1123_subdomain(_str(_dict(t).get("secretName"))) for t in _list(spec.get("tls"))
                 if _str(_dict(t).get("secretName")))
    wildcard = any("*" in _str(_dict(r).get("host")) and _validate_rules([{**_dict(r), "host": ""}], IngressOptions())
                   for r in _list(spec.get("rules")))
    relaxed = any(not is_dns1123_label(n) and is_dns1035_label(n) for n in _service_names(spec) if n)
    return IngressOptions(secret, wildcard, relaxed)


def _validate_backend(backend: Any, path: str, opts: IngressOptions) -> list[Cause]:
    """validateIngressBackend: exactly one of service and resource; a service needs a DNS-1035 name (a DNS label
    with ``opts.relaxed_service_names``) and a port name or number."""
    backend = _dict(backend)
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return _validate_local_reference(resource, f"{path}.resource", scoped=False)
    if service is None:
        return [invalid(path, "", "resource or service backend is required")]
    service = _dict(service)
    out: list[Cause] = []
    name = _str(service.get("name"))
    if not name:
        out.append(required(f"{path}.service.name"))
    else:
        check = is_dns1123_label if opts.relaxed_service_names else is_dns1035_label
        out.extend(invalid(f"{path}.service.name", name, msg) for msg in check(name))
    port = _dict(service.get("port"))
    port_name, port_number = _str(port.get("name")), _int(port.get("number")) or 0
    if port_name and port_number:
        out.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        out.extend(invalid(f"{path}.service.port.name", port_name, msg) for msg in is_valid_port_name(port_name))
    elif port_number:
        if not 1 <= port_number <= 65535:
            out.append(invalid(f"{path}.service.port.number", port_number, PORT_RANGE_MSG))
    else:
        out.append(required(path, "port name or number is required"))
    return out


def _validate_http_path(entry: Any, path: str, opts: IngressOptions) -> list[Cause]:
    """validateHTTPIngressPath: pathType required; Exact/Prefix need an absolute path without the invalid
    sequences and suffixes; ImplementationSpecific a path that is empty or absolute; then the backend."""
    entry = _dict(entry)
    path_type = entry.get("pathType")
    if path_type is None:
        return [required(f"{path}.pathType", "pathType must be specified")]
    value = _str(entry.get("path"))
    out: list[Cause] = []
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            out.append(invalid(f"{path}.path", value, "must be an absolute path"))
        out.extend(invalid(f"{path}.path", value, f"must not contain '{seq}'")
                   for seq in INVALID_PATH_SEQUENCES if seq in value)
        out.extend(invalid(f"{path}.path", value, f"cannot end with '{suffix}'")
                   for suffix in INVALID_PATH_SUFFIXES if value.endswith(suffix))
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            out.append(invalid(f"{path}.path", value, "must be an absolute path"))
    else:
        out.append(not_supported(f"{path}.pathType", path_type, PATH_TYPES))
    out.extend(_validate_backend(entry.get("backend"), f"{path}.backend", opts))
    return out


def _validate_rules(rules: list[Any], opts: IngressOptions) -> list[Cause]:
    """validateIngressRules: a host is a DNS name (not an IP), ``*.`` wildcards allowed; each HTTP rule needs
    paths."""
    out: list[Cause] = []
    for i, rule in enumerate(rules):
        rule, rpath = _dict(rule), f"spec.rules[{i}]"
        host = _str(rule.get("host"))
        if host:
            if ip_family(host) is not None:
                out.append(invalid(f"{rpath}.host", host, NOT_AN_IP))
            check = is_wildcard_dns1123_subdomain if "*" in host else is_dns1123_subdomain
            out.extend(invalid(f"{rpath}.host", host, msg) for msg in check(host))
        http = rule.get("http")
        if isinstance(http, dict) and not ("*" in host and opts.allow_invalid_wildcard_rule):
            paths = _list(http.get("paths"))
            if not paths:
                out.append(required(f"{rpath}.http.paths"))
            for j, entry in enumerate(paths):
                out.extend(_validate_http_path(entry, f"{rpath}.http.paths[{j}]", opts))
    return out


def _validate_tls(tls: list[Any], opts: IngressOptions) -> list[Cause]:
    """validateIngressTLS: hosts DNS subdomains (or wildcards), a secretName a DNS subdomain when set."""
    out: list[Cause] = []
    for i, entry in enumerate(tls):
        entry = _dict(entry)
        for j, host in enumerate(_list(entry.get("hosts"))):
            host = _str(host)
            check = is_wildcard_dns1123_subdomain if "*" in host else is_dns1123_subdomain
            out.extend(invalid(f"spec.tls[{i}].hosts[{j}]", host, msg) for msg in check(host))
        secret = _str(entry.get("secretName"))
        if secret and not opts.allow_invalid_secret_name:
            out.extend(invalid(f"spec.tls[{i}].secretName", secret, msg) for msg in is_dns1123_subdomain(secret))
    return out


def validate_ingress(obj: Obj, opts: IngressOptions | None = None) -> list[Cause]:
    """ValidateIngressSpec in kube's order: rules or defaultBackend, the default backend, rules, TLS,
    ``ingressClassName``."""
    opts = opts or IngressOptions()
    spec = _dict(obj.get("spec"))
    rules = _list(spec.get("rules"))
    out: list[Cause] = []
    if not rules and spec.get("defaultBackend") is None:
        shown = "[]networking.IngressRule(nil)" if spec.get("rules") is None else "[]networking.IngressRule{}"
        out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: either `defaultBackend` or `rules` must be "
                         "specified", "spec"))
    if spec.get("defaultBackend") is not None:
        out.extend(_validate_backend(spec["defaultBackend"], "spec.defaultBackend", opts))
    out.extend(_validate_rules(rules, opts))
    out.extend(_validate_tls(_list(spec.get("tls")), opts))
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str):
        out.extend(invalid("spec.ingressClassName", class_name, msg) for msg in is_dns1123_subdomain(class_name))
    return out


def _ingress_class_annotation(obj: Obj) -> str | None:
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    value = annotations.get(INGRESS_CLASS_ANNOTATION)
    return value if isinstance(value, str) else None


@register
class IngressStrategy(Strategy):
    """Ingress: the status starts as ``{loadBalancer: {}}``; ValidateIngressCreate / ValidateIngressUpdate."""

    group, kind = GROUP, "Ingress"
    #: ingressStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    validates_required = True
    status_zero: dict[str, Any] = {"loadBalancer": {}}

    def default(self, obj: Obj) -> None:
        """No defaults in kube; the structs its typed encoding always writes: ``spec``, each service backend's
        ``port``."""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = obj["spec"] = {}
        backends = [spec.get("defaultBackend")]
        for rule in _list(spec.get("rules")):
            backends.extend(_dict(entry).get("backend") for entry in _list(_dict(_dict(rule).get("http")).get("paths")))
        for backend in backends:
            service = _dict(backend).get("service")
            if isinstance(service, dict) and service.get("port") is None:
                service["port"] = {}

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateIngressCreate: :func:`validate_ingress`, and the class annotation matches
        ``ingressClassName`` when both are set."""
        out = validate_ingress(obj)
        annotation = _ingress_class_annotation(obj)
        class_name = _dict(obj.get("spec")).get("ingressClassName")
        if annotation is not None and isinstance(class_name, str) and annotation != class_name:
            out.append(invalid(f"annotations.{INGRESS_CLASS_ANNOTATION}", annotation,
                               "must match `ingressClassName` when both are specified"))
        return out

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """ValidateIngressUpdate: the spec again (no annotation check on update), tolerating what the stored
        Ingress already had (:func:`update_options`)."""
        return validate_ingress(new, update_options(old))

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateIngressStatusUpdate on ``status``: each load balancer ingress ``ip`` an IP (those the stored
        status had stay allowed), each ``hostname`` a DNS subdomain and not an IP."""
        if subresource != "status":
            return []
        def ingresses(obj: Obj) -> list[Any]:
            return _list(_dict(_dict(obj.get("status")).get("loadBalancer")).get("ingress"))
        known = {_text(_dict(i).get("ip")) for i in ingresses(old)}
        out: list[Cause] = []
        for i, entry in enumerate(ingresses(new)):
            entry, path = _dict(entry), f"status.loadBalancer.ingress[{i}]"
            ip, hostname = _text(entry.get("ip")), _text(entry.get("hostname"))
            if ip and ip_family(ip) is None and ip not in known:
                out.append(invalid(f"{path}.ip", ip, VALID_IP))
            if hostname:
                out.extend(invalid(f"{path}.hostname", hostname, m) for m in is_dns1123_subdomain(hostname))
                if ip_family(hostname) is not None:
                    out.append(invalid(f"{path}.hostname", hostname, NOT_AN_IP))
        return out

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the class annotation is deprecated."""
        if _ingress_class_annotation(obj) is None:
            return []
        return [f'annotation "{INGRESS_CLASS_ANNOTATION}" is deprecated, please use \'spec.ingressClassName\' '
                "instead"]


# ------------------------------------------------------------ IngressClass

def _validate_local_reference(ref: Any, path: str, scoped: bool) -> list[Cause]:
    """validateIngressTypedLocalObjectReference (``scoped`` False) / validateIngressClassParametersReference:
    apiGroup a DNS subdomain, kind and name required path segments; a parameters reference also needs
    ``scope`` Cluster (no namespace) or Namespace (with a namespace)."""
    ref = _dict(ref)
    out: list[Cause] = []
    group = ref.get("apiGroup")
    if isinstance(group, str):
        out.extend(invalid(f"{path}.apiGroup", group, msg) for msg in is_dns1123_subdomain(group))
    out.extend(_path_segment_names(ref, path, ("kind", "name")))
    if not scoped:
        return out
    scope = ref.get("scope")
    if scope is None:
        out.append(required(f"{path}.scope"))
        return out
    namespace = ref.get("namespace")
    if scope not in PARAMETER_SCOPES:
        out.append(not_supported(f"{path}.scope", scope, PARAMETER_SCOPES))
    elif scope == "Namespace":
        if namespace is None:
            out.append(required(f"{path}.namespace", "`parameters.scope` is set to 'Namespace'"))
        else:
            out.extend(invalid(f"{path}.namespace", namespace, msg) for msg in is_dns1123_label(_str(namespace)))
    elif namespace is not None:
        out.append(forbidden(f"{path}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return out


def validate_ingress_class(obj: Obj) -> list[Cause]:
    """validateIngressClassSpec: ``controller`` required, at most 250 characters, a domain-prefixed path; the
    parameters reference."""
    spec = _dict(obj.get("spec"))
    controller = _str(spec.get("controller"))
    out: list[Cause] = []
    if not controller:
        out.append(required("spec.controller"))
    else:
        if len(controller) > MAX_CONTROLLER_LENGTH:
            out.append(Cause("FieldValueTooLong", f"Too long: may not be more than {MAX_CONTROLLER_LENGTH} bytes",
                             "spec.controller"))
        out.extend(invalid("spec.controller", shown, msg) for shown, msg in domain_prefixed_path_errors(controller))
    if spec.get("parameters") is not None:
        out.extend(_validate_local_reference(spec["parameters"], "spec.parameters", scoped=True))
    return out


@register
class IngressClassStrategy(Strategy):
    """IngressClass: SetDefaults_IngressClass, ValidateIngressClass, ``controller`` immutable."""

    group, kind = GROUP, "IngressClass"
    validates_required = True

    def default(self, obj: Obj) -> None:
        """A parameters reference without ``scope`` is ``Cluster``; the spec struct is always encoded."""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = obj["spec"] = {}
        params = spec.get("parameters")
        if isinstance(params, dict) and params.get("scope") is None:
            params["scope"] = "Cluster"

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_ingress_class`."""
        return validate_ingress_class(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """validateIngressClassSpecUpdate: ``spec.controller`` immutable."""
        controller = _dict(new.get("spec")).get("controller")
        if subresource or controller == _dict(old.get("spec")).get("controller"):
            return []
        return [immutable("spec.controller", _str(controller))]


# ------------------------------------------------------------ ServiceCIDR

DUAL_STACK_CIDRS = "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"
SERVICE_CIDR_READY = "Ready"  # networking.ServiceCIDRConditionReady


def cidr_family(value: Any) -> str | None:
    """netutils.IPFamilyOfCIDRString: "IPv4", "IPv6", or None when ``value`` is no CIDR (sloppy parsing)."""
    ip, sep, _ = _str(value).partition("/")
    addr = parse_ip_sloppy(ip) if sep else None
    if addr is None:
        return None
    return "IPv4" if addr.version == 4 or getattr(addr, "ipv4_mapped", None) is not None else "IPv6"


def validate_service_cidr_spec(obj: Obj) -> list[Cause]:
    """validateServiceCIDRSpec: ``spec.cidrs`` holds one or two valid CIDRs (IsValidCIDR), of different families."""
    cidrs = _list(_dict(obj.get("spec")).get("cidrs"))
    if not cidrs:
        return [required("spec.cidrs", "at least one CIDR required")]
    if len(cidrs) > 2:
        shown = "networking.ServiceCIDRSpec{CIDRs:" + go_strings(cidrs) + "}"
        return [Cause("FieldValueInvalid", f"Invalid value: {shown}: may only hold up to 2 values", "spec.cidrs")]
    out = [invalid(f"spec.cidrs[{i}]", _str(c), msg) for i, c in enumerate(cidrs) for msg in is_valid_cidr(_str(c))]
    if len(cidrs) == 2 and cidr_family(cidrs[0]) is not None and cidr_family(cidrs[0]) == cidr_family(cidrs[1]):
        out.append(Cause("FieldValueInvalid", f"Invalid value: {go_strings(cidrs)}: {DUAL_STACK_CIDRS}", "spec.cidrs"))
    return out


def validate_service_cidr_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidateServiceCIDRUpdate: same length, no CIDR may change; one CIDR to two: the first stays, the spec is
    valid (the added family); any other change of ``spec.cidrs``: immutable."""
    cidrs, old_cidrs = _list(_dict(new.get("spec")).get("cidrs")), _list(_dict(old.get("spec")).get("cidrs"))
    if len(cidrs) == len(old_cidrs):
        return [immutable(f"spec.cidrs[{i}]", _str(c)) for i, (c, was) in enumerate(zip(cidrs, old_cidrs, strict=True))
                if c != was]
    if len(old_cidrs) == 1 and len(cidrs) == 2:
        out = [immutable("spec.cidrs[0]", _str(cidrs[0]))] if cidrs[0] != old_cidrs[0] else []
        return out + validate_service_cidr_spec(new)
    return [immutable_shown("spec.cidrs", go_strings(cidrs) if cidrs else "[]string(nil)")]


@register
class ServiceCIDRStrategy(Strategy):
    """ServiceCIDR: ValidateServiceCIDR on create, ValidateServiceCIDRUpdate on update (the create rules are not
    run again); status reset on create and kept by main-resource updates (the generic rules of a kind with a
    ``status`` subresource and a status struct)."""

    group, kind = GROUP, "ServiceCIDR"
    #: serviceCIDRStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    validates_required = True
    tracks_generation = False  # kube's strategy never sets metadata.generation
    status_zero: dict[str, Any] = {}

    def default(self, obj: Obj) -> None:
        """No defaults; the spec struct is always encoded."""
        if not isinstance(obj.get("spec"), dict):
            obj["spec"] = {}

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_service_cidr_spec`."""
        return validate_service_cidr_spec(obj)

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """Nothing: kube's ValidateUpdate runs only ValidateServiceCIDRUpdate."""
        return []

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """:func:`validate_service_cidr_update` for the main resource; the status subresource checks only
        metadata (ValidateServiceCIDRStatusUpdate)."""
        return [] if subresource else validate_service_cidr_update(new, old)


# ------------------------------------------------------------ IPAddress

def parent_ref_string(ref: Any) -> str:
    """A ``*networking.ParentReference`` as field.Invalid prints it (``%#v`` of the struct; nil: ``"null"``)."""
    if not isinstance(ref, dict):
        return '"null"'
    fields = ", ".join(f"{key.capitalize()}:{go_value(_str(ref.get(key)))}"
                       for key in ("group", "resource", "namespace", "name"))
    return "networking.ParentReference{" + fields + "}"


def _path_segment_names(ref: Obj, path: str, keys: tuple[str, ...]) -> list[Cause]:
    """Each of ``keys`` of the reference ``ref`` required (``<path>.<key>: Required value``) and a path segment name
    (kube's ValidatePathSegmentName)."""
    out: list[Cause] = []
    for key in keys:
        value = _str(ref.get(key))
        if not value:
            out.append(required(f"{path}.{key}"))
        else:
            out.extend(invalid(f"{path}.{key}", value, msg) for msg in is_valid_path_segment_name(value))
    return out


def validate_ip_address(obj: Obj) -> list[Cause]:
    """validateIPAddressParentReference: ``spec.parentRef`` required; ``group`` (optional: the core group is "")
    a DNS subdomain, ``resource`` and ``name`` required path segment names, ``namespace`` a path segment name."""
    ref = _dict(obj.get("spec")).get("parentRef")
    if not isinstance(ref, dict):
        return [required("spec.parentRef")]
    path = "spec.parentRef"
    group = _str(ref.get("group"))
    out = [invalid(f"{path}.group", group, msg) for msg in is_dns1123_subdomain(group)] if group else []
    out.extend(_path_segment_names(ref, path, ("resource", "name")))
    namespace = _str(ref.get("namespace"))
    if namespace:
        out.extend(invalid(f"{path}.namespace", namespace, msg) for msg in is_valid_path_segment_name(namespace))
    return out


@register
class IPAddressStrategy(Strategy):
    """IPAddress: ValidateIPAddress (the name rule is :func:`kapi.objectmeta.name_rule`'s), ``spec.parentRef``
    immutable (ValidateIPAddressUpdate)."""

    group, kind = GROUP, "IPAddress"
    validates_required = True
    tracks_generation = False  # kube's strategy never sets metadata.generation

    def default(self, obj: Obj) -> None:
        """No defaults; the spec struct is always encoded."""
        if not isinstance(obj.get("spec"), dict):
            obj["spec"] = {}

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_ip_address`."""
        return validate_ip_address(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """``spec.parentRef`` immutable (ValidateImmutableField: deep equality of the pointed-to structs)."""
        ref, was = _dict(new.get("spec")).get("parentRef"), _dict(old.get("spec")).get("parentRef")
        def norm(value: Any) -> Any:
            return {k: _str(value.get(k)) for k in ("group", "resource", "namespace", "name")} \
                if isinstance(value, dict) else None
        if norm(ref) == norm(was):
            return []
        return [immutable_shown("spec.parentRef", parent_ref_string(ref))]
