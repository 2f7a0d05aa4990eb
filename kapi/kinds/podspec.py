"""PodSpec defaults and validation shared by Pod, PodTemplate and the workload kinds (core, apps, batch).

From ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_PodSpec``,
``SetDefaults_Container``) and ``pkg/apis/core/validation/validation.go``
(``ValidatePodSpec``, the parts users hit), plus the checks every workload
spec shares (``pkg/apis/{apps,batch}/validation``: replicas, selector,
template labels, restartPolicy). No kind-specific rules live here: each
kind's home in :mod:`kapi.kinds` calls these with its own options.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kapi import quantity
from kapi.errors import Cause
from kapi.kinds.apparmor import validate_apparmor_annotations
from kapi.kinds.fields import (
    duplicate,
    go_string_map,
    go_value,
    is_valid_port_name,
    not_found,
    not_supported,
    selector_matches,
    selector_string,
    validate_label_selector,
)
from kapi.kinds.podaffinity import validate_affinity, validate_topology_spread_constraints
from kapi.kinds.podcontainers import (
    device_map,
    env_var_value_from,
    validate_container_restart_policy,
    validate_env_from,
    validate_ephemeral_container,
    validate_host_port_conflicts,
    validate_image_whitespace,
    validate_init_container_resize_policy,
    validate_pull_policy,
    validate_resize_policy,
    validate_termination_message_policy,
    validate_volume_devices,
    volume_mount_extras,
)
from kapi.kinds.podfields import (
    uses_indivisible_hugepages,
    validate_file_key_ref_volumes,
    validate_hostname_override,
    validate_node_selector,
    validate_os,
    validate_pod_class_fields,
    validate_pod_host_network_deps,
    validate_pod_names,
    validate_pod_resource_claims,
    validate_resource_claim_names,
    validate_scheduling_gates,
)
from kapi.kinds.podprobes import validate_container_probes
from kapi.kinds.podsecurity import (
    sysctl_namespace,
    validate_container_security_context,
    validate_host_users,
    validate_os_security,
    validate_pod_security_context,
    validate_windows_host_process_pod,
)
from kapi.kinds.podvolumes import ephemeral_claim_conflict, validate_volume_source
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_dns1123_subdomain_with_underscore,
    is_qualified_name,
    is_relaxed_env_var_name,
    is_valid_ip_for_legacy_field,
    is_valid_label_value,
)
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list

PORT_RANGE_MSG = "must be between 1 and 65535, inclusive"
PROTOCOLS = ("SCTP", "TCP", "UDP")
RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
SELECTOR_MISMATCH = "`selector` does not match template `labels`"
NEGATIVE = "must be greater than or equal to 0"  # apimachinery validation.IsNegativeErrorMsg
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
EMPTY_KEY_NEEDS_EXISTS = 'operator must be Exists when `key` is empty, which means "match all values and all keys"'
EMPTY_SELECTOR = "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}"
# VolumeSource's members (core/v1 types.go): a volume naming none of them is ``emptyDir: {}`` (SetDefaults_Volume).
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image")
DEFAULT_MODE = 0o644  # v1.SecretVolumeSourceDefaultMode and the ConfigMap, DownwardAPI and Projected ones (420)
PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
# The volume sources' declarative defaults (``+default`` tags in core/v1 types.go).
_SOURCE_DEFAULTS: dict[str, dict[str, Any]] = {
    "iscsi": {"iscsiInterface": "default"},
    "rbd": {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
    "azureDisk": {"cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False, "kind": "Shared"},
    "scaleIO": {"storageMode": "ThinProvisioned", "fsType": "xfs"},
}

Obj = dict[str, Any]


# ------------------------------------------------------------ defaults

def default_ports(ports: Any) -> None:
    """Container and Service ports: ``protocol`` TCP when absent."""
    for port in ports if isinstance(ports, list) else ():
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"


def image_pull_policy(image: Any) -> str:
    """Always for ``:latest`` or untagged images (no digest), else IfNotPresent."""
    text = str(image or "")
    if "@" in text:
        return "IfNotPresent"
    last = text.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _default_field_ref(holder: Any) -> None:
    """SetDefaults_ObjectFieldSelector: a ``fieldRef`` without ``apiVersion`` reads ``v1``."""
    ref = holder.get("fieldRef") if isinstance(holder, dict) else None
    if isinstance(ref, dict) and not ref.get("apiVersion"):
        ref["apiVersion"] = "v1"


def _default_handler(handler: Any) -> None:
    """A probe's or lifecycle hook's ``httpGet``: SetDefaults_HTTPGetAction (path ``/``, scheme HTTP)."""
    action = handler.get("httpGet") if isinstance(handler, dict) else None
    if isinstance(action, dict):
        if not action.get("path"):
            action["path"] = "/"
        if not action.get("scheme"):
            action["scheme"] = "HTTP"


def _default_probe(probe: Any) -> None:
    """SetDefaults_Probe: timeoutSeconds 1, periodSeconds 10, successThreshold 1, failureThreshold 3 (0 or
    absent counts as unset, as Go's zero value), then the handler's defaults."""
    if not isinstance(probe, dict):
        return
    for key, value in PROBE_DEFAULTS.items():
        if not probe.get(key):
            probe[key] = value
    _default_handler(probe)


def _default_containers(containers: Any) -> None:
    """SetDefaults_Container (and SetDefaults_EphemeralContainer): pull policy, termination message, ``resources``
    (a struct: encoded as ``{}``), port protocols, probes, lifecycle hooks and env ``fieldRef`` versions."""
    for c in containers if isinstance(containers, list) else ():
        if not isinstance(c, dict):
            continue
        # SetDefaults_Container tests for "": an empty value a client sent is defaulted too
        if not c.get("terminationMessagePath"):
            c["terminationMessagePath"] = "/dev/termination-log"
        if not c.get("terminationMessagePolicy"):
            c["terminationMessagePolicy"] = "File"
        if not c.get("imagePullPolicy"):
            c["imagePullPolicy"] = image_pull_policy(c.get("image"))
        c.setdefault("resources", {})
        default_ports(c.get("ports"))
        for key in ("livenessProbe", "readinessProbe", "startupProbe"):
            _default_probe(c.get(key))
        lifecycle = c.get("lifecycle")
        if isinstance(lifecycle, dict):
            _default_handler(lifecycle.get("postStart"))
            _default_handler(lifecycle.get("preStop"))
        for var in _list(c.get("env")):
            if isinstance(var, dict):
                _default_field_ref(var.get("valueFrom"))


def _default_downward_items(source: Any) -> None:
    for item in _list(_dict(source).get("items")):
        _default_field_ref(item)


def default_volume(volume: Any) -> None:
    """SetDefaults_Volume and its sources' defaults, in place.

    No source -> ``emptyDir: {}``; secret, configMap, downwardAPI and projected get ``defaultMode`` 420;
    hostPath ``type: ""``; a projected ``serviceAccountToken`` ``expirationSeconds`` 3600; downward API
    ``fieldRef`` ``apiVersion`` v1; an ephemeral volume's claim template ``volumeMode`` Filesystem; the
    declarative defaults of iscsi, rbd, azureDisk and scaleIO; an image volume's ``pullPolicy`` as a container's.
    """
    if not isinstance(volume, dict):
        return
    if all(volume.get(key) is None for key in VOLUME_SOURCES):
        volume["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = volume.get(key)
        if isinstance(source, dict) and source.get("defaultMode") is None:
            source["defaultMode"] = DEFAULT_MODE
    _default_downward_items(volume.get("downwardAPI"))
    host_path = volume.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""
    projected = volume.get("projected")
    for source in projected.get("sources") or () if isinstance(projected, dict) else ():
        if not isinstance(source, dict):
            continue
        token = source.get("serviceAccountToken")
        if isinstance(token, dict) and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = 3600
        _default_downward_items(source.get("downwardAPI"))
    ephemeral = volume.get("ephemeral")
    template = ephemeral.get("volumeClaimTemplate") if isinstance(ephemeral, dict) else None
    if isinstance(template, dict):
        default_claim_spec(template.setdefault("spec", {}) if template.get("spec") is None else template["spec"])
    image = volume.get("image")
    if isinstance(image, dict) and not image.get("pullPolicy"):
        image["pullPolicy"] = image_pull_policy(image.get("reference"))
    for key, defaults in _SOURCE_DEFAULTS.items():
        source = volume.get(key)
        if isinstance(source, dict):
            for name, value in defaults.items():
                if source.get(name) is None:
                    source[name] = value


def default_claim_spec(spec: Any) -> None:
    """SetDefaults_PersistentVolumeClaimSpec: ``volumeMode`` Filesystem."""
    if isinstance(spec, dict) and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"


def default_pod_spec(spec: Any) -> None:
    """SetDefaults_PodSpec with the containers' and volumes' defaults, in place: what every PodSpec gets, in a Pod
    and in every pod template (the Pod-only ones are :func:`default_pod_only`)."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    _default_containers(spec.get("containers"))
    _default_containers(spec.get("initContainers"))
    _default_containers(spec.get("ephemeralContainers"))
    for volume in _list(spec.get("volumes")):
        default_volume(volume)


def default_pod_only(spec: Any) -> None:
    """SetDefaults_Pod: the defaults a Pod gets and a pod template does not (kube keeps them out of templates so
    that a new default does not roll every workload, kubernetes#69445).

    ``enableServiceLinks`` true; a container (and init container) limit without a request requests the limit;
    with ``hostNetwork`` each port's ``hostPort`` is its ``containerPort`` (defaultHostNetworkPorts); then the
    pod-level ``resources`` defaults (PodLevelResources, :func:`default_pod_level_resources`).
    """
    if not isinstance(spec, dict):
        return
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    for key in ("initContainers", "containers"):
        for c in _list(spec.get(key)):
            res = c.get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict) and isinstance(res.get("limits"), dict) and res["limits"]:
                requests = res.get("requests")
                if not isinstance(requests, dict):
                    requests = res["requests"] = {}
                for name, value in res["limits"].items():
                    requests.setdefault(name, value)
            if spec.get("hostNetwork") is True and isinstance(c, dict):
                for port in _list(c.get("ports")):
                    if isinstance(port, dict) and not port.get("hostPort") and port.get("containerPort"):
                        port["hostPort"] = port["containerPort"]
    default_pod_level_resources(spec)


