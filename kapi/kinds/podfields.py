"""The pod-level rules of kube's ValidatePodSpec that the other pod modules leave out.

Source: kubernetes ``pkg/apis/core/validation/validation.go`` (kube 1.37; read against the 1.35/1.36 file):
validatePodResourceClaims, validateResourceClaimNames (a container's ``resources.claims``),
validatePodHostNetworkDeps, the ``nodeSelector`` labels, validateSchedulingGates, validatePodHostName
(``hostnameOverride``, HostnameOverride beta and on since 1.35), the serviceAccountName / nodeName /
activeDeadlineSeconds / hostname / subdomain checks, priorityClassName, runtimeClassName
(ValidateRuntimeClassName), ValidatePreemptionPolicy, validateOverhead, validateOS and
validateFileKeyRefVolumes (EnvFiles).

Every public function takes the PodSpec JSON (v1 names, defaults applied) and the PodSpec's path (``spec``,
``spec.template.spec``) and returns the causes kube gives, in kube's order within the function; wrong JSON types
are skipped (the schema layer reports them). See each docstring for where ValidatePodSpec calls the rule.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from kapi import quantity
from kapi.errors import Cause
from kapi.kinds.fields import duplicate, go_quote, go_value, not_found, not_supported
from kapi.objectmeta import forbidden, invalid, required, too_long, validate_labels
from kapi.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list
from kapi.values import as_str as _str

Obj = dict[str, Any]

MAX_INT32 = 2**31 - 1
ACTIVE_DEADLINE_MSG = f"must be between 1 and {MAX_INT32}, inclusive"  # validation.InclusiveRangeError(1, MaxInt32)
HOST_NETWORK_PORT_MSG = "must match `containerPort` when `hostNetwork` is true"
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")  # ValidatePreemptionPolicy's validValues, in its order
VALID_OS = ("linux", "windows")  # validOS, sets.List: sorted
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"  # core.MirrorPodAnnotationKey
STATIC_POD_CLAIMS_MSG = "static pods do not support resource claims"
CLAIM_AT_MOST_ONE_MSG = "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
CLAIM_ONE_OF_MSG = "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
CLAIM_NOT_FOUND_MSG = "must be one of the names in pod.spec.resourceClaims"
HOSTNAME_OVERRIDE_MAX = 64
FQDN_OVERRIDE_MSG = "may not be specified when setHostnameAsFQDN is true"
HOST_NETWORK_OVERRIDE_MSG = "may not be specified when hostNetwork is true"
FILE_KEY_REF_EMPTY_DIR_MSG = "referenced volume must be of type emptyDir"
NEGATIVE = "must be greater than or equal to 0"  # apimachinery IsNegativeErrorMsg
GO_POINTER = "0xc000000000"  # a set pointer inside %#v is a heap address; kapi shows this stand-in

# pkg/apis/core/helper: standardResources (IsStandardResourceName) and standardContainerResources.
_STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"))
_STANDARD_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))
_HUGEPAGES = "hugepages-"
_REQUESTS_HUGEPAGES = "requests.hugepages-"
_QOS_COMPUTE = ("cpu", "memory")
_CONTAINER_SECTIONS = ("initContainers", "containers", "ephemeralContainers")  # podshelper.VisitContainersWithPath


def _spec(spec: Any) -> Obj:
    return _dict(spec)


def _each(path: str, value: str, messages: list[str]) -> list[Cause]:
    return [invalid(path, value, m) for m in messages]


# ------------------------------------------------------------ resource claims (DynamicResourceAllocation, GA)

def pod_claim_names(spec: Any) -> set[str]:
    """gatherPodResourceClaimNames: every non-empty ``spec.resourceClaims[*].name`` (valid or not)."""
    names: set[str] = set()
    for claim in _list(_spec(spec).get("resourceClaims")):
        name = _dict(claim).get("name")
        if isinstance(name, str) and name:
            names.add(name)
    return names


def _go_claim(claim: Obj) -> str:
    """core.PodResourceClaim as ``%#v`` prints it (a set pointer shows kapi's stand-in address)."""
    def pointer(key: str) -> str:
        return "(*string)(nil)" if claim.get(key) is None else f"(*string)({GO_POINTER})"
    return (f"core.PodResourceClaim{{Name:{go_quote(_str(claim.get('name')))}, "
            f"ResourceClaimName:{pointer('resourceClaimName')}, "
            f"ResourceClaimTemplateName:{pointer('resourceClaimTemplateName')}}}")


