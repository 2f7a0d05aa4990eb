"""The core group's (``v1``) kinds: ConfigMap, Secret, Service, Pod, PodTemplate, ReplicationController, Namespace.

Each kind's defaults (``pkg/apis/core/v1/defaults.go``), strategy
(``pkg/registry/core/<kind>/strategy.go``) and validation
(``pkg/apis/core/validation/validation.go``), with kube's field paths and
messages. The PodSpec rules shared with apps and batch are
:mod:`kapi.kinds.podspec`.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
from datetime import UTC, datetime
from typing import Any

from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.kinds.apparmor import (
    ANNOTATION_LOCALHOST_PREFIX,
    ANNOTATION_RUNTIME_DEFAULT,
    ANNOTATION_UNCONFINED,
    APPARMOR_CONTAINER_PREFIX,
    validate_apparmor_annotations,
    validate_apparmor_fields_match,
    validate_apparmor_profile,
    validate_pod_annotation_updates,
)
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.corewarnings import (
    endpoints_update_warnings,
    endpoints_warnings,
    node_update_warnings,
    node_warnings,
    persistent_volume_claim_update_warnings,
    persistent_volume_claim_warnings,
    persistent_volume_update_warnings,
    persistent_volume_warnings,
    service_update_warnings,
    service_warnings,
)
from kapi.kinds.endpoints import validate_endpoints_create, validate_endpoints_update
from kapi.kinds.events import CORE_V1 as EVENTS_CORE_V1
from kapi.kinds.events import default_event, validate_event_create, validate_event_update
from kapi.kinds.fields import (
    duplicate,
    field_value,
    flag_value,
    go_strings,
    go_value,
    not_supported,
    too_long_total,
)
from kapi.kinds.nodes import drop_disabled_node_fields, drop_status_config, validate_node, validate_node_update
from kapi.kinds.persistentvolumes import (
    validate_persistent_volume,
    validate_persistent_volume_claim,
    validate_persistent_volume_claim_status_update,
    validate_persistent_volume_claim_update,
    validate_persistent_volume_status_update,
    validate_persistent_volume_update,
)
from kapi.kinds.podqos import pod_qos_class
from kapi.kinds.podspec import (
    POD_HOSTNAME,
    PROTOCOLS,
    default_claim_spec,
    default_pod_only,
    default_pod_spec,
    default_ports,
    default_template,
    name_warnings,
    port_number,
    spec_of,
    validate_pod_spec,
    validate_workload,
)
from kapi.kinds.podsubresources import (
    EPHEMERAL_CONTAINERS,
    RESIZE,
    prepare_ephemeral_containers_update,
    prepare_resize_update,
    validate_ephemeral_containers_update,
    validate_resize_update,
)
from kapi.kinds.podvolumes import validate_token_projections_need_service_account
from kapi.kinds.podwarnings import (
    pod_spec_warnings,
    template_warnings,
    template_warnings_on_update,
)
from kapi.kinds.quotas import (
    validate_limit_range,
    validate_resource_quota,
    validate_resource_quota_status_update,
    validate_resource_quota_update,
)
from kapi.kinds.services import (
    needs_health_check,
    validate_external_ips,
    validate_service_port_rest,
    validate_service_selector,
    validate_service_update_rest,
    validate_session_affinity_config,
    validate_spec_after_external_traffic_policy,
    validate_spec_before_external_traffic_policy,
    validate_topology_annotations,
)
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import (
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
)
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

MAX_SECRET_SIZE = 1024 * 1024  # bytes, core.MaxSecretSize (also ConfigMap's limit)


SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
SESSION_AFFINITIES = ("ClientIP", "None")
IP_FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
IP_FAMILIES = ("IPv4", "IPv6")
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")
_POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")
CLUSTER_IP_CHANGED = "may not change once set"
PRIMARY_IP_UNSET = "primary clusterIP can not be unset"
SINGLE_STACK_RELEASE = "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary clusterIP"

NAMESPACE_FINALIZER = "kubernetes"  # core.FinalizerKubernetes
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # KEP-2161
# helper.IsStandardFinalizerName: the finalizer names that need no domain.
STANDARD_FINALIZERS = frozenset({NAMESPACE_FINALIZER, "orphan", "foregroundDeletion"})
NOT_STANDARD_FINALIZER = "name is neither a standard finalizer name nor is it fully qualified"


# ------------------------------------------------------------ ConfigMap and Secret

def _decoded_len(value: Any) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return len(binascii.a2b_base64(value))
    except (binascii.Error, ValueError):
        return 0


def _keys(data: Obj, path: str) -> list[Cause]:
    return [invalid(f"{path}[{key}]", key, msg) for key in data for msg in is_config_map_key(key)]


def _immutable_data(new: Obj, old: Obj, fields: tuple[str, ...]) -> list[Cause]:
    """ConfigMap/Secret stored with ``immutable: true``: the flag and the data may not change (Forbidden)."""
    if old.get("immutable") is not True:
        return []
    out: list[Cause] = []
    if new.get("immutable") is not True:
        out.append(forbidden("immutable", IMMUTABLE_WHEN_SET))
    for key in fields:
        if (new.get(key) or {}) != (old.get(key) or {}):
            out.append(forbidden(key, IMMUTABLE_WHEN_SET))
    return out


@register
class ConfigMapStrategy(Strategy):
    """ConfigMap: keys, 1 MiB of data, immutability once ``immutable: true`` (ValidateConfigMap[Update])."""

    group, kind = "", "ConfigMap"

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateConfigMap: keys, binaryData keys not repeating data keys, data + binaryData at most 1 MiB."""
        data, binary = _dict(obj.get("data")), _dict(obj.get("binaryData"))
        out = _keys(data, "data")
        total = sum(len(v.encode()) for v in data.values() if isinstance(v, str))
        for key, value in binary.items():
            out.extend(invalid(f"binaryData[{key}]", key, msg) for msg in is_config_map_key(key))
            if key in data:
                out.append(invalid(f"binaryData[{key}]", key, "duplicate of key present in data"))
            total += _decoded_len(value)
        if total > MAX_SECRET_SIZE:
            out.append(too_long_total("data", MAX_SECRET_SIZE))
        return out

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateConfigMapUpdate: ``immutable``, ``data``, ``binaryData`` frozen once stored immutable."""
        return _immutable_data(new, old, ("data", "binaryData")) if not subresource else []


SECRET_REDACTED = "<secret contents redacted>"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"  # core.ServiceAccountNameKey
_JSON_VALUE_START = frozenset('{["tfn-0123456789')


def _go_char(ch: str) -> str:
    """encoding/json's quoteChar: ``'x'``, ``'\\''`` for a quote, Go-quoted otherwise when not printable."""
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + go_value(ch)[1:-1] + "'"


def go_json_map_error(data: bytes) -> str | None:
    """Go's ``json.Unmarshal(data, &map[string]interface{}{})`` error text, or None when it succeeds.

    The common cases message for message: empty or truncated input, a bad first character, a misspelt
    ``true``/``false``/``null``, text after the value, a JSON value that is not an object (``json: cannot
    unmarshal array into Go value of type map[string]interface {}``); other syntax errors name the offending
    character ``looking for beginning of value`` (kapi does not replay every state of Go's scanner).
    """
    text = data.decode("utf-8", "replace")
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        return "unexpected end of JSON input"
    if stripped[0] not in _JSON_VALUE_START:
        return f"invalid character {_go_char(stripped[0])} looking for beginning of value"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        if err.pos >= len(text.rstrip(" \t\r\n")):
            return "unexpected end of JSON input"
        literal = {"t": "true", "f": "false", "n": "null"}.get(text[err.pos])
        if literal and err.msg == "Expecting value":
            for k, expected in enumerate(literal):
                if err.pos + k >= len(text):
                    return "unexpected end of JSON input"
                if text[err.pos + k] != expected:
                    return (f"invalid character {_go_char(text[err.pos + k])} in literal {literal} "
                            f"(expecting {_go_char(expected)})")
        where = {"Extra data": "after top-level value",
                 "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
                 "Expecting ':' delimiter": "after object key"}.get(err.msg)
        if where:
            return f"invalid character {_go_char(text[err.pos])} {where}"
        return f"invalid character {_go_char(text[err.pos])} looking for beginning of value"
    except ValueError:
        return "unexpected end of JSON input"
    if value is None or isinstance(value, dict):
        return None
    kind = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


def _decoded(value: Any) -> bytes:
    try:
        return binascii.a2b_base64(value) if isinstance(value, str) else b""
    except (binascii.Error, ValueError):
        return b""


def validate_secret_type(obj: Obj) -> list[Cause]:
    """ValidateSecret's per-type rules (``data`` after ``stringData`` is folded in).

    service-account-token: the ``kubernetes.io/service-account.name`` annotation; dockercfg /
    dockerconfigjson: ``.dockercfg`` / ``.dockerconfigjson`` holding a JSON object (``Invalid value:
    "<secret contents redacted>": <Go's json error>``); basic-auth: ``username`` or ``password``; ssh-auth: a
    non-empty ``ssh-privatekey``; tls: ``tls.crt`` and ``tls.key``. Each missing key is ``data[<key>]:
    Required value``.
    """
    data = _dict(obj.get("data"))
    secret_type = obj.get("type")
    out: list[Cause] = []
    if secret_type == "kubernetes.io/service-account-token":
        annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
        if not annotations.get(SERVICE_ACCOUNT_NAME_KEY):
            out.append(required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]"))
    elif secret_type in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if secret_type == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            out.append(required(f"data[{key}]"))
        else:
            error = go_json_map_error(_decoded(data[key]))
            if error:
                out.append(invalid(f"data[{key}]", SECRET_REDACTED, error))
    elif secret_type == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            out.extend([required("data[username]"), required("data[password]")])
    elif secret_type == "kubernetes.io/ssh-auth":
        if not _decoded(data.get("ssh-privatekey")):
            out.append(required("data[ssh-privatekey]"))
    elif secret_type == "kubernetes.io/tls":
        out.extend(required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data)
    return out


@register
class SecretStrategy(Strategy):
    """Secret: ``stringData`` folded into ``data``, type Opaque, keys, 1 MiB, type and immutability rules."""

    group, kind = "", "Secret"
    selectable_fields = {"type": field_value("type")}

    def default(self, obj: Obj) -> None:
        """``stringData`` entries overwrite ``data`` (base64) and are not stored; ``type`` defaults to Opaque."""
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict) and string_data:
            data = obj.get("data")
            if not isinstance(data, dict):
                data = obj["data"] = {}
            for key, value in string_data.items():
                if isinstance(value, str):
                    data[key] = base64.b64encode(value.encode()).decode()
        if not obj.get("type"):
            obj["type"] = "Opaque"

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """``type`` Opaque when still empty (a body that skipped defaulting, e.g. a subresource's)."""
        if not obj.get("type"):
            obj["type"] = "Opaque"

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateSecret: data keys are config keys, the type's rules (:func:`validate_secret_type`), decoded
        data (stringData folded in) at most 1 MiB."""
        data = _dict(obj.get("data"))
        out = _keys(data, "data")
        out.extend(validate_secret_type(obj))
        total = sum(_decoded_len(v) for v in data.values())
        total += sum(len(v.encode()) for v in _dict(obj.get("stringData")).values() if isinstance(v, str))
        if total > MAX_SECRET_SIZE:
            out.append(too_long_total("data", MAX_SECRET_SIZE))
        return out

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateSecretUpdate: ``type`` never changes (``field is immutable``); data frozen once immutable."""
        if subresource:
            return []
        out = _immutable_data(new, old, ("data",))
        if (new.get("type") or "Opaque") != (old.get("type") or "Opaque"):
            out.append(Cause("FieldValueInvalid", f'Invalid value: "{new.get("type", "")}": field is immutable',
                             "type"))
        return out


# ------------------------------------------------------------ Service

def _headless(spec: Obj) -> bool:
    return spec.get("clusterIP") == "None"


def _ips(spec: Obj) -> list[Any]:
    return _list(spec.get("clusterIPs"))


CLIENT_IP_AFFINITY_SECONDS = 10800  # v1.DefaultClientIPServiceAffinitySeconds (3 hours)
CLUSTER_FAMILY = "IPv4"  # kapi's service CIDR: single-stack IPv4 (ipallocator)
VALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def ip_family(value: Any) -> str | None:
    """The family of an IP as Go's ``netutils.ParseIPSloppy`` reads it (IPv4 parts may have leading zeros);
    None when it is not an IP."""
    if not isinstance(value, str) or not value or "%" in value:
        return None
    parts = value.split(".")
    if len(parts) == 4 and all(p.isascii() and p.isdigit() and int(p) <= 255 for p in parts):
        return "IPv4"
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return None
    return "IPv6"


def validate_session_affinity(spec: Obj) -> list[Cause]:
    """ValidateService's ``sessionAffinity``: ClientIP or None."""
    affinity = spec.get("sessionAffinity")
    if isinstance(affinity, str) and affinity not in SESSION_AFFINITIES:
        return [not_supported("spec.sessionAffinity", affinity, SESSION_AFFINITIES)]
    return []


def validate_service_families(spec: Obj) -> list[Cause]:
    """ValidateServiceClusterIPsRelatedFields (not for ExternalName): ``clusterIP`` and ``clusterIPs`` in sync
    (``spec.clusterIPs: Invalid value: []string{...}: first value must match `clusterIP```), each
    ``ipFamilies[i]`` IPv4/IPv6 and unique, ``ipFamilyPolicy`` one of the three, each ``clusterIPs[i]`` an IP
    ('None' only alone), at most two of them and one per family, each of the family ``ipFamilies[i]`` names."""
    if spec.get("type") == "ExternalName":
        return []
    out: list[Cause] = []
    # NormalizeClusterIPs ran before (PrepareForCreate/Update): a lone clusterIP stands for [clusterIP]
    ip = spec.get("clusterIP") or ""
    ips = _ips(spec) or ([ip] if ip else [])
    shown = go_strings(ips if ips else spec.get("clusterIPs"))

    def bad(path: str, detail: str) -> Cause:
        return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)

    if ip:
        if ips[0] != ip:
            out.append(bad("spec.clusterIPs", "first value must match `clusterIP`"))
    elif ips:
        out.append(bad("spec.clusterIPs", "must be empty when `clusterIP` is not specified"))
    seen: set[str] = set()
    families = _list(spec.get("ipFamilies"))
    for i, family in enumerate(families):
        if not isinstance(family, str):
            continue
        if family not in IP_FAMILIES:
            out.append(not_supported(f"spec.ipFamilies[{i}]", family, IP_FAMILIES))
        if family in seen:
            out.append(duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if isinstance(policy, str) and policy not in IP_FAMILY_POLICIES:
        out.append(not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    bad_ips = False
    for i, value in enumerate(ips):
        if i == 0 and value == "None":
            if len(ips) > 1:
                bad_ips = True
                out.append(bad("spec.clusterIPs", "'None' must be the first and only value"))
            continue
        if ip_family(value) is None:
            bad_ips = True
            out.append(invalid(f"spec.clusterIPs[{i}]", value if isinstance(value, str) else str(value), VALID_IP))
    if len(ips) > 2:
        out.append(bad("spec.clusterIPs", "may only hold up to 2 values"))
    if bad_ips:
        return out
    if len(ips) > 1 and {ip_family(v) for v in ips} != {"IPv4", "IPv6"}:  # netutils.IsDualStackIPStrings
        out.append(bad("spec.clusterIPs", "may specify no more than one IP for each IP family"))
    if ips and not _headless(spec):
        for i, (value, family) in enumerate(zip(ips, families, strict=False)):
            actual = ip_family(value)
            if family in IP_FAMILIES and actual != family:
                out.append(invalid(f"spec.clusterIPs[{i}]", value,
                                   f"expected an {family} value as indicated by `ipFamilies[{i}]`"))
    return out


def validate_cluster_families(spec: Obj) -> list[Cause]:
    """The allocator's initIPFamilyFields checks for kapi's single-stack IPv4 cluster (not for ExternalName).

    Under ``ipFamilyPolicy: SingleStack`` two clusterIPs or two ipFamilies are refused (``spec.ipFamilyPolicy:
    Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are
    specified``); a clusterIP beyond the families given must be IPv4 (``spec.clusterIPs[1]: Invalid value:
    []string{...}: IPv6 is not configured on this cluster``); then, but for a headless Service without a
    selector, RequireDualStack (``this cluster is not configured for dual-stack services``) and an IPv6
    ``ipFamilies[i]`` (``not configured on this cluster``) are refused.
    """
    if spec.get("type") == "ExternalName":
        return []
    out: list[Cause] = []
    ips = _ips(spec) or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    families = [f for f in _list(spec.get("ipFamilies")) if isinstance(f, str)]
    policy = spec.get("ipFamilyPolicy")
    shown_policy = go_value(policy if isinstance(policy, str) else None)  # a nil *IPFamilyPolicy: "null"

    def bad_policy(detail: str) -> Cause:
        return Cause("FieldValueInvalid", f"Invalid value: {shown_policy}: {detail}", "spec.ipFamilyPolicy")

    if policy == "SingleStack":
        if len(ips) == 2:
            out.append(bad_policy("must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are "
                                  "specified"))
        if len(families) == 2:
            out.append(bad_policy("must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are "
                                  "specified"))
    inferred = list(families)
    for i, value in enumerate(ips):
        if value == "None":
            break
        if i >= len(inferred):
            family = ip_family(value) or ""
            if family != CLUSTER_FAMILY:
                out.append(Cause("FieldValueInvalid", f"Invalid value: {go_strings(ips)}: {family} is not "
                                 "configured on this cluster", f"spec.clusterIPs[{i}]"))
            else:
                inferred.append(family)
    if out or (spec.get("clusterIP") == "None" and not spec.get("selector")):
        return out
    if policy == "RequireDualStack":
        out.append(bad_policy("this cluster is not configured for dual-stack services"))
    out.extend(invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster")
               for i, family in enumerate(inferred) if family != CLUSTER_FAMILY)
    return out


def _default_families(spec: Obj) -> list[str] | None:
    """The families the allocator infers from the requested clusterIPs (IPv4 only here); None when the first
    requested one is not IPv4 (validation refuses it)."""
    requested = _ips(spec) or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    families: list[str] = []
    for value in requested:
        if value == "None" or ip_family(value) != CLUSTER_FAMILY or families:
            break
        families.append(CLUSTER_FAMILY)
    if not families and requested and requested[0] != "None":
        return None
    return families or [CLUSTER_FAMILY]


def _node_ports(spec: Obj) -> list[Any]:
    return [_dict(p).get("nodePort") for p in _list(spec.get("ports"))]


def _externally_accessible(spec: Obj) -> bool:
    """apiservice.ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP with externalIPs."""
    service_type = spec.get("type") or "ClusterIP"
    return service_type in ("NodePort", "LoadBalancer") or (
        service_type == "ClusterIP" and bool(_list(spec.get("externalIPs"))))


def _drop_type_dependent_fields(spec: Obj, old_spec: Obj) -> None:
    """The Service REST update's ``dropTypeDependentFields``: a type change wipes what the new type does not use
    when the client left it as stored (so a merge patch of ``type`` alone is what the client meant, not an
    invalid leftover): to ExternalName the clusterIPs, ipFamilies and ipFamilyPolicy; to a type without node
    ports the nodePorts (unless net-new ones were asked for); no longer :func:`needs_health_check` the
    ``healthCheckNodePort``; no longer a LoadBalancer ``allocateLoadBalancerNodePorts`` and
    ``loadBalancerClass``; no longer externally accessible the ``externalTrafficPolicy``."""
    old_type, new_type = old_spec.get("type") or "ClusterIP", spec.get("type") or "ClusterIP"
    if old_type != "ExternalName" and new_type == "ExternalName":
        if spec.get("clusterIP") == old_spec.get("clusterIP") and _ips(spec) == _ips(old_spec):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        for key in ("ipFamilies", "ipFamilyPolicy"):
            if key in spec and spec.get(key) == old_spec.get(key):
                del spec[key]
    node_port_types = ("NodePort", "LoadBalancer")
    if old_type in node_port_types and new_type not in node_port_types:
        if {p for p in _node_ports(spec) if p} <= {p for p in _node_ports(old_spec) if p}:
            for port in _list(spec.get("ports")):
                if isinstance(port, dict):
                    port.pop("nodePort", None)
    if needs_health_check(old_spec) and not needs_health_check(spec) and (
            spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort")):
        spec.pop("healthCheckNodePort", None)
    if old_type == "LoadBalancer" and new_type != "LoadBalancer":
        for key in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if spec.get(key) is not None and spec.get(key) == old_spec.get(key):
                del spec[key]
    if _externally_accessible(old_spec) and not _externally_accessible(spec) and (
            spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy")):
        spec.pop("externalTrafficPolicy", None)


EXTERNAL_TRAFFIC_POLICIES = ("Cluster", "Local")
HEALTH_CHECK_ONLY = "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"


def validate_external_traffic_policy(spec: Obj) -> list[Cause]:
    """validateServiceExternalTrafficPolicy: ``externalTrafficPolicy`` only on externally accessible Services
    (NodePort, LoadBalancer, ClusterIP with externalIPs: ``may only be set for externally-accessible
    services``), there Cluster or Local; ``healthCheckNodePort`` only when :func:`needs_health_check`
    (:data:`HEALTH_CHECK_ONLY`), there a port number. kube's Required for a missing health check port is not
    reached here: kapi validates before its allocator fills the port (kube allocates first, in BeginCreate)."""
    out: list[Cause] = []
    policy = spec.get("externalTrafficPolicy")
    if not _externally_accessible(spec):
        if policy:
            out.append(invalid("spec.externalTrafficPolicy", policy, "may only be set for externally-accessible "
                               "services"))
    elif isinstance(policy, str) and policy and policy not in EXTERNAL_TRAFFIC_POLICIES:
        out.append(not_supported("spec.externalTrafficPolicy", policy, EXTERNAL_TRAFFIC_POLICIES))
    port = spec.get("healthCheckNodePort")
    if not needs_health_check(spec):
        if port:
            out.append(invalid("spec.healthCheckNodePort", port, HEALTH_CHECK_ONLY))
    elif port:
        out.extend(port_number("spec.healthCheckNodePort", port))
    return out


@register
class ServiceStrategy(Strategy):
    """Service: defaults, status reset, type and ports validation, clusterIPs that never change once set."""

    group, kind = "", "Service"
    status_zero = {"loadBalancer": {}}  # ServiceStatus.LoadBalancer: a struct
    #: service.SelectableFields (pkg/registry/core/service/strategy.go)
    selectable_fields = {"spec.clusterIP": field_value("spec", "clusterIP"), "spec.type": field_value("spec", "type")}
    tracks_generation = False
    #: serviceStatusStrategy.PrepareForUpdate resets only spec: /status may change labels, annotations and
    #: finalizers (removing the last one deletes the Service, kubernetes issue 120536)
    status_reset_metadata = ()

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: GetWarningsForService (:mod:`kapi.kinds.corewarnings`)."""
        return service_warnings(obj)

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: GetWarningsForService of the new object."""
        return service_update_warnings(new, old)

    def default(self, obj: Obj) -> None:
        """SetDefaults_Service: type ClusterIP; sessionAffinity None (no sessionAffinityConfig) or ClientIP with a
        10800 s timeout; port protocol TCP, an unset or zero targetPort = port; internalTrafficPolicy Cluster but
        for ExternalName; externalTrafficPolicy Cluster when externally accessible (NodePort, LoadBalancer, or
        ClusterIP with externalIPs); a LoadBalancer's allocateLoadBalancerNodePorts true and its status ingress
        ipMode VIP. (The IP families are the REST storage's, :meth:`_init_ip_families`.)"""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if not spec.get("type"):
            spec["type"] = "ClusterIP"
        if not spec.get("sessionAffinity"):
            spec["sessionAffinity"] = "None"
        if spec["sessionAffinity"] == "None":
            spec.pop("sessionAffinityConfig", None)
        elif spec["sessionAffinity"] == "ClientIP":
            client_ip = _dict(_dict(spec.get("sessionAffinityConfig")).get("clientIP"))
            if client_ip.get("timeoutSeconds") is None:
                spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": CLIENT_IP_AFFINITY_SECONDS}}
        default_ports(spec.get("ports"))
        for port in spec.get("ports") or ():
            if isinstance(port, dict) and port.get("targetPort") in (None, 0, "") and "port" in port:
                port["targetPort"] = port["port"]
        service_type = spec.get("type")
        if service_type in ("ClusterIP", "NodePort", "LoadBalancer") and spec.get("internalTrafficPolicy") is None:
            spec["internalTrafficPolicy"] = "Cluster"
        if _externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        if service_type == "LoadBalancer":
            if spec.get("allocateLoadBalancerNodePorts") is None:
                spec["allocateLoadBalancerNodePorts"] = True
            for ingress in _list(_dict(_dict(obj.get("status")).get("loadBalancer")).get("ingress")):
                if isinstance(ingress, dict) and ingress.get("ip") and ingress.get("ipMode") is None:
                    ingress["ipMode"] = "VIP"

    @staticmethod
    def _init_ip_families(spec: Obj) -> None:
        """The Service REST's initIPFamilyFields, in BeginCreate/BeginUpdate (after mutating admission and the
        field manager, so no manager owns them, before validation): a Service that gets a clusterIP, or a
        headless one with a selector, is single-stack IPv4, as kube-apiserver on an IPv4 service CIDR (kapi
        allocates IPv4 only)."""
        if spec.get("type") != "ExternalName" and (spec.get("clusterIP") != "None" or spec.get("selector")):
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            families = _default_families(spec)
            if "ipFamilies" not in spec and families is not None:
                spec["ipFamilies"] = families

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """PrepareForCreate: the status is the server's (an empty load balancer); NormalizeClusterIPs: a
        ``clusterIP`` without ``clusterIPs`` (an old client) means ``clusterIPs: [clusterIP]``; then the IP
        families (:meth:`_init_ip_families`)."""
        obj["status"] = {"loadBalancer": {}}
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("clusterIP") and not _ips(spec):
            spec["clusterIPs"] = [spec["clusterIP"]]
        if isinstance(spec, dict):
            self._init_ip_families(spec)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """The Service REST update's ``patchAllocatedValues`` and ``normalizeClusterIPs`` (main resource only).

        An omitted ``clusterIP``/``clusterIPs`` keeps the stored ones (both
        types need one); a changed ``clusterIP`` with the stored ``clusterIPs``
        means ``[clusterIP]``; a cleared ``clusterIP`` with the stored
        ``clusterIPs`` clears them too, so validation sees what the client meant;
        an omitted ``healthCheckNodePort`` keeps the stored one while both need it.
        """
        spec, old_spec = new.get("spec"), _dict(old.get("spec"))
        if subresource or not isinstance(spec, dict):
            return
        if spec.get("type") != "ExternalName" and old_spec.get("type") != "ExternalName":
            if not spec.get("clusterIP") and old_spec.get("clusterIP"):
                spec["clusterIP"] = old_spec["clusterIP"]
            if not _ips(spec) and _ips(old_spec):
                spec["clusterIPs"] = list(_ips(old_spec))
        old_ip, new_ip = old_spec.get("clusterIP") or "", spec.get("clusterIP") or ""
        if _ips(old_spec) and not _ips(spec) and old_ip == new_ip:
            spec["clusterIPs"] = list(_ips(old_spec))
        if old_ip != new_ip and _ips(spec) == _ips(old_spec):
            if old_ip and not new_ip:
                spec.pop("clusterIPs", None)
            else:
                spec["clusterIPs"] = [new_ip]
        if needs_health_check(old_spec) and needs_health_check(spec) and not spec.get("healthCheckNodePort") \
                and old_spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]
        _drop_type_dependent_fields(spec, old_spec)
        self._init_ip_families(spec)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateService (the parts users hit), after the allocator's own checks.

        kube's Service REST allocates (``initIPFamilyFields``: ValidateServiceClusterIPsRelatedFields, then
        the family checks of :func:`validate_cluster_families`) before ValidateService runs, so those errors
        come alone. Then: ports required but for headless and ExternalName; NodePort/LoadBalancer not headless
        (``spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for NodePort services``);
        ExternalName without clusterIPs, ipFamilies or ipFamilyPolicy (``Forbidden: may not be set for
        ExternalName services``) and with an ``externalName``; each port; sessionAffinity; type; no
        ``nodePort`` when ``type`` is ClusterIP; the rest in :mod:`kapi.kinds.services` (topology annotations,
        named target ports, appProtocol, selector, affinity config, externalIPs, duplicate ports and nodePorts,
        source ranges, load balancer fields, traffic policies and distribution). A nodePort's number is the
        allocator's to refuse (kube's validateServicePort does not check it).
        """
        return self._validate(obj, None)

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """validateService of an update: :meth:`validate` with the stored Service (externalIPs and source ranges
        it already had are not re-checked as legacy values)."""
        return self._validate(new, old)

    def _validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        spec = _dict(obj.get("spec"))
        old_spec = _dict(old.get("spec")) if old is not None else None
        annotations = _dict(obj.get("metadata")).get("annotations")
        old_annotations = _dict(old.get("metadata")).get("annotations") if old is not None else None
        early = validate_service_families(spec) or validate_cluster_families(spec)
        if early:
            return early
        out: list[Cause] = validate_topology_annotations(annotations)
        service_type = spec.get("type") or "ClusterIP"
        ports = _list(spec.get("ports"))
        headless = (_ips(spec) or [spec.get("clusterIP")]) == ["None"]  # isHeadlessService
        if not ports and not headless and service_type != "ExternalName":
            out.append(required("spec.ports"))
        if service_type in ("LoadBalancer", "NodePort") and headless:
            out.append(invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {service_type} services"))
        elif service_type == "ExternalName":
            for key in ("clusterIPs", "ipFamilies"):
                if _list(spec.get(key)):
                    out.append(forbidden(f"spec.{key}", "may not be set for ExternalName services"))
            if spec.get("ipFamilyPolicy") is not None:
                out.append(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
            name = spec.get("externalName")
            cname = name[:-1] if isinstance(name, str) and name.endswith(".") else name
            if isinstance(cname, str) and cname:
                out.extend(invalid("spec.externalName", cname, msg) for msg in is_dns1123_subdomain(cname))
            else:
                out.append(required("spec.externalName"))
        names: set[str] = set()
        for i, port in enumerate(ports):
            port = _dict(port)
            path = f"spec.ports[{i}]"
            name = port.get("name") or ""
            if len(ports) > 1 and not name:
                out.append(required(f"{path}.name"))
            elif isinstance(name, str) and name:
                out.extend(invalid(f"{path}.name", name, msg) for msg in is_dns1123_label(name))
                if name in names:
                    out.append(duplicate(f"{path}.name", name))
                names.add(name)
            out.extend(port_number(f"{path}.port", port.get("port")))
            protocol = port.get("protocol")
            if isinstance(protocol, str) and protocol not in PROTOCOLS:
                out.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
            out.extend(port_number(f"{path}.targetPort", port.get("targetPort")))
            out.extend(validate_service_port_rest(port, path))  # a named targetPort, appProtocol
        out.extend(validate_service_selector(spec))
        out.extend(validate_session_affinity(spec))
        out.extend(validate_session_affinity_config(spec))
        out.extend(validate_external_ips(spec, old_spec))
        if isinstance(service_type, str) and service_type not in SERVICE_TYPES:
            out.append(not_supported("spec.type", service_type, SERVICE_TYPES))
        if service_type == "ClusterIP":
            out.extend(forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
                       for i, port in enumerate(ports) if isinstance(port, dict) and port.get("nodePort"))
        out.extend(validate_spec_before_external_traffic_policy(spec, annotations, old_spec, old_annotations))
        out.extend(validate_external_traffic_policy(spec))
        out.extend(validate_spec_after_external_traffic_policy(spec))
        return out

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateServiceUpdate's ``validateUpgradeDowngradeClusterIPs``: assigned cluster IPs never change.

        Not for ExternalName on either side, nor headless to headless. Same
        count: each ``spec.clusterIPs[i]`` must equal the stored one
        (``spec.clusterIPs[i]: Invalid value: []string{...}: may not change
        once set``, the value being the new list); fewer: the primary may not
        be unset or changed and a release to one IP needs ``ipFamilyPolicy``
        SingleStack; more: the primary may not change.
        """
        spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
        if subresource or "ExternalName" in (spec.get("type"), old_spec.get("type")):
            return []
        if _headless(spec) and _headless(old_spec):
            return []
        ips = _ips(spec)
        old_ips = _ips(old_spec) or ([old_spec["clusterIP"]] if old_spec.get("clusterIP") else [])
        shown = go_strings(spec.get("clusterIPs"))

        def bad(i: int, detail: str) -> Cause:
            return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", f"spec.clusterIPs[{i}]")

        out: list[Cause] = []
        if len(ips) == len(old_ips):
            out.extend(bad(i, CLUSTER_IP_CHANGED) for i, ip in enumerate(old_ips) if ip != ips[i])
        elif len(ips) < len(old_ips):
            if not ips:
                out.append(bad(0, PRIMARY_IP_UNSET))
            elif ips[0] != old_ips[0]:
                out.append(bad(0, CLUSTER_IP_CHANGED))
            if len(ips) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
                out.append(bad(0, SINGLE_STACK_RELEASE))
        elif old_ips and ips[0] != old_ips[0]:
            out.append(bad(0, CLUSTER_IP_CHANGED))
        return out + validate_service_update_rest(spec, old_spec)


# ------------------------------------------------------------ Pod and PodTemplate

def _pod_spec_sans_mutable(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = {k: v for k, v in spec.items() if k not in _POD_MUTABLE}
    for key in ("containers", "initContainers"):
        if isinstance(out.get(key), list):
            out[key] = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c
                        for c in out[key]]
    return out


def _merge_keys(selector: Any, keys: Any, labels: Obj, operator: str) -> None:
    if not isinstance(selector, dict):
        return
    for key in _list(keys):
        if isinstance(key, str) and key in labels:
            expressions = selector.get("matchExpressions")
            if not isinstance(expressions, list):
                expressions = selector["matchExpressions"] = []
            expressions.append({"key": key, "operator": operator, "values": [labels[key]]})


def merge_match_label_keys(pod: Obj) -> None:
    """PrepareForCreate's mutatePodAffinity and mutateTopologySpreadConstraints, in place: each pod (anti-)affinity
    term's ``matchLabelKeys`` / ``mismatchLabelKeys`` and each topology spread constraint's ``matchLabelKeys``
    that name one of the Pod's labels add ``{key, In|NotIn, [value]}`` to its ``labelSelector``'s
    ``matchExpressions`` (a term without a labelSelector matches nothing and is left alone)."""
    labels = _dict(_dict(pod.get("metadata")).get("labels"))
    spec = _dict(pod.get("spec"))
    affinity = _dict(spec.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        section = _dict(affinity.get(kind))
        preferred = _list(section.get("preferredDuringSchedulingIgnoredDuringExecution"))
        terms = [_dict(t).get("podAffinityTerm") for t in preferred]
        terms += _list(section.get("requiredDuringSchedulingIgnoredDuringExecution"))
        for term in terms:
            if isinstance(term, dict):
                _merge_keys(term.get("labelSelector"), term.get("matchLabelKeys"), labels, "In")
                _merge_keys(term.get("labelSelector"), term.get("mismatchLabelKeys"), labels, "NotIn")
    for constraint in _list(spec.get("topologySpreadConstraints")):
        if isinstance(constraint, dict):
            _merge_keys(constraint.get("labelSelector"), constraint.get("matchLabelKeys"), labels, "In")


def _apparmor_field_for_annotation(value: Any) -> Obj | None:
    """podutil.ApparmorFieldForAnnotation, then ValidateAppArmorProfileField: ``unconfined`` and
    ``runtime/default`` are those types, ``localhost/<name>`` a Localhost profile ``<name>`` (one
    :func:`kapi.kinds.apparmor.validate_apparmor_profile` accepts: no padding whitespace, at most 4095 bytes);
    anything else None."""
    field: Obj
    if value == ANNOTATION_UNCONFINED:
        field = {"type": "Unconfined"}
    elif value == ANNOTATION_RUNTIME_DEFAULT:
        field = {"type": "RuntimeDefault"}
    elif isinstance(value, str) and value.startswith(ANNOTATION_LOCALHOST_PREFIX):
        field = {"type": "Localhost", "localhostProfile": value[len(ANNOTATION_LOCALHOST_PREFIX):]}
    else:
        return None
    return None if validate_apparmor_profile(field, "") else field


def _apparmor_skew(pod: Obj) -> list[tuple[Obj, Obj | None, str]]:
    """applyAppArmorVersionSkew's plan for a Pod about to be created: for each container (init, regular,
    ephemeral, in order) with a ``container.apparmor.security.beta.kubernetes.io/<name>`` annotation and no
    ``securityContext.appArmorProfile``, ``(container, field, warning)``: the profile the annotation names
    (None when it names none, or when it equals the Pod-level profile, which the container inherits), and the
    deprecation warning ``metadata.annotations[<key>]: deprecated since v1.30; use the "appArmorProfile" field
    instead`` (kube warns unless the annotation is valid and the Pod's profile already says the same). A Windows
    Pod (``spec.os.name: windows``) is left alone."""
    spec = _dict(pod.get("spec"))
    if _dict(spec.get("os")).get("name") == "windows":
        return []
    annotations = _dict(_dict(pod.get("metadata")).get("annotations"))
    pod_profile = _dict(spec.get("securityContext")).get("appArmorProfile")
    out: list[tuple[Obj, Obj | None, str]] = []
    for section in ("initContainers", "containers", "ephemeralContainers"):
        for container in _list(spec.get(section)):
            if not isinstance(container, dict):
                continue
            key = APPARMOR_CONTAINER_PREFIX + str(container.get("name", ""))
            if key not in annotations or _dict(container.get("securityContext")).get("appArmorProfile") is not None:
                continue
            field = _apparmor_field_for_annotation(annotations[key])
            if field is not None and field == pod_profile:
                continue  # valid and the Pod-level profile already says it: no copy, no warning
            out.append((container, field, f'metadata.annotations[{key}]: deprecated since v1.30; use the '
                                          f'"appArmorProfile" field instead'))
    return out


def _pod_ips(obj: Obj) -> str:
    """The ``status.podIPs`` field label: the IPs joined by commas."""
    ips = _list(_dict(obj.get("status")).get("podIPs"))
    return ",".join(str(ip.get("ip", "")) for ip in ips if isinstance(ip, dict))


@register
class PodStrategy(Strategy):
    """Pod: PodSpec defaults (requests from limits), status reset, PodSpec validation, ValidatePodUpdate."""

    group, kind = "", "Pod"
    #: podStatusStrategy.PrepareForUpdate: spec, deletionTimestamp (nil, then BeforeUpdate's old one) and
    #: ownerReferences; /status may change labels, annotations and finalizers
    status_reset_metadata = ("deletionTimestamp", "ownerReferences")
    status_zero: dict[str, Any] = {}  # PodStatus: every field omitempty
    revalidates_first = True  # ValidatePodUpdate: validatePodMetadataAndSpec, then the update rules
    #: updatePodGeneration in podEphemeralContainersStrategy and podResizeStrategy
    generation_subresources = ("", EPHEMERAL_CONTAINERS, RESIZE)
    selectable_fields = {
        "spec.nodeName": field_value("spec", "nodeName"),
        "spec.restartPolicy": field_value("spec", "restartPolicy"),
        "spec.schedulerName": field_value("spec", "schedulerName"),
        "spec.serviceAccountName": field_value("spec", "serviceAccountName"),
        "spec.hostNetwork": flag_value("spec", "hostNetwork"),
        "status.phase": field_value("status", "phase"),
        "status.podIP": field_value("status", "podIP"),
        "status.podIPs": _pod_ips,
        "status.nominatedNodeName": field_value("status", "nominatedNodeName"),
    }

    def default(self, obj: Obj) -> None:
        """SetDefaults_PodSpec (:func:`default_pod_spec`), then the Pod-only SetDefaults_Pod
        (:func:`default_pod_only`: enableServiceLinks, requests from limits, host network ports)."""
        spec = obj.get("spec")
        default_pod_spec(spec)
        default_pod_only(spec)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """PrepareForCreate: ``status`` is ``{phase: Pending, qosClass: <pod_qos_class>}``, plus
        applySchedulingGatedCondition: a Pod with ``schedulingGates`` starts with the ``PodScheduled`` False
        ``SchedulingGated`` condition (its zero times encode as ``null``); mutatePodAffinity and
        mutateTopologySpreadConstraints (:func:`merge_match_label_keys`); applyAppArmorVersionSkew: a container's
        deprecated AppArmor annotation becomes its ``securityContext.appArmorProfile`` (:func:`_apparmor_skew`;
        since 1.33 kube no longer writes annotations from the fields)."""
        spec = _dict(obj.get("spec"))
        status: Obj = {"phase": "Pending"}
        if _list(spec.get("schedulingGates")):
            status["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                     "lastTransitionTime": None, "reason": "SchedulingGated",
                                     "message": "Scheduling is blocked due to non-empty scheduling gates"}]
        status["qosClass"] = pod_qos_class(spec)
        obj["status"] = status
        merge_match_label_keys(obj)
        for container, field, _warning in _apparmor_skew(obj):
            if field is not None:
                context = container.get("securityContext")
                if not isinstance(context, dict):
                    context = container["securityContext"] = {}
                context["appArmorProfile"] = field

    def warnings_on_prepare(self, obj: Obj) -> list[str]:
        """applyAppArmorVersionSkew's warnings (``warning.AddWarning`` in PrepareForCreate, ahead of
        WarningsOnCreate's): one per deprecated AppArmor annotation :func:`_apparmor_skew` names."""
        return [warning for _container, _field, warning in _apparmor_skew(obj)]

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """podStatusStrategy.PrepareForUpdate (``status``): the QoS class is immutable, so a status without one keeps
        the stored one; a zero ``observedGeneration`` (of the status and of each condition, matched by type in
        order) keeps the stored value. podEphemeralContainersStrategy (``ephemeralcontainers``): only the request's
        ``spec.ephemeralContainers`` counts (:func:`kapi.kinds.podsubresources.prepare_ephemeral_containers_update`).
        podResizeStrategy (``resize``): only the containers' ``resources`` and ``resizePolicy`` count
        (:func:`kapi.kinds.podsubresources.prepare_resize_update`)."""
        if subresource == EPHEMERAL_CONTAINERS:
            prepare_ephemeral_containers_update(new, old)
            return
        if subresource == RESIZE:
            prepare_resize_update(new, old)
            return
        status = new.get("status")
        if subresource != "status" or not isinstance(status, dict):
            return
        old_status = _dict(old.get("status"))
        if not status.get("qosClass") and old_status.get("qosClass"):
            status["qosClass"] = old_status["qosClass"]
        if not status.get("observedGeneration") and old_status.get("observedGeneration"):
            status["observedGeneration"] = old_status["observedGeneration"]
        stored: dict[Any, list[Any]] = {}
        for condition in _list(old_status.get("conditions")):
            if isinstance(condition, dict):
                stored.setdefault(condition.get("type"), []).append(condition.get("observedGeneration"))
        for condition in _list(status.get("conditions")):
            if not isinstance(condition, dict):
                continue
            generations = stored.get(condition.get("type")) or []
            generation = generations.pop(0) if generations else None
            if not condition.get("observedGeneration") and generation:
                condition["observedGeneration"] = generation

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the name warning (:func:`kapi.kinds.podspec.name_warnings`), then GetWarningsForPod
        (:func:`kapi.kinds.podwarnings.pod_spec_warnings`)."""
        return name_warnings(obj, POD_HOSTNAME) + pod_spec_warnings(obj.get("spec"), obj.get("metadata"))

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidatePodCreate's spec rules: ValidatePodSpecificAnnotations' AppArmor annotations
        (:func:`kapi.kinds.apparmor.validate_apparmor_annotations`), ValidatePodSpec of ``spec``, then
        validateAppArmorAnnotationsAndFieldsMatchOnCreate
        (:func:`kapi.kinds.apparmor.validate_apparmor_fields_match`)."""
        return [*self._pod_spec_causes(obj), *validate_apparmor_fields_match(obj)]

    @staticmethod
    def _pod_spec_causes(obj: Obj) -> list[Cause]:
        """validatePodMetadataAndSpec's spec part: the AppArmor annotations, ValidatePodSpec with the Pod's name
        and ResourceIsPod, then the projected token volumes' need for a serviceAccountName."""
        spec = obj.get("spec")
        meta = _dict(obj.get("metadata"))
        name = meta.get("name") if isinstance(meta.get("name"), str) else None
        return [*validate_apparmor_annotations(meta.get("annotations"), spec, "metadata.annotations"),
                *validate_pod_spec(spec, "spec", pod_name=name or None, resource_is_pod=True,
                                   pod_annotations=meta.get("annotations")),
                *validate_token_projections_need_service_account(spec)]

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """validatePodMetadataAndSpec of ValidatePodUpdate: :meth:`validate` without the create-only
        validateAppArmorAnnotationsAndFieldsMatchOnCreate."""
        return self._pod_spec_causes(new)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidatePodUpdate (main resource): ValidatePodSpecificAnnotationUpdates
        (:func:`kapi.kinds.apparmor.validate_pod_annotation_updates`, also for ``/status`` as
        ValidatePodStatusUpdate), then only images, activeDeadlineSeconds, tolerations (additions),
        terminationGracePeriodSeconds and schedulingGates may change; else ``spec: Forbidden: pod updates may
        not change fields other than ...``. ``ephemeralcontainers``: ValidatePodEphemeralContainersUpdate;
        ``resize``: ValidatePodResize (:func:`kapi.kinds.podsubresources.validate_resize_update`)."""
        if subresource == EPHEMERAL_CONTAINERS:  # ValidatePodEphemeralContainersUpdate
            return [*self._pod_spec_causes(new), *validate_pod_annotation_updates(new, old),
                    *validate_ephemeral_containers_update(new, old)]
        if subresource == RESIZE:  # ValidatePodResize
            return validate_resize_update(new, old, self._pod_spec_causes(new), pod_qos_class)
        annotation_causes = validate_pod_annotation_updates(new, old) if subresource in ("", "status") else []
        if subresource:
            return annotation_causes
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if _pod_spec_sans_mutable(new_spec) != _pod_spec_sans_mutable(old_spec):
            return [*annotation_causes, forbidden("spec", POD_UPDATE_FORBIDDEN)]
        old_tol = old_spec.get("tolerations") or []
        new_tol = new_spec.get("tolerations") or []
        if isinstance(old_tol, list) and isinstance(new_tol, list) and any(t not in new_tol for t in old_tol):
            return [*annotation_causes, forbidden("spec.tolerations", "existing toleration can not be modified "
                                                  "except its tolerationSeconds")]
        return annotation_causes


@register
class PodTemplateStrategy(Strategy):
    """PodTemplate: ValidatePodSpec of ``template.spec``."""

    group, kind = "", "PodTemplate"

    def default(self, obj: Obj) -> None:
        """SetDefaults_PodSpec of ``template.spec`` (a template gets none of the Pod-only defaults)."""
        template = obj.get("template")
        if isinstance(template, dict):
            default_pod_spec(template.get("spec"))

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidatePodTemplateSpec under ``template``: the AppArmor annotations of ``template.metadata``, then the
        PodSpec checks under ``template.spec``."""
        template = _dict(obj.get("template"))
        annotations = _dict(template.get("metadata")).get("annotations")
        return [*validate_apparmor_annotations(annotations, template.get("spec"), "template.metadata.annotations"),
                *validate_pod_spec(template.get("spec"), "template.spec")]

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: GetWarningsForPodTemplate of ``template``."""
        return template_warnings(obj, "template")


@register
class ReplicationControllerStrategy(Strategy):
    """ReplicationController: replicas 1, the template's PodSpec defaults, the shared workload checks."""

    group, kind = "", "ReplicationController"
    #: rcStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    status_zero = {"replicas": 0}  # ReplicationControllerStatus.Replicas has no omitempty
    selectable_fields = {"status.replicas": field_value("status", "replicas")}

    def default(self, obj: Obj) -> None:
        """SetDefaults_ReplicationController: replicas 1; an empty selector and empty labels are the template's
        labels (when it has a labels map); the template's PodSpec defaults."""
        spec = spec_of(obj)
        spec.setdefault("replicas", 1)
        labels = _dict(_dict(spec.get("template")).get("metadata")).get("labels")
        if isinstance(labels, dict):
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = obj.get("metadata")
            if isinstance(meta, dict) and not meta.get("labels"):
                meta["labels"] = dict(labels)
        default_template(spec)

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the name warning (:func:`kapi.kinds.podspec.name_warnings`), then
        GetWarningsForPodTemplate of ``spec.template``."""
        return name_warnings(obj) + template_warnings(obj, "spec.template")

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: GetWarningsForPodTemplate of ``spec.template`` when the generation moved on."""
        return template_warnings_on_update(new, old, "spec.template")

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateReplicationControllerSpec: replicas, template restartPolicy Always (selector: a plain map)."""
        return validate_workload(_dict(obj.get("spec")), "replicationcontroller", ("Always",), label_selector=False)


# ------------------------------------------------------------ Namespace

def validate_finalizer_name(name: str, path: str) -> list[Cause]:
    """core validation's validateFinalizerName: a qualified name, and one without a ``/`` must be standard."""
    out = [invalid(path, name, msg) for msg in is_qualified_name(name)]
    if "/" not in name and name not in STANDARD_FINALIZERS:
        out.append(invalid(path, name, NOT_STANDARD_FINALIZER))
    return out


def _namespace_label(obj: Obj) -> None:
    # Namespace defaulting and Canonicalize: label kubernetes.io/metadata.name = name (KEP-2161).
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    name = meta.get("name")
    if isinstance(name, str) and name:
        labels = meta.get("labels")
        labels = dict(labels) if isinstance(labels, dict) else {}
        labels[NAMESPACE_NAME_LABEL] = name
        meta["labels"] = labels


@register
class NamespaceStrategy(Strategy):
    """Namespace: the ``kubernetes`` finalizer, phase Active, the name label; finalizers only via ``finalize``."""

    group, kind = "", "Namespace"
    #: namespaceStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    status_zero: dict[str, Any] = {}  # NamespaceStatus: every field omitempty
    tracks_generation = False
    selectable_fields = {"status.phase": field_value("status", "phase")}

    def default(self, obj: Obj) -> None:
        """SetDefaults_Namespace: a named Namespace gets the label ``kubernetes.io/metadata.name``; as defaulting
        runs at decoding, before the field manager, the writer owns it (``kubectl create namespace``'s managedFields:
        ``f:metadata.f:labels.f:kubernetes.io/metadata.name``); a generateName one gets it in PrepareForCreate."""
        _namespace_label(obj)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """PrepareForCreate: ``spec.finalizers`` includes "kubernetes", ``status.phase`` Active, the name label."""
        spec = dict(obj["spec"]) if isinstance(obj.get("spec"), dict) else {}
        finalizers = list(spec.get("finalizers") or [])
        if NAMESPACE_FINALIZER not in finalizers:
            finalizers.append(NAMESPACE_FINALIZER)
        spec["finalizers"] = finalizers
        obj["spec"] = spec
        obj["status"] = {"phase": "Active"}
        _namespace_label(obj)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """PrepareForUpdate: the main resource keeps the stored ``spec.finalizers`` (``finalize`` changes them);
        every update keeps the name label."""
        if subresource == "":
            spec = dict(new["spec"]) if isinstance(new.get("spec"), dict) else {}
            old_spec = _dict(old.get("spec"))
            if "finalizers" in old_spec:
                spec["finalizers"] = old_spec["finalizers"]
            else:
                spec.pop("finalizers", None)
            new["spec"] = spec
        _namespace_label(new)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateNamespace: each ``spec.finalizers`` entry is a finalizer name (path ``spec.finalizers``)."""
        return self._finalizers(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateNamespaceFinalizeUpdate: the ``finalize`` subresource's new finalizers are finalizer names."""
        return self._finalizers(new) if subresource == "finalize" else []

    @staticmethod
    def _finalizers(obj: Obj) -> list[Cause]:
        out: list[Cause] = []
        for name in _list(_dict(obj.get("spec")).get("finalizers")):
            if isinstance(name, str):
                out.extend(validate_finalizer_name(name, "spec.finalizers"))
        return out


# ------------------------------------------------------------ kinds with no rules here but their field labels

@register
class NodeStrategy(Strategy):
    """Node: no generation; field label ``spec.unschedulable`` (``false`` when unset)."""

    group, kind = "", "Node"
    #: nodeStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    tracks_generation = False
    # NodeStatus: daemonEndpoints and nodeInfo are structs whose fields have no omitempty; a Node keeps the status
    # it is created with (nodeStrategy.PrepareForCreate does not reset it: kubelets register with theirs).
    status_zero = {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                   "nodeInfo": {key: "" for key in ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                                                    "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion",
                                                    "operatingSystem", "architecture")}}
    keeps_status_on_create = True
    selectable_fields = {"spec.unschedulable": flag_value("spec", "unschedulable")}

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the node strategy's fieldIsDeprecatedWarnings (:mod:`kapi.kinds.corewarnings`)."""
        return node_warnings(obj)

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: the node strategy's fieldIsDeprecatedWarnings of the new object."""
        return node_update_warnings(new, old)

    def default(self, obj: Obj) -> None:
        """SetDefaults_NodeStatus: no ``allocatable`` but a ``capacity`` -> allocatable is the capacity."""
        status = obj.get("status")
        if isinstance(status, dict) and status.get("allocatable") is None and isinstance(status.get("capacity"),
                                                                                          dict):
            status["allocatable"] = dict(status["capacity"])

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """PrepareForCreate: the fields of disabled features dropped
        (:func:`kapi.kinds.nodes.drop_disabled_node_fields`)."""
        drop_disabled_node_fields(obj)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """PrepareForUpdate: the disabled features' fields (main resource) or the status's config (``/status``)."""
        if subresource == "status":
            drop_status_config(new, old)
        elif not subresource:
            drop_disabled_node_fields(new, old)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateNode (:func:`kapi.kinds.nodes.validate_node`)."""
        return validate_node(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateNodeUpdate, for the main resource and ``/status`` alike (the main resource also runs
        ValidateNode again, :meth:`validate_again`)."""
        return validate_node_update(new, old) if subresource in ("", "status") else []


@register
class EventStrategy(Strategy):
    """core/v1 Event: the field labels of ``event.GetAttrs`` (involvedObject.*, reason, source, type, ...); the
    core/v1 request's validation (:mod:`kapi.kinds.events`: legacyValidateEvent only)."""

    group, kind = "", "Event"

    def default(self, obj: Obj) -> None:
        """The fields core/v1 Event always writes (:func:`kapi.kinds.events.default_event`)."""
        default_event(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateEventCreate for a core/v1 request."""
        return validate_event_create(obj, EVENTS_CORE_V1)

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """Nothing: ValidateEventUpdate (:meth:`validate_update`) runs the create rules itself."""
        return []

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateEventUpdate for a core/v1 request."""
        return validate_event_update(new, old, EVENTS_CORE_V1)
    selectable_fields = {
        **{f"involvedObject.{f}": field_value("involvedObject", f)
           for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
        "reason": field_value("reason"),
        "reportingComponent": field_value("reportingComponent"),
        "source": field_value("source", "component"),
        "type": field_value("type"),
    }


# Kinds whose kube strategy keeps no ``metadata.generation`` and has no other per-kind rule kapi applies.
@register
class PersistentVolumeStrategy(Strategy):
    """PersistentVolume: reclaim policy Retain, volumeMode Filesystem; the status starts Pending."""

    group, kind = "", "PersistentVolume"
    #: persistentvolumeStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    tracks_generation = False
    revalidates_first = True  # the strategy's ValidateUpdate: ValidatePersistentVolume, then ...Update
    status_zero: dict[str, Any] = {}  # PersistentVolumeStatus: every field omitempty

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: GetWarningsForPersistentVolume (:mod:`kapi.kinds.corewarnings`)."""
        return persistent_volume_warnings(obj)

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: GetWarningsForPersistentVolume of the new object."""
        return persistent_volume_update_warnings(new, old)

    def default(self, obj: Obj) -> None:
        """SetDefaults_PersistentVolume: ``persistentVolumeReclaimPolicy`` Retain, ``volumeMode`` Filesystem."""
        spec = spec_of(obj)
        if not spec.get("persistentVolumeReclaimPolicy"):
            spec["persistentVolumeReclaimPolicy"] = "Retain"
        default_claim_spec(spec)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """PrepareForCreate: ``status`` is ``{phase: Pending, lastPhaseTransitionTime: now}``
        (PersistentVolumeLastPhaseTransitionTime, GA)."""
        obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": _now_text()}

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidatePersistentVolume (:func:`kapi.kinds.persistentvolumes.validate_persistent_volume`)."""
        return validate_persistent_volume(obj)

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """ValidatePersistentVolume of the new object with the stored one's options (its invalid label values)."""
        return validate_persistent_volume(new, old)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidatePersistentVolumeUpdate (the source, volumeMode and node affinity immutable) or, on ``/status``,
        ValidatePersistentVolumeStatusUpdate."""
        if subresource == "status":
            return validate_persistent_volume_status_update(new, old)
        return validate_persistent_volume_update(new, old) if not subresource else []

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """The status strategy's PrepareForUpdate: an unchanged phase keeps the stored transition time when the
        client sent none; a changed phase whose time the client left unset or unchanged is stamped ``now``."""
        if subresource != "status" or not isinstance(new.get("status"), dict):
            return
        status, old_status = new["status"], _dict(old.get("status"))
        if status.get("phase") == old_status.get("phase"):
            if status.get("lastPhaseTransitionTime") is None and "lastPhaseTransitionTime" in old_status:
                status["lastPhaseTransitionTime"] = old_status["lastPhaseTransitionTime"]
        elif status.get("lastPhaseTransitionTime") in (None, old_status.get("lastPhaseTransitionTime")):
            status["lastPhaseTransitionTime"] = _now_text(now)


@register
class PersistentVolumeClaimStrategy(Strategy):
    """PersistentVolumeClaim: volumeMode Filesystem; the status starts Pending."""

    group, kind = "", "PersistentVolumeClaim"
    #: persistentvolumeclaimStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    tracks_generation = False
    revalidates_first = True  # the strategy's ValidateUpdate: ValidatePersistentVolumeClaim, then ...Update
    status_zero: dict[str, Any] = {}  # PersistentVolumeClaimStatus: every field omitempty

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: GetWarningsForPersistentVolumeClaim (:mod:`kapi.kinds.corewarnings`)."""
        return persistent_volume_claim_warnings(obj)

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: GetWarningsForPersistentVolumeClaim of the new object."""
        return persistent_volume_claim_update_warnings(new, old)

    def default(self, obj: Obj) -> None:
        """SetDefaults_PersistentVolumeClaimSpec: ``volumeMode`` Filesystem."""
        default_claim_spec(spec_of(obj))

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """PrepareForCreate resets ``status``; SetDefaults_PersistentVolumeClaim, applied when kube reads the
        stored claim back, makes it ``{phase: Pending}``; then the data sources (:func:`_normalize_data_sources`)."""
        obj["status"] = {"phase": "Pending"}
        _normalize_data_sources(spec_of(obj), None)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """PrepareForUpdate (main resource): the data sources (:func:`_normalize_data_sources`)."""
        if not subresource and isinstance(new.get("spec"), dict):
            _normalize_data_sources(new["spec"], _dict(old.get("spec")))

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidatePersistentVolumeClaim (:func:`kapi.kinds.persistentvolumes.validate_persistent_volume_claim`)."""
        return validate_persistent_volume_claim(obj)

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """ValidatePersistentVolumeClaim of the new claim with the stored one's options."""
        return validate_persistent_volume_claim(new, old)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidatePersistentVolumeClaimUpdate (the spec immutable but for a bound claim's storage request and
        volumeAttributesClassName) or, on ``/status``, ValidatePersistentVolumeClaimStatusUpdate."""
        if subresource == "status":
            return validate_persistent_volume_claim_status_update(new, old)
        return validate_persistent_volume_claim_update(new, old) if not subresource else []


_SNAPSHOT_GROUP = "snapshot.storage.k8s.io"


def _normalize_data_sources(spec: Obj, old_spec: Obj | None) -> None:
    """pvcutil.EnforceDataSourceBackwardsCompatibility then NormalizeDataSources: a new ``dataSource`` that is
    neither a PersistentVolumeClaim nor a VolumeSnapshot is dropped (kept when the stored claim had one); then
    one of ``dataSource``/``dataSourceRef`` set alone is copied to the other (a ``dataSourceRef`` with a namespace
    is not: a dataSource has none)."""
    source = spec.get("dataSource")
    if isinstance(source, dict) and not (old_spec and old_spec.get("dataSource") is not None):
        group, kind = source.get("apiGroup"), source.get("kind")
        if not ((group in (None, "") and kind == "PersistentVolumeClaim")
                or (group == _SNAPSHOT_GROUP and kind == "VolumeSnapshot")):
            del spec["dataSource"]
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict) and ref is None:
        spec["dataSourceRef"] = {k: source[k] for k in ("apiGroup", "kind", "name") if k in source}
    elif isinstance(ref, dict) and source is None and not ref.get("namespace"):
        spec["dataSource"] = {k: ref[k] for k in ("apiGroup", "kind", "name") if k in ref}


def _now_text(now: datetime | None = None) -> str:
    """metav1.Time's JSON form of ``now`` (None: the clock): RFC 3339 seconds in UTC."""
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@register
class ResourceQuotaStrategy(Strategy):
    """ResourceQuota: no generation; a status struct whose fields are all omitempty, reset on create; the rules
    of :mod:`kapi.kinds.quotas`."""

    group, kind = "", "ResourceQuota"
    #: resourcequotaStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    tracks_generation = False
    status_zero: dict[str, Any] = {}

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateResourceQuota (:func:`kapi.kinds.quotas.validate_resource_quota`)."""
        return validate_resource_quota(obj)

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """Nothing: ValidateResourceQuotaUpdate (:meth:`validate_update`) holds the update's spec rules."""
        return []

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateResourceQuotaUpdate (main resource: the spec, scopes immutable) or
        ValidateResourceQuotaStatusUpdate (``/status``)."""
        if subresource == "status":
            return validate_resource_quota_status_update(new, old)
        return validate_resource_quota_update(new, old) if not subresource else []


@register
class LimitRangeStrategy(Strategy):
    """LimitRange: no generation; SetDefaults_LimitRangeItem."""

    group, kind = "", "LimitRange"
    tracks_generation = False

    def default(self, obj: Obj) -> None:
        """SetDefaults_LimitRangeItem of each item (:func:`default_limit_range_item`)."""
        for item in _list(_dict(obj.get("spec")).get("limits")):
            if isinstance(item, dict):
                default_limit_range_item(item)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateLimitRange (:func:`kapi.kinds.quotas.validate_limit_range`; kube's update runs it again)."""
        return validate_limit_range(obj)


def default_limit_range_item(item: Obj) -> None:
    """SetDefaults_LimitRangeItem, in place: for a ``Container`` item, ``default`` takes ``max`` where unset, then
    ``defaultRequest`` takes ``default``, then ``min``, where unset (both maps exist afterwards); other types
    are untouched. Also what LimitRanger applies to the LimitRanges it reads."""
    if item.get("type") != "Container":
        return
    default, request = item.get("default"), item.get("defaultRequest")
    default = item["default"] = dict(default) if isinstance(default, dict) else {}
    request = item["defaultRequest"] = dict(request) if isinstance(request, dict) else {}
    for name, value in _dict(item.get("max")).items():
        default.setdefault(name, value)
    for name, value in default.items():
        request.setdefault(name, value)
    for name, value in _dict(item.get("min")).items():
        request.setdefault(name, value)


@register
class EndpointsStrategy(Strategy):
    """Endpoints: no generation; SetDefaults_Endpoints (each subset port's protocol TCP)."""

    group, kind = "", "Endpoints"
    tracks_generation = False

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the endpoints strategy's endpointsWarnings (:mod:`kapi.kinds.corewarnings`)."""
        return endpoints_warnings(obj)

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: the endpoints strategy's endpointsWarnings of the new object."""
        return endpoints_update_warnings(new, old)

    def default(self, obj: Obj) -> None:
        """SetDefaults_Endpoints: ``subsets[*].ports[*].protocol`` TCP when unset."""
        for subset in _list(obj.get("subsets")):
            if isinstance(subset, dict):
                default_ports(subset.get("ports"))

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateEndpointsCreate (:func:`kapi.kinds.endpoints.validate_endpoints_create`)."""
        return validate_endpoints_create(obj)

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """Nothing: ValidateEndpointsUpdate (:meth:`validate_update`) holds the update's rules."""
        return []

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateEndpointsUpdate: the subsets' rules unless they are unchanged."""
        return validate_endpoints_update(new, old) if not subresource else []