def default_template(spec: Obj, create: bool = False) -> None:
    """The pod spec defaults of a workload's ``spec.template``.

    ``create``: the template's ``spec`` is a struct in kube's Go types (apps/v1), so a ``null`` one decodes
    as empty and is defaulted (and then validated: ``spec.template.spec.containers: Required value``).
    """
    template = spec.get("template")
    if isinstance(template, dict):
        if create and template.get("spec") is None:
            template["spec"] = {}
        default_pod_spec(template.get("spec"))


POD_NAMES_AND_HOSTNAMES = "Pod names and hostnames"
POD_HOSTNAME = "the Pod's hostname"


def name_warnings(obj: Obj, used_in: str = POD_NAMES_AND_HOSTNAMES) -> list[str]:
    """The WarningsOnCreate name check of Pods and the workloads that name Pods after themselves: a
    ``metadata.name`` that is not a DNS label (``metadata.name: this is used in <used_in>, which can result
    in surprising behavior; a DNS label is recommended: [<IsDNS1123Label's messages>]``)."""
    name = _dict(obj.get("metadata")).get("name")
    msgs = is_dns1123_label(name) if isinstance(name, str) else []
    if not msgs:
        return []
    return [f"metadata.name: this is used in {used_in}, which can result in surprising behavior; a DNS label is "
            f"recommended: [{' '.join(msgs)}]"]


def spec_of(obj: Obj) -> Obj:
    """``obj["spec"]``, created empty when absent or not an object (defaulting needs somewhere to write)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


# ------------------------------------------------------------ validation

def port_number(path: str, value: Any) -> list[Cause]:
    """validatePortNumOrName's numeric case: 1-65535."""
    port = _int(value)
    return [invalid(path, port, PORT_RANGE_MSG)] if port is not None and not 1 <= port <= 65535 else []