def validate_pod_resource_claims(spec: Any, path: str, *, pod_annotations: Any = None) -> list[Cause]:
    """validatePodResourceClaims / validatePodResourceClaim of ``<path>.resourceClaims``.

    ``spec``: the PodSpec JSON; ``pod_annotations``: the Pod's own ``metadata.annotations`` (None for templates,
    kube's nil podMeta). ValidatePodSpec calls this right after the volumes, before the containers.

    Per claim: a mirror (static) Pod gets only ``Forbidden: static pods do not support resource claims`` on an
    empty field path; else ``name`` Required, or ``Duplicate value`` of an earlier name, or a DNS-1123 label;
    both sources set: ``<path>.resourceClaims[<i>]: Invalid value: core.PodResourceClaim{...}: at most one of
    ...`` (the pointers in that ``%#v`` are heap addresses in kube; kapi prints ``0xc000000000``); neither:
    ``must specify one of: `resourceClaimName`, `resourceClaimTemplateName``` (nil pointers, exact); each set
    name a DNS-1123 subdomain (``.resourceClaimName`` / ``.resourceClaimTemplateName``). [] when valid.
    """
    out: list[Cause] = []
    mirror = isinstance(pod_annotations, dict) and MIRROR_POD_ANNOTATION in pod_annotations
    seen: set[str] = set()
    for i, claim in enumerate(_list(_spec(spec).get("resourceClaims"))):
        if mirror:
            out.append(forbidden("", STATIC_POD_CLAIMS_MSG))
            continue
        claim = _dict(claim)
        cpath = f"{path}.resourceClaims[{i}]"
        name = _str(claim.get("name"))
        if not name:
            out.append(required(f"{cpath}.name"))
        elif name in seen:
            out.append(duplicate(f"{cpath}.name", name))
        else:
            out.extend(_each(f"{cpath}.name", name, is_dns1123_label(name)))
            seen.add(name)
        claim_name, template_name = claim.get("resourceClaimName"), claim.get("resourceClaimTemplateName")
        if claim_name is not None and template_name is not None:
            out.append(Cause("FieldValueInvalid", f"Invalid value: {_go_claim(claim)}: {CLAIM_AT_MOST_ONE_MSG}", cpath))
        if claim_name is None and template_name is None:
            out.append(Cause("FieldValueInvalid", f"Invalid value: {_go_claim(claim)}: {CLAIM_ONE_OF_MSG}", cpath))
        for key, value in (("resourceClaimName", claim_name), ("resourceClaimTemplateName", template_name)):
            if isinstance(value, str):
                out.extend(_each(f"{cpath}.{key}", value, is_dns1123_subdomain(value)))
    return out


def validate_resource_claim_names(resources: Any, spec: Any, path: str) -> list[Cause]:
    """validateResourceClaimNames of one container's ``resources.claims`` (``path`` is that container's
    ``resources`` path, e.g. ``spec.containers[0].resources``; ``spec`` the PodSpec for its claim names).

    kube runs it at the end of ValidateContainerResourceRequirements, i.e. inside validateContainerCommon right
    after the container's resource names and quantities (before resizePolicy and securityContext), for regular,
    init and ephemeral containers alike.

    Per entry ``<path>.claims[<i>]``: an empty name is ``Required value``; a name already listed is
    ``Duplicate value: "<name>"``; a ``request`` must be a DNS-1123 label (``.request``) and ``<name>/<request>``
    listed twice is ``Duplicate value: "<name>/<request>"``; a bare name after one of its requests is a duplicate
    of the name; a name not in ``spec.resourceClaims`` is ``Not found: "<name>": must be one of the names in
    pod.spec.resourceClaims: <sorted names>`` (`` which is empty`` when there are none).
    """
    out: list[Cause] = []
    known = pod_claim_names(spec)
    keys: set[str] = set()
    for i, claim in enumerate(_list(_dict(resources).get("claims"))):
        claim = _dict(claim)
        cpath = f"{path}.claims[{i}]"
        name = _str(claim.get("name"))
        if not name:
            out.append(required(cpath))
            continue
        if name in keys:
            out.append(duplicate(cpath, name))
        else:
            request = _str(claim.get("request"))
            key = name
            if request:
                out.extend(_each(f"{cpath}.request", request, is_dns1123_label(request)))
                key = f"{name}/{request}"
            if key in keys:
                out.append(duplicate(cpath, key))
            elif not request:
                out.extend(duplicate(cpath, name) for k in keys if "/" in k and k.split("/", 1)[0] == name)
            keys.add(key)
        if name not in known:
            detail = CLAIM_NOT_FOUND_MSG + (": " + ", ".join(sorted(known)) if known else " which is empty")
            out.append(Cause("FieldValueNotFound", f"Not found: {go_value(name)}: {detail}", cpath))
    return out


