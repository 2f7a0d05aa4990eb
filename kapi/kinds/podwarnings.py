"""GetWarningsForPod / GetWarningsForPodTemplate: the create warnings kube gives for a pod spec.

kube-apiserver's Pod strategy and every workload's WarningsOnCreate (Deployment, ReplicaSet,
StatefulSet, DaemonSet, Job, CronJob, ReplicationController, PodTemplate) add the warnings of
``pkg/api/pod/warnings.go`` (``warningsForPodSpecAndMeta``) after the name warning; clients print them
as ``Warning: <text>`` (kubectl) from the ``Warning: 299 - "<text>"`` headers. :func:`pod_spec_warnings`
gives them in kube's order for a defaulted spec and its metadata; a template's paths start with its
field path (``spec.template.``), a Pod's with ``spec.`` and ``metadata.``.

Covered, each with kube's text: deprecated node labels (nodeSelector keys, node affinity match expression
keys, topology spread keys), a null labelSelector in topology spread constraints and pod (anti-)affinity
terms, deprecated annotations, deprecated volume plugins, duplicate hostAliases IPs and imagePullSecrets
names, empty imagePullSecrets names, fractional byte quantities (overhead, container memory and
ephemeral-storage), seccomp and (templates only) AppArmor annotations without their fields, env entries
hiding an earlier one, container ports (hostIP without hostPort, duplicate, overlapping, ambiguous) and a
negative terminationGracePeriodSeconds. Not covered: the projected volumes' overlapping paths and an
ephemeral volume's claim spec warnings (docs/kube-parity.md).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kapi import quantity
from kapi.kinds.apparmor import APPARMOR_CONTAINER_PREFIX
from kapi.objectmeta import go_quote
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

Obj = dict[str, Any]

# pkg/api/node/util.go deprecatedNodeLabels
DEPRECATED_NODE_LABELS = {
    "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
    "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
    "failure-domain.beta.kubernetes.io/region": 'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
    "failure-domain.beta.kubernetes.io/zone": 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
    "beta.kubernetes.io/instance-type": 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
    "app.kubernetes.io/created-by": "deprecated since v1.9",
    "scheduler.alpha.kubernetes.io/preferAvoidPods": "deprecated since v1.22; use Taints and Tolerations instead",
    "node-role.kubernetes.io/master": 'use "node-role.kubernetes.io/control-plane" instead',
}

DEPRECATED_ANNOTATIONS = (
    ("scheduler.alpha.kubernetes.io/critical-pod",
     'non-functional in v1.16+; use the "priorityClassName" field instead'),
    ("security.alpha.kubernetes.io/sysctls", 'non-functional in v1.11+; use the "sysctls" field instead'),
    ("security.alpha.kubernetes.io/unsafe-sysctls", 'non-functional in v1.11+; use the "sysctls" field instead'),
)

# (volume source, message), in the order kube checks them
DEPRECATED_VOLUMES = (
    ("photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"),
    ("gitRepo", "deprecated in v1.11"),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
    ("storageOS", "deprecated in v1.22, non-functional in v1.25+"),
    ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
)

SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
NULL_SELECTOR = "a null labelSelector results in matching no pod"


def fractional_bytes(path: str, raw: Any) -> list[str]:
    """``<path>: fractional byte value "<q>" is invalid, must be an integer`` when the byte quantity ``raw`` (a
    ResourceList value, defaulted: SetDefaults_ResourceList rounds it up to milli-units first, as
    :func:`kapi.quantity.canonical` with ``milli`` does) has ``MilliValue() % 1000 != 0``; [] for whole bytes,
    an absent or an unparseable value (the schema reports that)."""
    if raw is None:
        return []
    try:
        shown = quantity.canonical(raw, milli=True)
        value: Fraction = quantity.parse(shown)
    except (ValueError, ZeroDivisionError):
        return []
    if value.denominator == 1:
        return []
    return [f"{path}: fractional byte value {go_quote(shown)} is invalid, must be an integer"]


def _fractional_bytes(path: str, resources: Any) -> list[str]:
    """:func:`fractional_bytes` of ``<path>[memory]`` then ``<path>[ephemeral-storage]``."""
    out = []
    for name in ("memory", "ephemeral-storage"):
        out.extend(fractional_bytes(f"{path}[{name}]", _dict(resources).get(name)))
    return out


def _node_term(term: Any, path: str) -> list[str]:
    """GetWarningsForNodeSelectorTerm: match expressions on deprecated node labels."""
    out = []
    for i, expr in enumerate(_list(_dict(term).get("matchExpressions"))):
        key = _dict(expr).get("key")
        if isinstance(key, str) and key in DEPRECATED_NODE_LABELS:
            out.append(f"{path}.matchExpressions[{i}].key: {key} is {DEPRECATED_NODE_LABELS[key]}")
    return out


def _affinity_terms(terms: Any, path: str, weighted: bool) -> list[str]:
    out = []
    for i, term in enumerate(_list(terms)):
        term = _dict(_dict(term).get("podAffinityTerm")) if weighted else _dict(term)
        if term.get("labelSelector") is None:
            inner = ".podAffinityTerm" if weighted else ""
            out.append(f"{path}[{i}]{inner}.labelSelector: {NULL_SELECTOR}")
    return out


def _containers(spec: Obj, path: str) -> list[tuple[Obj, str]]:
    """pods.VisitContainersWithPath: init containers, containers, then ephemeral containers, with their paths."""
    return [(_dict(c), f"{path}{key}[{i}]") for key in ("initContainers", "containers", "ephemeralContainers")
            for i, c in enumerate(_list(spec.get(key)))]


def _port_text(port: Obj) -> str:
    """``%+v`` of the internal core.ContainerPort struct."""
    return (f"{{Name:{port.get('name', '')} HostPort:{port.get('hostPort', 0)} "
            f"ContainerPort:{port.get('containerPort', 0)} Protocol:{port.get('protocol', '')} "
            f"HostIP:{port.get('hostIP', '')}}}")


def _port_warnings(spec: Obj, path: str) -> list[str]:
    out: list[str] = []
    seen: dict[str, list[tuple[str, Obj]]] = {}
    for container, cpath in _containers(spec, path):
        for i, port in enumerate(_list(container.get("ports"))):
            port = _dict(port)
            here = f"{cpath}.ports[{i}]"
            host_ip, host_port = port.get("hostIP", ""), port.get("hostPort", 0)
            if host_ip and not host_port:
                out.append(f"{here}: hostIP set without hostPort: {_port_text(port)}")
            key = f"{port.get('containerPort', 0)}/{port.get('protocol', '')}"
            for other_path, other in seen.get(key, []):
                other_ip, other_port = other.get("hostIP", ""), other.get("hostPort", 0)
                if host_ip == other_ip and host_port == other_port:
                    out.append(f"{here}: duplicate port definition with {other_path}")
                elif not host_port or not other_port:
                    out.append(f"{here}: overlapping port definition with {other_path}")
                elif host_port == other_port and (not host_ip) != (not other_ip):
                    out.append(f"{here}: dangerously ambiguous port definition with {other_path}")
            seen.setdefault(key, []).append((here, port))
    return out


def _env_warnings(container: Obj, path: str) -> list[str]:
    out = []
    names: set[str] = set()
    for i, item in enumerate(_list(container.get("env"))):
        item = _dict(item)
        name, value = str(item.get("name", "")), str(item.get("value", "") or "")
        if name not in names:
            names.add(name)
            continue
        ref = f"$({name})"
        if item.get("valueFrom") is not None or value == ref or ref not in value:
            out.append(f"{path}.env[{i}]: hides previous definition of {go_quote(name)}, which may be dropped when "
                       "using apply")
    return out


def pod_spec_warnings(spec: Any, meta: Any, prefix: str = "", template: bool = False) -> list[str]:
    """warningsForPodSpecAndMeta for a defaulted pod ``spec`` and its ``meta`` (ObjectMeta), kube's texts in
    kube's order. ``prefix`` is the template's field path with a trailing dot (``spec.template.``; "" for
    a Pod); ``template`` turns on the template-only AppArmor annotation warning (kube emits a Pod's through
    applyAppArmorVersionSkew). Returns [] for a spec with nothing to warn about."""
    spec, annotations = _dict(spec), _dict(_dict(meta).get("annotations"))
    sp, ann = f"{prefix}spec.", f"{prefix}metadata.annotations"
    out: list[str] = []
    for key in _dict(spec.get("nodeSelector")):
        if key in DEPRECATED_NODE_LABELS:
            out.append(f"{sp}nodeSelector[{key}]: {DEPRECATED_NODE_LABELS[key]}")
    affinity = _dict(spec.get("affinity"))
    node = affinity.get("nodeAffinity")
    if isinstance(node, dict):
        required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(required, dict):
            for i, term in enumerate(_list(required.get("nodeSelectorTerms"))):
                out.extend(_node_term(term, f"{sp}affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                                            f".nodeSelectorTerms[{i}]"))
        for i, term in enumerate(_list(node.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            out.extend(_node_term(_dict(term).get("preference"),
                                  f"{sp}affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                                  ".preference"))
    for i, constraint in enumerate(_list(spec.get("topologySpreadConstraints"))):
        constraint = _dict(constraint)
        topology = constraint.get("topologyKey")
        if isinstance(topology, str) and topology in DEPRECATED_NODE_LABELS:
            out.append(f"{sp}topologySpreadConstraints[{i}].topologyKey: {topology} is "
                       f"{DEPRECATED_NODE_LABELS[topology]}")
        if constraint.get("labelSelector") is None:
            out.append(f"{sp}topologySpreadConstraints[{i}].labelSelector: {NULL_SELECTOR}")
    for key, message in DEPRECATED_ANNOTATIONS:
        if key in annotations:
            out.append(f"{ann}[{key}]: {message}")
    for i, volume in enumerate(_list(spec.get("volumes"))):
        volume = _dict(volume)
        out.extend(f"{sp}volumes[{i}].{source}: {message}" for source, message in DEPRECATED_VOLUMES
                   if volume.get(source) is not None)
    aliases = _list(spec.get("hostAliases"))
    ips: set[str] = set()
    for i, alias in enumerate(aliases):
        ip = str(_dict(alias).get("ip", ""))
        if ip in ips and len(aliases) > 1:
            out.append(f"{sp}hostAliases[{i}].ip: duplicate ip {go_quote(ip)}")
        ips.add(ip)
    secrets = _list(spec.get("imagePullSecrets"))
    names: set[str] = set()
    for i, secret in enumerate(secrets):
        name = str(_dict(secret).get("name", "") or "")
        if name in names:
            out.append(f"{sp}imagePullSecrets[{i}].name: duplicate name {go_quote(name)}")
        names.add(name)
    out.extend(f"{sp}imagePullSecrets[{i}].name: invalid empty name \"\"" for i, secret in enumerate(secrets)
               if not _dict(secret).get("name"))
    out.extend(_fractional_bytes(f"{sp}overhead", spec.get("overhead")))
    security = _dict(spec.get("securityContext"))
    if security.get("seccompProfile") is None and SECCOMP_POD_ANNOTATION in annotations:
        out.append(f'{ann}[{SECCOMP_POD_ANNOTATION}]: non-functional in v1.27+; use the "seccompProfile" field instead')
    pod_apparmor = security.get("appArmorProfile") is not None
    for container, cpath in _containers(spec, sp):
        name = str(container.get("name", ""))
        context = _dict(container.get("securityContext"))
        if context.get("seccompProfile") is None and SECCOMP_CONTAINER_PREFIX + name in annotations:
            out.append(f'{ann}[{SECCOMP_CONTAINER_PREFIX}{name}]: non-functional in v1.27+; use the "seccompProfile" '
                       "field instead")
        has_apparmor = pod_apparmor or context.get("appArmorProfile") is not None
        if template and not has_apparmor and APPARMOR_CONTAINER_PREFIX + name in annotations:
            out.append(f'{ann}[{APPARMOR_CONTAINER_PREFIX}{name}]: deprecated since v1.30; use the "appArmorProfile" '
                       "field instead")
        resources = _dict(container.get("resources"))
        for which, resource in (("limits", "memory"), ("requests", "memory"), ("limits", "ephemeral-storage"),
                                ("requests", "ephemeral-storage")):
            raw = _dict(resources.get(which)).get(resource)
            if raw is not None:
                out.extend(_fractional_bytes(f"{cpath}.resources.{which}", {resource: raw}))
        out.extend(_env_warnings(container, cpath))
    out.extend(_port_warnings(spec, sp))
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
        out.append(f"{sp}terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be "
                   "treated as 1")
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind)
        if isinstance(terms, dict):
            base = f"{sp}affinity.{kind}"
            out.extend(_affinity_terms(terms.get("requiredDuringSchedulingIgnoredDuringExecution"),
                                       f"{base}.requiredDuringSchedulingIgnoredDuringExecution", weighted=False))
            out.extend(_affinity_terms(terms.get("preferredDuringSchedulingIgnoredDuringExecution"),
                                       f"{base}.preferredDuringSchedulingIgnoredDuringExecution", weighted=True))
    return out


def template_warnings_on_update(new: Obj, old: Obj, path: str) -> list[str]:
    """The workloads' WarningsOnUpdate: :func:`template_warnings` of ``new`` when its ``metadata.generation``
    moved on (a spec change), else none (a Pod's own updates never warn)."""
    if _dict(new.get("metadata")).get("generation") == _dict(old.get("metadata")).get("generation"):
        return []
    return template_warnings(new, path)


def template_warnings(obj: Obj, path: str) -> list[str]:
    """GetWarningsForPodTemplate of the pod template at dotted ``path`` in ``obj`` (``spec.template``,
    ``template``, ``spec.jobTemplate.spec.template``); [] when there is no template."""
    node: Any = obj
    for part in path.split("."):
        node = _dict(node).get(part)
    if not isinstance(node, dict):
        return []
    return pod_spec_warnings(node.get("spec"), node.get("metadata"), path + ".", template=True)