def quantity_shown(raw: Any, value: Fraction) -> str:
    """A Quantity as its ``String()`` prints it (:func:`kapi.quantity.canonical` of ``raw``; ``value``, its parsed
    amount, in kapi's form when ``raw`` is no quantity text or number)."""
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
        with contextlib.suppress(ValueError):
            return quantity.canonical(raw)
    return quantity.format(value)


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources (no domain, or ``kubernetes.io/``) but hugepages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def validate_resources(resources: Any, path: str) -> list[Cause]:
    """ValidateResourceRequirements' quantity rules under ``path`` (``<path>.limits[cpu]``, ...).

    Every quantity ``must be greater than or equal to 0``; a request with a limit must be ``less than or equal
    to <name> limit of <limit>``, or for resources that cannot be overcommitted (extended, hugepages) ``equal``.
    Values that do not parse are the schema's (``quantities must match ...``).
    """
    resources = _dict(resources)
    out: list[Cause] = []
    parsed: dict[str, dict[str, tuple[Any, Fraction]]] = {}
    for which in ("limits", "requests"):
        parsed[which] = {}
        for name, raw in _dict(resources.get(which)).items():
            try:
                value = quantity.parse(raw)
            except ValueError:
                continue
            parsed[which][name] = (raw, value)
            if value < 0:
                out.append(invalid(f"{path}.{which}[{name}]", quantity_shown(raw, value), NEGATIVE))
    for name, (raw, value) in parsed["requests"].items():
        if name not in parsed["limits"]:
            continue
        limit_raw, limit = parsed["limits"][name]
        shown, limit_shown = quantity_shown(raw, value), quantity_shown(limit_raw, limit)
        if value != limit and not _overcommit_allowed(name):
            out.append(invalid(f"{path}.requests[{name}]", shown, f"must be equal to {name} limit of {limit_shown}"))
        elif value > limit:
            out.append(invalid(f"{path}.requests[{name}]", shown,
                               f"must be less than or equal to {name} limit of {limit_shown}"))
    return out


# ------------------------------------------------------------ pod-level resources (PodLevelResources)

POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")  # resourcehelper.SupportedPodLevelResources, sorted
HUGEPAGES_PREFIX = "hugepages-"
# helper.IsStandardResourceName: the one-segment names validateResourceName accepts (and hugepages-*)
STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
    "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"))

# A summed quantity: (value, the String() kube prints, binary format). Go's Quantity.Add keeps the first
# operand's format, so a sum prints in the format of the first container that named the resource.
_Sum = tuple[Fraction, str, bool]


def is_supported_pod_level_resource(name: str) -> bool:
    """resourcehelper.IsSupportedPodLevelResource: cpu, memory and ``hugepages-*``."""
    return name in ("cpu", "memory") or name.startswith(HUGEPAGES_PREFIX)


def _quantity_string(value: Fraction, binary: bool) -> str:
    """Quantity.String of a computed value: BinarySI as :func:`kapi.quantity.format`; DecimalSI integers with
    the largest decimal suffix that keeps them whole (``2k``, ``1G``)."""
    if binary or value.denominator != 1 or value == 0:
        return quantity.format(value, binary=binary)
    n, suffix = int(value), ""
    for s in ("k", "M", "G", "T", "P", "E"):
        if n % 1000:
            break
        n, suffix = n // 1000, s
    return f"{n}{suffix}"


def _quantities(resources: Any) -> dict[str, _Sum]:
    out: dict[str, _Sum] = {}
    for name, raw in _dict(resources).items():
        try:
            value = quantity.parse(raw)
        except ValueError:
            continue
        out[name] = (value, quantity_shown(raw, value), "i" in str(raw))
    return out


def _add(total: dict[str, _Sum], more: dict[str, _Sum]) -> None:
    for name, (value, shown, binary) in more.items():
        if name not in total:
            total[name] = (value, shown, binary)
        else:
            old, _shown, old_binary = total[name]
            total[name] = (old + value, _quantity_string(old + value, old_binary), old_binary)


def _max(total: dict[str, _Sum], more: dict[str, _Sum]) -> None:
    for name, entry in more.items():
        if name not in total or entry[0] > total[name][0]:
            total[name] = entry


def aggregate_container_resources(spec: Any, which: str) -> dict[str, _Sum]:
    """resourcehelper.AggregateContainerRequests / AggregateContainerLimits (``which``: ``requests`` or
    ``limits``) of a PodSpec's spec, as ``{name: (value, shown, binary)}``.

    The regular containers' sum, plus each restartable init container (``restartPolicy: Always``, a sidecar);
    an init container's use is its own plus the sidecars started before it (a sidecar's: all sidecars so far),
    and the result is the per-resource maximum of the sum and every init container's use (KEP-753).
    Ephemeral containers have no resources."""
    spec = _dict(spec)
    total: dict[str, _Sum] = {}
    for c in _list(spec.get("containers")):
        _add(total, _quantities(_dict(_dict(c).get("resources")).get(which)))
    sidecars: dict[str, _Sum] = {}
    init_use: dict[str, _Sum] = {}
    for c in _list(spec.get("initContainers")):
        c = _dict(c)
        own = _quantities(_dict(c.get("resources")).get(which))
        if c.get("restartPolicy") == "Always":
            _add(total, own)
            _add(sidecars, own)
            use = dict(sidecars)
        else:
            use = dict(own)
            _add(use, sidecars)
        _max(init_use, use)
    _max(total, init_use)
    return total


def _all_containers_limit(spec: Obj, name: str) -> bool:
    """resourcehelper.AllContainersHaveLimitForResource: every container and init container limits ``name``."""
    containers = [*_list(spec.get("containers")), *_list(spec.get("initContainers"))]
    return all(name in _dict(_dict(_dict(c).get("resources")).get("limits")) for c in containers)


def _supported_set(resources: Any) -> bool:
    return any(is_supported_pod_level_resource(str(name)) for name in _dict(resources))


def default_pod_level_resources(spec: Any) -> None:
    """SetDefaults_Pod's pod-level resource defaults (PodLevelResources), in place, after the containers'
    requests were defaulted from their limits; only when ``spec.resources`` is set.

    defaultHugePagePodLimits (pod ``limits`` or ``requests`` not empty): a ``hugepages-*`` that containers limit
    and the pod neither limits nor requests is limited to the containers' aggregate (kube:
    AggregateContainerLimits). defaultPodRequests (pod ``limits`` not empty): a cpu or memory the pod does not
    request requests the containers' aggregate requests when they have some; then each supported resource the
    pod limits and does not request requests the limit. defaultPodLimits (no supported pod limit, some supported
    pod request): a cpu or memory every container (and init container) limits is limited to their aggregate.
    Pods only, never pod templates (SetDefaults_Pod, not SetDefaults_PodSpec).
    """
    if not isinstance(spec, dict) or not isinstance(spec.get("resources"), dict):
        return
    resources = spec["resources"]
    limits, requests = _dict(resources.get("limits")), _dict(resources.get("requests"))
    if limits or requests:  # defaultHugePagePodLimits
        pod_limits = dict(limits)
        for name, (_value, shown, _binary) in aggregate_container_resources(spec, "limits").items():
            if name.startswith(HUGEPAGES_PREFIX) and name not in requests and name not in pod_limits:
                pod_limits[name] = shown
        if pod_limits:
            resources["limits"] = limits = pod_limits
    if limits:  # defaultPodRequests
        pod_requests = dict(requests)
        for name, (_value, shown, _binary) in aggregate_container_resources(spec, "requests").items():
            if name not in pod_requests and is_supported_pod_level_resource(name) and _overcommit_allowed(name):
                pod_requests[name] = shown
        for name, raw in limits.items():
            if name not in pod_requests and is_supported_pod_level_resource(name):
                pod_requests[name] = raw
        if pod_requests:
            resources["requests"] = requests = pod_requests
    if not _supported_set(limits) and _supported_set(requests):  # defaultPodLimits
        pod_limits = dict(limits)
        for name, (_value, shown, _binary) in aggregate_container_resources(spec, "limits").items():
            if name not in pod_limits and is_supported_pod_level_resource(name) and _overcommit_allowed(name) \
                    and _all_containers_limit(spec, name):
                pod_limits[name] = shown
        if pod_limits:
            resources["limits"] = pod_limits