# ------------------------------------------------------------ hostNetwork, nodeSelector, schedulingGates

def validate_pod_host_network_deps(spec: Any, path: str, *, resource_is_pod: bool = False) -> list[Cause]:
    """validatePodHostNetworkDeps: with ``hostNetwork: true`` each regular container port's ``hostPort`` must
    equal its ``containerPort`` (``<path>.containers[<i>].ports[<j>].hostPort: Invalid value: <hostPort>: must
    match `containerPort` when `hostNetwork` is true``); outside a Pod (``resource_is_pod`` False, a template)
    an unset hostPort (0) passes. Init containers are not checked. ValidatePodSpec calls it after the pod-level
    resources, before restartPolicy. [] otherwise."""
    spec = _spec(spec)
    out: list[Cause] = []
    if spec.get("hostNetwork") is not True:
        return out
    for i, container in enumerate(_list(spec.get("containers"))):
        for j, port in enumerate(_list(_dict(container).get("ports"))):
            port = _dict(port)
            host, cport = _int(port.get("hostPort")) or 0, _int(port.get("containerPort")) or 0
            if (resource_is_pod or host != 0) and host != cport:
                out.append(invalid(f"{path}.containers[{i}].ports[{j}].hostPort", host, HOST_NETWORK_PORT_MSG))
    return out


def validate_node_selector(spec: Any, path: str) -> list[Cause]:
    """unversionedvalidation.ValidateLabels of ``<path>.nodeSelector`` (keys qualified names, values label
    values; every cause on ``<path>.nodeSelector``). ValidatePodSpec: after dnsPolicy, before securityContext."""
    return validate_labels(_spec(spec).get("nodeSelector"), f"{path}.nodeSelector")


def validate_scheduling_gates(spec: Any, path: str) -> list[Cause]:
    """validateSchedulingGates: each ``<path>.schedulingGates[<i>]`` (the entry, not ``.name``) gets
    ``Invalid value: "<name>": <IsQualifiedName message>`` per message, then ``Duplicate value: "<name>"`` when
    an earlier gate had the name. ValidatePodSpec: after readinessGates, before topologySpreadConstraints."""
    out: list[Cause] = []
    seen: set[str] = set()
    for i, gate in enumerate(_list(_spec(spec).get("schedulingGates"))):
        name = _str(_dict(gate).get("name"))
        gpath = f"{path}.schedulingGates[{i}]"
        out.extend(_each(gpath, name, is_qualified_name(name)))
        if name in seen:
            out.append(duplicate(gpath, name))
        seen.add(name)
    return out


# ------------------------------------------------------------ hostnameOverride (validatePodHostName)

def validate_hostname_override(spec: Any, path: str) -> list[Cause]:
    """validatePodHostName of ``<path>.hostnameOverride`` (HostnameOverride: beta, on by default since 1.35).

    When set (even to ""): ``Forbidden: may not be specified when setHostnameAsFQDN is true``, ``Forbidden: may
    not be specified when hostNetwork is true``, ``Too long: may not be more than 64 bytes``, then one
    ``Invalid value`` per DNS-1123 subdomain message. ValidatePodSpec: right after hostUsers, before
    serviceAccountName. [] when absent or valid."""
    spec = _spec(spec)
    override = spec.get("hostnameOverride")
    if not isinstance(override, str):
        return []
    opath = f"{path}.hostnameOverride"
    out: list[Cause] = []
    if spec.get("setHostnameAsFQDN") is True:
        out.append(forbidden(opath, FQDN_OVERRIDE_MSG))
    if spec.get("hostNetwork") is True:
        out.append(forbidden(opath, HOST_NETWORK_OVERRIDE_MSG))
    if len(override.encode()) > HOSTNAME_OVERRIDE_MAX:
        out.append(too_long(opath, HOSTNAME_OVERRIDE_MAX))
    out.extend(_each(opath, override, is_dns1123_subdomain(override)))
    return out


# ------------------------------------------------------------ names and numbers

def _subdomain_if_set(spec: Obj, key: str, path: str) -> list[Cause]:
    value = spec.get(key)
    if isinstance(value, str) and value:
        return _each(f"{path}.{key}", value, is_dns1123_subdomain(value))
    return []


def validate_service_account_name(spec: Any, path: str) -> list[Cause]:
    """ValidateServiceAccountName (NameIsDNSSubdomain) of a non-empty ``serviceAccountName``: one ``Invalid
    value`` per message at ``<path>.serviceAccountName``."""
    return _subdomain_if_set(_spec(spec), "serviceAccountName", path)


def validate_node_name(spec: Any, path: str) -> list[Cause]:
    """ValidateNodeName (NameIsDNSSubdomain) of a non-empty ``nodeName`` at ``<path>.nodeName``."""
    return _subdomain_if_set(_spec(spec), "nodeName", path)


def validate_active_deadline_seconds(spec: Any, path: str) -> list[Cause]:
    """A set ``activeDeadlineSeconds`` outside 1..2147483647: ``<path>.activeDeadlineSeconds: Invalid value:
    <n>: must be between 1 and 2147483647, inclusive``."""
    value = _int(_spec(spec).get("activeDeadlineSeconds"))
    if value is not None and not 1 <= value <= MAX_INT32:
        return [invalid(f"{path}.activeDeadlineSeconds", value, ACTIVE_DEADLINE_MSG)]
    return []


def _label_if_set(spec: Obj, key: str, path: str) -> list[Cause]:
    value = spec.get(key)
    if isinstance(value, str) and value:
        return _each(f"{path}.{key}", value, is_dns1123_label(value))
    return []


def validate_hostname(spec: Any, path: str) -> list[Cause]:
    """ValidateDNS1123Label of a non-empty ``hostname`` at ``<path>.hostname``."""
    return _label_if_set(_spec(spec), "hostname", path)


def validate_subdomain(spec: Any, path: str) -> list[Cause]:
    """ValidateDNS1123Label of a non-empty ``subdomain`` at ``<path>.subdomain``."""
    return _label_if_set(_spec(spec), "subdomain", path)


def validate_pod_names(spec: Any, path: str) -> list[Cause]:
    """ValidatePodSpec's block after validateHostUsers / validatePodHostName and before the tolerations, in
    kube's order: serviceAccountName, nodeName, activeDeadlineSeconds, hostname, subdomain."""
    return [*validate_service_account_name(spec, path), *validate_node_name(spec, path),
            *validate_active_deadline_seconds(spec, path), *validate_hostname(spec, path),
            *validate_subdomain(spec, path)]


def validate_priority_class_name(spec: Any, path: str) -> list[Cause]:
    """ValidatePriorityClassName (NameIsDNSSubdomain) of a non-empty ``priorityClassName``."""
    return _subdomain_if_set(_spec(spec), "priorityClassName", path)


def validate_runtime_class_name(spec: Any, path: str) -> list[Cause]:
    """ValidateRuntimeClassName of a set ``runtimeClassName`` (a pointer in kube: ``""`` is validated too)."""
    value = _spec(spec).get("runtimeClassName")
    if isinstance(value, str):
        return _each(f"{path}.runtimeClassName", value, is_dns1123_subdomain(value))
    return []