def _pod_resource_name(name: str, path: str) -> list[Cause]:
    """validatePodResourceName: validateResourceName (a qualified name; one segment must be a standard
    resource), then a resource PodLevelResources supports (``Unsupported value``)."""
    msgs = is_qualified_name(name)
    if msgs:
        return [invalid(path, name, msg) for msg in msgs]
    if "/" not in name and name not in STANDARD_RESOURCES and not name.startswith(HUGEPAGES_PREFIX):
        return [invalid(path, name, "must be a standard resource type or fully qualified")]
    if not is_supported_pod_level_resource(name):
        return [not_supported(path, name, POD_LEVEL_RESOURCES)]
    return []


def validate_pod_resources(spec: Obj, path: str) -> list[Cause]:
    """validatePodResources of a PodSpec's ``resources`` (a Pod's and every template's; the PodLevelResources
    gate is on), causes under ``path`` (``spec.resources``).

    ``claims`` are forbidden (``claims cannot be set for Resources at pod-level``); each name must be cpu,
    memory or ``hugepages-*`` (``Unsupported value: "<name>": supported values: "cpu", "hugepages-",
    "memory"``); the quantities as a container's (:func:`validate_resources`), a hugepages request needs its
    limit (``<path>.limits: Required value: Limit must be set for non overcommitable resources``) and hugepages
    need cpu or memory (``<path>: Forbidden: HugePages require cpu or memory``). validatePodResourceConsistency:
    ``<path>.requests[<name>]: Invalid value: "<pod request>": must be greater than or equal to aggregate
    container requests of <sum>`` for each supported resource the pod requests below the containers' aggregate
    (:func:`aggregate_container_resources`; since kubernetes#130131 and #132551 a resource the pod does not
    request is not compared, so a template without defaulted pod requests stays valid), and
    ``<path>.containers[<i>][<name>].limits: Invalid value: "<limit>": must be less than or equal to pod limits of
    <pod limit>`` for each regular container limit above the pod's.
    """
    resources = _dict(spec.get("resources"))
    out: list[Cause] = []
    if resources.get("claims") is not None:
        out.append(forbidden(f"{path}.claims", "claims cannot be set for Resources at pod-level"))
    limits, requests = _dict(resources.get("limits")), _dict(resources.get("requests"))
    for which, names in (("limits", limits), ("requests", requests)):
        for name in names:
            out.extend(_pod_resource_name(str(name), f"{path}.{which}[{name}]"))
    out.extend(validate_resources(resources, path))
    for name in requests:
        if name not in limits and not _overcommit_allowed(str(name)):
            out.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
    named = [str(n) for n in (*limits, *requests)]
    if any(n.startswith(HUGEPAGES_PREFIX) for n in named) and not any(n in QOS_COMPUTE for n in named):
        out.append(forbidden(path, "HugePages require cpu or memory"))
    pod_requests, pod_limits = _quantities(requests), _quantities(limits)
    aggregate = aggregate_container_resources(spec, "requests")
    for name, (pod_value, pod_shown, _binary) in pod_requests.items():
        if is_supported_pod_level_resource(name) and name in aggregate and aggregate[name][0] > pod_value:
            detail = f"must be greater than or equal to aggregate container requests of {aggregate[name][1]}"
            out.append(invalid(f"{path}.requests[{name}]", pod_shown, detail))
    for i, c in enumerate(_list(spec.get("containers"))):
        for name, (value, shown, _binary) in _quantities(_dict(_dict(c).get("resources")).get("limits")).items():
            if name in pod_limits and value > pod_limits[name][0]:
                out.append(invalid(f"{path}.containers[{i}][{name}].limits", shown,
                                   f"must be less than or equal to pod limits of {pod_limits[name][1]}"))
    return out


QOS_COMPUTE = ("cpu", "memory")  # validateResourceRequirements' supportedQoSComputeResources


def _env(env: list[Any], path: str) -> list[Cause]:
    """ValidateEnv per variable: the name Required when empty, else IsRelaxedEnvVarName; then its ``valueFrom``
    (:func:`kapi.kinds.podcontainers.env_var_value_from`)."""
    out: list[Cause] = []
    for i, var in enumerate(env):
        name = _dict(var).get("name")
        name = name if isinstance(name, str) else ""
        if not name:
            out.append(required(f"{path}[{i}].name"))
        else:  # the bad value as Go's %q prints it: a NUL is \x00 (kapi.objectmeta.invalid does not escape)
            out.extend(Cause("FieldValueInvalid", f"Invalid value: {go_value(name)}: {msg}", f"{path}[{i}].name")
                       for msg in is_relaxed_env_var_name(name))
        out.extend(env_var_value_from(var, f"{path}[{i}]"))
    return out


def _ports(ports: list[Any], path: str) -> list[Cause]:
    """validateContainerPorts: names (IANA_SVC_NAME, unique within the container), numbers, protocols."""
    out: list[Cause] = []
    names: set[str] = set()
    for j, port in enumerate(ports):
        port = _dict(port)
        ppath = f"{path}[{j}]"
        name = port.get("name")
        if isinstance(name, str) and name:
            msgs = is_valid_port_name(name)
            if msgs:
                out.extend(invalid(f"{ppath}.name", name, msg) for msg in msgs)
            elif name in names:
                out.append(duplicate(f"{ppath}.name", name))
            else:
                names.add(name)
        if not port.get("containerPort"):
            out.append(required(f"{ppath}.containerPort"))
        else:
            out.extend(port_number(f"{ppath}.containerPort", port.get("containerPort")))
        if port.get("hostPort"):
            out.extend(port_number(f"{ppath}.hostPort", port.get("hostPort")))
        protocol = port.get("protocol")
        if isinstance(protocol, str) and protocol not in PROTOCOLS:
            out.append(not_supported(f"{ppath}.protocol", protocol, PROTOCOLS))
    return out