def validate_preemption_policy(spec: Any, path: str) -> list[Cause]:
    """ValidatePreemptionPolicy of a set ``preemptionPolicy``: ``""`` is ``Required value``; another value
    than PreemptLowerPriority / Never ``Unsupported value: "<v>": supported values: "PreemptLowerPriority",
    "Never"``."""
    value = _spec(spec).get("preemptionPolicy")
    if not isinstance(value, str):
        return []
    ppath = f"{path}.preemptionPolicy"
    if value == "":
        return [required(ppath)]
    if value not in PREEMPTION_POLICIES:
        return [not_supported(ppath, value, PREEMPTION_POLICIES)]
    return []


# ------------------------------------------------------------ overhead (validateOverhead)

def _is_native(name: str) -> bool:
    """helper.IsNativeResource: no domain, or a ``kubernetes.io/`` one."""
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    """helper.IsExtendedResourceName: not native, not ``requests.``-prefixed, and ``requests.<name>`` a
    qualified name."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def _container_resource_name(name: str, path: str) -> list[Cause]:
    """validateContainerResourceName: validateResourceName (qualified name; a bare name must be a standard
    resource), then a bare name a container resource, a domain-qualified non-native one an extended resource."""
    msgs = is_qualified_name(name)
    out = _each(path, name, msgs)
    if not msgs and "/" not in name and name not in _STANDARD_RESOURCES \
            and not name.startswith((_HUGEPAGES, _REQUESTS_HUGEPAGES)):
        out.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith(_HUGEPAGES):
            out.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        out.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return out


def _shown(raw: Any, value: Fraction) -> str:
    """The Quantity as ``String()`` prints it."""
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
        with contextlib.suppress(ValueError):
            return quantity.canonical(raw)
    return quantity.format(value)


def _hugepages_divisible(name: str, value: Fraction) -> bool:
    """helper.IsHugePageResourceValueDivisible: the page size (the name past ``hugepages-``) a positive whole
    number, and the quantity's Value() (rounded up) a multiple of it."""
    try:
        page = quantity.parse(name[len(_HUGEPAGES):])
    except ValueError:
        return False
    if page <= 0 or page.denominator != 1:
        return False
    return math.ceil(value) % int(page) == 0


def validate_overhead(spec: Any, path: str, *, allow_indivisible_hugepages: bool = False) -> list[Cause]:
    """validateOverhead: ValidateContainerResourceRequirements of ``{limits: overhead}`` at ``<path>.overhead``.

    Per resource ``<path>.overhead[<name>]``: the container resource-name rules (``must be a standard resource
    type or fully qualified``, ``must be a standard resource for containers``, ``doesn't follow extended resource
    name standard``), ``Invalid value: "<q>": must be greater than or equal to 0``, a hugepages size a multiple
    of its page (``Invalid value: "<q>": <q> is not positive integer multiple of <name>``); then hugepages
    without cpu or memory: ``<path>.overhead: Forbidden: HugePages require cpu or memory``. Quantities that do
    not parse are the schema's. ValidatePodSpec: after preemptionPolicy, before ``os``.
    ``allow_indivisible_hugepages`` (AllowIndivisibleHugePagesValues, an update of a spec that had such a
    value: :func:`uses_indivisible_hugepages`) skips the multiple check.
    """
    overhead = _spec(spec).get("overhead")
    if not isinstance(overhead, dict):
        return []
    opath = f"{path}.overhead"
    out: list[Cause] = []
    hugepages = cpu_or_memory = False
    for name, raw in overhead.items():
        name = str(name)
        rpath = f"{opath}[{name}]"
        out.extend(_container_resource_name(name, rpath))
        try:
            value = quantity.parse(raw)
        except ValueError:
            continue
        shown = _shown(raw, value)
        if value < 0:
            out.append(invalid(rpath, shown, NEGATIVE))
        if name.startswith(_HUGEPAGES):
            hugepages = True
            if not allow_indivisible_hugepages and not _hugepages_divisible(name, value):
                out.append(invalid(rpath, shown, f"{shown} is not positive integer multiple of {name}"))
        if name in _QOS_COMPUTE:
            cpu_or_memory = True
    if hugepages and not cpu_or_memory:
        out.append(forbidden(opath, "HugePages require cpu or memory"))
    return out