def _volume_mounts(container: Obj, path: str, volumes: Mapping[str, Any]) -> list[Cause]:
    """ValidateVolumeMounts of a container (``path`` its ``volumeMounts`` path) per mount: ``name`` required and
    one of the Pod's valid volumes (``Not found``), ``mountPath`` required and unique within the container (``must
    be unique``), the volumeDevices overlap and ``subPath`` checks, ``subPath`` and ``subPathExpr`` mutually
    exclusive, then ``subPathExpr``, ``mountPropagation`` and ``recursiveReadOnly``
    (:func:`kapi.kinds.podcontainers.volume_mount_extras`)."""
    out: list[Cause] = []
    paths: set[str] = set()
    mounts = _list(container.get("volumeMounts"))
    devices = device_map(container)
    cpath = path.rsplit(".", 1)[0]
    for i, mount in enumerate(mounts):
        mount = _dict(mount)
        mpath = f"{path}[{i}]"
        name, mount_path = _str(mount.get("name")), _str(mount.get("mountPath"))
        if not name:
            out.append(required(f"{mpath}.name"))
        if name not in volumes:
            out.append(not_found(f"{mpath}.name", name))
        if not mount_path:
            out.append(required(f"{mpath}.mountPath"))
        if mount_path in paths:
            out.append(invalid(f"{mpath}.mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
        before, after = volume_mount_extras(container, cpath, i, devices)
        out.extend(before)
        if _str(mount.get("subPathExpr")) and _str(mount.get("subPath")):
            out.append(invalid(f"{mpath}.subPathExpr", mount["subPathExpr"],
                               "subPathExpr and subPath are mutually exclusive"))
        out.extend(after)
    return out


def _containers(containers: list[Any], path: str, names: set[str], volumes: Mapping[str, Any], spec: Obj, *,
                init: bool = False, ephemeral: bool = False) -> list[Cause]:
    """validateContainers / validateInitContainers / validateEphemeralContainers for one list, in kube's order.

    Per container validateContainerCommon (name, image, terminationMessagePolicy, ports, env, envFrom,
    volumeMounts, volumeDevices, imagePullPolicy, resources, resizePolicy, securityContext), then: regular ones
    the name unique across the Pod's containers (``names``, shared), probes and lifecycle
    (:mod:`kapi.kinds.podprobes`) and the restartPolicy rules, the host ports after the loop; init ones the
    restartPolicy rules, the name, their host ports, probes (sidecars only) and the resizePolicy rule; ephemeral
    ones the image's whitespace, the name and the allow-list (:mod:`kapi.kinds.podcontainers`). ``volumes``
    maps the Pod's valid volumes' names to their JSON.
    """
    out: list[Cause] = []
    grace = _int(spec.get("terminationGracePeriodSeconds"))
    others = frozenset(_str(_dict(c).get("name")) for key in ("containers", "initContainers")
                       for c in _list(spec.get(key)))
    for i, container in enumerate(containers):
        container = _dict(container)
        cpath = f"{path}[{i}]"
        name = container.get("name")
        if not name:
            out.append(required(f"{cpath}.name"))
        elif isinstance(name, str):
            out.extend(invalid(f"{cpath}.name", name, msg) for msg in is_dns1123_label(name))
        if not container.get("image"):
            out.append(required(f"{cpath}.image"))
        out.extend(validate_termination_message_policy(container, cpath))
        out.extend(_ports(_list(container.get("ports")), f"{cpath}.ports"))
        out.extend(_env(_list(container.get("env")), f"{cpath}.env"))
        out.extend(validate_env_from(container, cpath))
        out.extend(_volume_mounts(container, f"{cpath}.volumeMounts", volumes))
        out.extend(validate_volume_devices(container, cpath, dict(volumes)))
        out.extend(validate_pull_policy(container, cpath))
        out.extend(validate_resources(container.get("resources"), f"{cpath}.resources"))
        out.extend(validate_resource_claim_names(container.get("resources"), spec, f"{cpath}.resources"))
        out.extend(validate_resize_policy(container, cpath, spec.get("restartPolicy") or "Always"))
        out.extend(validate_container_security_context(container, cpath, spec, apparmor=True))
        if init:
            out.extend(validate_container_restart_policy(container, cpath, init=True))
        if ephemeral:
            out.extend(validate_image_whitespace(container, cpath))
        if isinstance(name, str) and name:
            if name in names:
                out.append(duplicate(f"{cpath}.name", name))
            names.add(name)
        if ephemeral:
            out.extend(validate_ephemeral_container(container, cpath, others))
            continue
        if init:
            out.extend(validate_host_port_conflicts([container], path))
        out.extend(validate_container_probes(container, cpath, init=init,
                                             sidecar=init and container.get("restartPolicy") == "Always",
                                             grace_period=grace))
        if init:
            out.extend(validate_init_container_resize_policy(container, cpath))
        else:
            out.extend(validate_container_restart_policy(container, cpath))
    if not init and not ephemeral:
        out.extend(validate_host_port_conflicts(containers, path))
    return out


def _volumes(volumes: list[Any], path: str, *, pod_name: str | None = None, resource_is_pod: bool = False
             ) -> tuple[list[Cause], dict[str, Any]]:
    """ValidateVolumes: per volume its source (:func:`kapi.kinds.podvolumes.validate_volume_source`), its name
    (Required, a DNS-1123 label, unique), then the ephemeral-claim conflict. Returns the causes and the valid
    volumes by name (an invalid one is not registered: mounts naming it are ``Not found``)."""
    out: list[Cause] = []
    names: dict[str, Any] = {}
    for i, volume in enumerate(volumes):
        vpath = f"{path}[{i}]"
        causes = validate_volume_source(volume, vpath, pod_name=pod_name, resource_is_pod=resource_is_pod)
        name = _dict(volume).get("name")
        npath = f"{vpath}.name"
        if not name:
            causes.append(required(npath))
        elif isinstance(name, str):
            causes.extend(invalid(npath, name, msg) for msg in is_dns1123_label(name))
        if isinstance(name, str) and name in names:
            causes.append(duplicate(npath, name))
        if not causes and isinstance(name, str):
            names[name] = volume
        out.extend(causes)
        out.extend(ephemeral_claim_conflict(volume, vpath, volumes, pod_name))
    return out, names


def validate_tolerations(tolerations: list[Any], path: str) -> list[Cause]:
    """validateTolerations: key a label name, an empty key needs Exists, tolerationSeconds needs NoExecute,
    operator Equal (value a label value) or Exists (no value), effect NoSchedule/PreferNoSchedule/NoExecute."""
    out: list[Cause] = []
    for i, toleration in enumerate(tolerations):
        toleration = _dict(toleration)
        tpath = f"{path}[{i}]"
        key, operator = _str(toleration.get("key")), _str(toleration.get("operator"))
        value, effect = _str(toleration.get("value")), _str(toleration.get("effect"))
        if key:
            out.extend(invalid(f"{tpath}.key", key, msg) for msg in is_qualified_name(key))
        if not key and operator != "Exists":
            out.append(invalid(f"{tpath}.operator", operator, EMPTY_KEY_NEEDS_EXISTS))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(invalid(f"{tpath}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            msgs = is_valid_label_value(value)
            if msgs:
                out.append(invalid(f"{tpath}.operator", value, ";".join(msgs)))
        elif operator == "Exists":
            if value:
                out.append(Cause("FieldValueInvalid", f"Invalid value: {_go_toleration(toleration)}: value must be "
                                 "empty when `operator` is 'Exists'", f"{tpath}.operator"))
        else:
            out.append(not_supported(f"{tpath}.operator", operator, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            out.append(not_supported(f"{tpath}.effect", effect, TAINT_EFFECTS))
    return out


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _go_toleration(toleration: Obj) -> str:
    """A ``core.Toleration`` as ``%#v`` prints it (a set tolerationSeconds is a pointer: Go prints an address)."""
    seconds = "(*int64)(nil)" if toleration.get("tolerationSeconds") is None else "(*int64)(0xc000000000)"
    fields = ", ".join(f"{k.capitalize()}:{go_value(_str(toleration.get(k)))}" for k in ("key", "operator", "value",
                                                                                          "effect"))
    return f"core.Toleration{{{fields}, TolerationSeconds:{seconds}}}"


# ------------------------------------------------------------ update ratcheting (PodValidationOptions)


@dataclass(frozen=True)
class PodValidationOptions:
    """The PodValidationOptions fields kapi's ValidatePodSpec reads that GetValidationOptionsFromPodSpecAndMeta
    (``pkg/api/pod/util.go``) derives from the stored spec on an update (all False on create): each lets a value
    the stored object already had stay. The others it sets are constant in 1.37: AllowRelaxedDNSSearchValidation
    and AllowRelaxedEnvironmentVariableValidation are always true (their gates are GA), and the IP fields
    (``dnsConfig.nameservers``, ``hostAliases[].ip``) take no old values at all (IsValidIPForLegacyField with
    ``validOldIPs`` nil: StrictIPCIDRValidation treats them as immutable Pod fields)."""

    allow_invalid_label_value_in_selector: bool = False
    allow_invalid_label_value_in_required_node_affinity: bool = False
    allow_invalid_topology_spread_label_selector: bool = False
    allow_namespaced_sysctls_for_host_net_and_ipc: bool = False
    allow_indivisible_hugepages: bool = False


def _affinity_terms(affinity: Any) -> Iterator[Obj]:
    for kind in ("podAffinity", "podAntiAffinity"):
        section = _dict(_dict(affinity).get(kind))
        yield from (_dict(t) for t in _list(section.get("requiredDuringSchedulingIgnoredDuringExecution")))
        for weighted in _list(section.get("preferredDuringSchedulingIgnoredDuringExecution")):
            yield _dict(_dict(weighted).get("podAffinityTerm"))


def _invalid_label_value_in_affinity_selector(spec: Obj) -> bool:
    """hasInvalidLabelValueInAffinitySelector: a pod (anti-)affinity term whose ``labelSelector`` or
    ``namespaceSelector`` fails ValidatePodAffinityTermSelector (any selector error, label values checked)."""
    return any(validate_label_selector(term[name], name)
               for term in _affinity_terms(spec.get("affinity"))
               for name in ("labelSelector", "namespaceSelector") if isinstance(term.get(name), dict))


def _invalid_label_value_in_required_node_affinity(spec: Obj) -> bool:
    """hasInvalidLabelValueInRequiredNodeAffinity (helper.HasInvalidLabelValueInNodeSelectorTerms): a value of a
    required node-affinity term's ``matchExpressions`` that is no label value."""
    node = _dict(_dict(spec.get("affinity")).get("nodeAffinity"))
    terms = _list(_dict(node.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms"))
    return any(isinstance(value, str) and is_valid_label_value(value)
               for term in terms for expr in _list(_dict(term).get("matchExpressions"))
               for value in _list(_dict(expr).get("values")))


def _invalid_topology_spread_label_selector(spec: Obj) -> bool:
    """hasInvalidTopologySpreadConstraintLabelSelector: a constraint's ``labelSelector`` ValidateLabelSelector
    refuses (label values checked)."""
    return any(validate_label_selector(_dict(c).get("labelSelector"), "labelSelector")
               for c in _list(spec.get("topologySpreadConstraints"))
               if isinstance(_dict(c).get("labelSelector"), dict))


def _host_sysctl_in_use(spec: Obj) -> bool:
    """A stored sysctl ValidateHostSysctl refuses: a net.* one with ``hostNetwork``, an IPC one with
    ``hostIPC``."""
    for sysctl in _list(_dict(spec.get("securityContext")).get("sysctls")):
        namespace = sysctl_namespace(_str(_dict(sysctl).get("name")))
        if (spec.get("hostNetwork") is True and namespace == "Net") or \
                (spec.get("hostIPC") is True and namespace == "IPC"):
            return True
    return False


def validation_options(old_spec: Any) -> PodValidationOptions:
    """GetValidationOptionsFromPodSpecAndMeta's ratchets from ``old_spec`` (the stored PodSpec, a v1 JSON dict;
    None or a non-object on create: every option False): invalid label values in pod (anti-)affinity selectors,
    in required node affinity, a bad topology spread ``labelSelector``, host-namespace sysctls with
    hostNetwork/hostIPC (AllowNamespacedSysctlsForHostNetAndHostIPC) and indivisible hugepages quantities."""
    if not isinstance(old_spec, dict):
        return PodValidationOptions()
    return PodValidationOptions(
        allow_invalid_label_value_in_selector=_invalid_label_value_in_affinity_selector(old_spec),
        allow_invalid_label_value_in_required_node_affinity=_invalid_label_value_in_required_node_affinity(old_spec),
        allow_invalid_topology_spread_label_selector=_invalid_topology_spread_label_selector(old_spec),
        allow_namespaced_sysctls_for_host_net_and_ipc=_host_sysctl_in_use(old_spec),
        allow_indivisible_hugepages=uses_indivisible_hugepages(old_spec),
    )


_STORED: contextvars.ContextVar[Obj | None] = contextvars.ContextVar("kapi_stored_object", default=None)


@contextlib.contextmanager
def stored_object(old: Obj | None) -> Iterator[None]:
    """Within the block, :func:`validate_pod_spec` takes its update options (:func:`validation_options`) from
    the PodSpec of ``old`` (the stored object of an update; None for a create) at the same path as the spec it
    validates (``spec`` of a Pod, ``spec.template.spec`` of a Deployment, ``template.spec`` of a PodTemplate):
    kube's ValidatePodUpdate / ValidatePodTemplateSpec with options from the old object."""
    token = _STORED.set(old)
    try:
        yield
    finally:
        _STORED.reset(token)


def _stored_spec(path: str) -> Any:
    value: Any = _STORED.get()
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def validate_pod_spec(spec: Any, path: str, *, pod_name: str | None = None, resource_is_pod: bool = False,
                      pod_annotations: Any = None, options: PodValidationOptions | None = None) -> list[Cause]:
    """ValidatePodSpec with causes under ``path``, in kube's order: volumes (:func:`_volumes`; ``pod_name``,
    ``resource_is_pod`` and ``pod_annotations`` for a Pod's own spec: PodValidationOptions.ResourceIsPod, a
    static Pod's claims), resource claims and the rest of :mod:`kapi.kinds.podfields`, containers, init containers,
    ephemeral containers (names unique across them; :func:`_containers`), pod-level resources,
    restartPolicy, dnsPolicy, securityContext (:mod:`kapi.kinds.podsecurity`), affinity
    (:mod:`kapi.kinds.podaffinity`), dnsConfig, readinessGates, topologySpreadConstraints, Windows
    hostProcess and hostUsers rules, tolerations, hostAliases, and the rules of ``os.name``.

    An absent or ``null`` spec is kube's zero PodSpec (``<path>.containers: Required value``); another
    non-object is the schema's to refuse. ``options``: the update ratchets; by default those of the stored spec
    at ``path`` inside :func:`stored_object` (none outside it).
    """
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        return []
    opts = options if options is not None else validation_options(_stored_spec(path))
    out: list[Cause] = []
    names: set[str] = set()
    causes, volumes = _volumes(_list(spec.get("volumes")), f"{path}.volumes", pod_name=pod_name,
                               resource_is_pod=resource_is_pod)
    out.extend(causes)
    out.extend(validate_pod_resource_claims(spec, path, pod_annotations=pod_annotations))
    containers = _list(spec.get("containers"))
    if not containers:
        out.append(required(f"{path}.containers"))
    out.extend(_containers(containers, f"{path}.containers", names, volumes, spec))
    out.extend(_containers(_list(spec.get("initContainers")), f"{path}.initContainers", names, volumes, spec,
                           init=True))
    # Ephemeral containers are added through their subresource; their names share the namespace.
    out.extend(_containers(_list(spec.get("ephemeralContainers")), f"{path}.ephemeralContainers", names, volumes,
                           spec, ephemeral=True))
    if isinstance(spec.get("resources"), dict):  # PodLevelResources (on by default since 1.34)
        out.extend(validate_pod_resources(spec, f"{path}.resources"))
    out.extend(validate_pod_host_network_deps(spec, path, resource_is_pod=resource_is_pod))
    # An empty policy is what kube's defaulting fills in (Always, ClusterFirst), not an error here.
    policy = spec.get("restartPolicy")
    if policy and isinstance(policy, str) and policy not in RESTART_POLICIES:
        out.append(not_supported(f"{path}.restartPolicy", policy, RESTART_POLICIES))
    dns = spec.get("dnsPolicy")
    if dns and isinstance(dns, str) and dns not in DNS_POLICIES:
        out.append(not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    out.extend(validate_node_selector(spec, path))
    out.extend(validate_pod_security_context(
        spec, path, apparmor=True, allow_host_sysctls=opts.allow_namespaced_sysctls_for_host_net_and_ipc))
    out.extend(validate_affinity(
        spec.get("affinity"), f"{path}.affinity",
        allow_invalid_label_value_in_selector=opts.allow_invalid_label_value_in_selector,
        allow_invalid_label_value_in_required_node_affinity=opts.allow_invalid_label_value_in_required_node_affinity))
    out.extend(validate_pod_dns_config(spec.get("dnsConfig"), dns, f"{path}.dnsConfig"))
    out.extend(validate_readiness_gates(spec.get("readinessGates"), f"{path}.readinessGates"))
    out.extend(validate_scheduling_gates(spec, path))
    out.extend(validate_topology_spread_constraints(
        spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints",
        allow_invalid_label_selector=opts.allow_invalid_topology_spread_label_selector))
    out.extend(validate_windows_host_process_pod(spec, path))
    out.extend(validate_host_users(spec, path))
    out.extend(validate_hostname_override(spec, path))
    out.extend(validate_pod_names(spec, path))
    out.extend(validate_tolerations(_list(spec.get("tolerations")), f"{path}.tolerations"))
    out.extend(validate_host_aliases(spec.get("hostAliases"), f"{path}.hostAliases"))
    out.extend(validate_pod_class_fields(spec, path, allow_indivisible_hugepages=opts.allow_indivisible_hugepages))
    os_causes = validate_os(spec, path)
    out.extend(os_causes or validate_os_security(spec, path))
    out.extend(validate_file_key_ref_volumes(spec, path))
    return out


MAX_DNS_NAMESERVERS = 3
MAX_DNS_SEARCH_PATHS = 32
MAX_DNS_SEARCH_LIST_CHARS = 2048


def _invalid_each(path: str, value: str, messages: list[str]) -> list[Cause]:
    return [invalid(path, value, m) for m in messages]


def validate_pod_dns_config(config: Any, dns_policy: Any, path: str) -> list[Cause]:
    """validatePodDNSConfig (``pkg/apis/core/validation/validation.go``) of ``spec.dnsConfig`` at ``path``.

    ``dnsPolicy`` None needs a config (``Required value: must provide `dnsConfig` when `dnsPolicy` is None``)
    with a nameserver (``<path>.nameservers: Required value: must provide at least one DNS nameserver when
    `dnsPolicy` is None``; either ends the check). Then at most 3 nameservers (``Invalid value: []string{...}:
    must not have more than 3 nameservers``), each an IP (IsValidIPForLegacyField); at most 32 searches and 2048
    characters joined by spaces; each search but ``"."``, less one trailing dot, a subdomain that may hold
    ``_`` (RelaxedDNSSearchValidation, GA in 1.34); each option's name set (``options[<i>]: Required value: must
    not be empty``). [] when valid or absent.
    """
    out: list[Cause] = []
    if dns_policy == "None":
        if config is None:
            return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not _list(_dict(config).get("nameservers")):
            return [required(f"{path}.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is "
                                                    "None")]
    if not isinstance(config, dict):
        return out
    nameservers = [_str(n) for n in _list(config.get("nameservers"))]
    if len(nameservers) > MAX_DNS_NAMESERVERS:
        out.append(invalid(f"{path}.nameservers", nameservers,
                           f"must not have more than {MAX_DNS_NAMESERVERS} nameservers"))
    for i, nameserver in enumerate(nameservers):
        out.extend(_invalid_each(f"{path}.nameservers[{i}]", nameserver, is_valid_ip_for_legacy_field(nameserver)))
    searches = [_str(s) for s in _list(config.get("searches"))]
    if len(searches) > MAX_DNS_SEARCH_PATHS:
        out.append(invalid(f"{path}.searches", searches, f"must not have more than {MAX_DNS_SEARCH_PATHS} search "
                                                         "paths"))
    if len(" ".join(searches)) > MAX_DNS_SEARCH_LIST_CHARS:
        out.append(invalid(f"{path}.searches", searches, f"must not have more than {MAX_DNS_SEARCH_LIST_CHARS} "
                                                         "characters (including spaces) in the search list"))
    for i, search in enumerate(searches):
        if search != ".":
            search = search.removesuffix(".")
            out.extend(_invalid_each(f"{path}.searches[{i}]", search, is_dns1123_subdomain_with_underscore(search)))
    for i, option in enumerate(_list(config.get("options"))):
        if not _str(_dict(option).get("name")):
            out.append(required(f"{path}.options[{i}]", "must not be empty"))
    return out


def validate_readiness_gates(gates: Any, path: str) -> list[Cause]:
    """validateReadinessGates: each ``conditionType`` a qualified name (``<path>[<i>].conditionType: Invalid value:
    "<type>": <IsQualifiedName message>``, one cause per message). [] when valid or absent."""
    out: list[Cause] = []
    for i, gate in enumerate(_list(gates)):
        condition = _str(_dict(gate).get("conditionType"))
        out.extend(_invalid_each(f"{path}[{i}].conditionType", condition, is_qualified_name(condition)))
    return out


def validate_host_aliases(aliases: Any, path: str) -> list[Cause]:
    """ValidateHostAliases: each ``ip`` an IP (IsValidIPForLegacyField: ``<path>[<i>].ip: Invalid value: "<ip>":
    must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)``), each of its ``hostnames`` a DNS-1123
    subdomain (``<path>[<i>].hostnames[<j>]``, no trailing dot). [] when valid or absent."""
    out: list[Cause] = []
    for i, alias in enumerate(_list(aliases)):
        alias = _dict(alias)
        ip = _str(alias.get("ip"))
        out.extend(_invalid_each(f"{path}[{i}].ip", ip, is_valid_ip_for_legacy_field(ip)))
        for j, hostname in enumerate(_list(alias.get("hostnames"))):
            name = _str(hostname)
            out.extend(_invalid_each(f"{path}[{i}].hostnames[{j}]", name, is_dns1123_subdomain(name)))
    return out


def validate_workload(spec: Obj, what: str, restart_policies: tuple[str, ...] | None, selector_required: bool = True,
                      replicas: bool = True, label_selector: bool = True,
                      invalid_selector: str | None = None, pod_spec: bool = True) -> list[Cause]:
    """The spec checks every workload shares, with kube's paths under ``spec``.

    ``what`` names the kind in ``empty selector is invalid for <what>``;
    ``restart_policies`` are the template's allowed policies (None: any);
    ``replicas`` False skips ``spec.replicas >= 0`` (DaemonSet, Job);
    ``label_selector`` False for ReplicationController's plain-map selector;
    ``invalid_selector``: for kinds whose validation (ValidateDeploymentSpec, ValidateReplicaSetSpec,
    ValidateStatefulSetSpec) stops at a selector ``LabelSelectorAsSelector`` refuses, the detail of the
    ``spec.selector: Invalid value: &LabelSelector{...}`` cause they add, after which the template is not
    validated; None: only the template-labels match is skipped (DaemonSet, Job);
    ``pod_spec`` False skips ValidatePodSpec of the template (a StatefulSet: kube's
    ValidatePodTemplateSpecForStatefulSet leaves it as a TODO, since its containers mount claim templates that
    are no volumes), keeping the selector match, the pod-specific annotations and the restart policy.
    """
    out: list[Cause] = []
    count = _int(spec.get("replicas"))
    if replicas and count is not None and count < 0:
        out.append(invalid("spec.replicas", count, "must be greater than or equal to 0"))
    template = _dict(spec.get("template"))
    selector = spec.get("selector")
    if not label_selector:  # ReplicationController: a plain map, defaulted from the template labels
        pass
    elif selector is None:
        if selector_required:
            out.append(required("spec.selector"))
    elif isinstance(selector, dict):
        selector_causes = validate_label_selector(selector, "spec.selector")
        out.extend(selector_causes)
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            out.append(Cause("FieldValueInvalid", f"Invalid value: {EMPTY_SELECTOR}: empty selector is invalid for "
                             f"{what}", "spec.selector"))
        elif selector_causes:
            if invalid_selector is not None:
                shown = selector_string(selector)
                detail = f": {invalid_selector}" if invalid_selector else ""
                out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}{detail}", "spec.selector"))
                return out
        else:
            labels = _dict(template.get("metadata")).get("labels")
            if selector_matches(selector, _dict(labels)) is False:
                out.append(Cause("FieldValueInvalid", f"Invalid value: {go_string_map(labels)}: {SELECTOR_MISMATCH}",
                                 "spec.template.metadata.labels"))
    if not label_selector and spec.get("template") is None:  # ReplicationController's template is a pointer
        return [*out, required("spec.template")]
    template_spec = template.get("spec")
    # ValidatePodTemplateSpec: ValidatePodSpecificAnnotations, then ValidatePodSpec
    out.extend(validate_apparmor_annotations(_dict(template.get("metadata")).get("annotations"), template_spec,
                                             "spec.template.metadata.annotations"))
    if pod_spec:
        out.extend(validate_pod_spec(template_spec, "spec.template.spec"))
    policy = _dict(template_spec).get("restartPolicy")
    if restart_policies and isinstance(template_spec, dict) and policy and policy not in restart_policies:
        out.append(not_supported("spec.template.spec.restartPolicy", policy, restart_policies))
    return out