def validate_pod_class_fields(spec: Any, path: str, *, allow_indivisible_hugepages: bool = False) -> list[Cause]:
    """ValidatePodSpec's block after hostAliases and before ``os``, in kube's order: priorityClassName,
    runtimeClassName, preemptionPolicy, overhead (``allow_indivisible_hugepages`` as :func:`validate_overhead`)."""
    return [*validate_priority_class_name(spec, path), *validate_runtime_class_name(spec, path),
            *validate_preemption_policy(spec, path),
            *validate_overhead(spec, path, allow_indivisible_hugepages=allow_indivisible_hugepages)]


def uses_indivisible_hugepages(spec: Any) -> bool:
    """usesIndivisibleHugePagesValues (``pkg/api/pod/util.go``): a container's, init container's or ephemeral
    container's ``hugepages-*`` request or limit, or a ``hugepages-*`` overhead, that is not a positive whole
    multiple of its page size. On update the stored spec's answer is PodValidationOptions'
    AllowIndivisibleHugePagesValues."""
    spec = _spec(spec)
    lists = [_dict(_dict(c).get("resources")).get(which) for key in ("containers", "initContainers",
                                                                       "ephemeralContainers")
             for c in _list(spec.get(key)) for which in ("requests", "limits")]
    lists.append(spec.get("overhead"))
    for resources in lists:
        for name, raw in _dict(resources).items():
            if not str(name).startswith(_HUGEPAGES):
                continue
            try:
                value = quantity.parse(raw)
            except ValueError:
                continue
            if not _hugepages_divisible(str(name), value):
                return True
    return False


# ------------------------------------------------------------ os (validateOS)

def validate_os(spec: Any, path: str) -> list[Cause]:
    """validateOS of a set ``os``: an empty ``name`` is ``<path>.os.name: Required value``; another than linux /
    windows ``<path>.os: Unsupported value: "<name>": supported values: "linux", "windows"`` (on ``os``, not
    ``os.name``). ValidatePodSpec runs validateLinux / validateWindows only when this is [] (kapi's
    :func:`kapi.kinds.podsecurity.validate_os_security` already does nothing for another name)."""
    os_ = _spec(spec).get("os")
    if not isinstance(os_, dict):
        return []
    name = _str(os_.get("name"))
    if not name:
        return [required(f"{path}.os.name")]
    if name not in VALID_OS:
        return [not_supported(f"{path}.os", name, VALID_OS)]
    return []


# ------------------------------------------------------------ fileKeyRef volumes (validateFileKeyRefVolumes)

def _containers(spec: Obj, path: str) -> Iterator[tuple[Obj, str]]:
    for section in _CONTAINER_SECTIONS:
        for i, container in enumerate(_list(spec.get(section))):
            if isinstance(container, dict):
                yield container, f"{path}.{section}[{i}]"


def validate_file_key_ref_volumes(spec: Any, path: str) -> list[Cause]:
    """validateFileKeyRefVolumes (EnvFiles): every env var of every container (init, regular, ephemeral, in
    that order) with ``valueFrom.fileKeyRef`` must name a Pod volume (``<c>.env[<j>].valueFrom.fileKeyRef.
    volumeName: Not found: "<name>"``) that is an emptyDir (``Invalid value: "<name>": referenced volume must be
    of type emptyDir``). ValidatePodSpec's very last check (after the OS rules and schedulingGroup)."""
    spec = _spec(spec)
    sources: dict[str, Obj] = {}
    for volume in _list(spec.get("volumes")):
        volume = _dict(volume)
        sources[_str(volume.get("name"))] = volume
    out: list[Cause] = []
    for container, cpath in _containers(spec, path):
        for j, env in enumerate(_list(container.get("env"))):
            ref = _dict(_dict(env).get("valueFrom")).get("fileKeyRef")
            if not isinstance(ref, dict):
                continue
            name = _str(ref.get("volumeName"))
            vpath = f"{cpath}.env[{j}].valueFrom.fileKeyRef.volumeName"
            if name not in sources:
                out.append(not_found(vpath, name))
            elif sources[name].get("emptyDir") is None:
                out.append(invalid(vpath, name, FILE_KEY_REF_EMPTY_DIR_MSG))
    return out
