"""Per-kind semantic validation of built-in objects, as kube-apiserver's ``pkg/apis/*/validation`` does it.

:func:`validate` returns :class:`kapi.errors.Cause` values for a 422
Invalid, with kube's field paths and messages (``spec.ports[0].port:
Invalid value: 70000: must be between 1 and 65535, inclusive``). It runs
after defaulting (:mod:`kapi.defaults`) and schema validation, so it may
assume kube's defaults are in place; values of the wrong JSON type are
skipped here (the schema reports them). Covered, from
``pkg/apis/core/validation/validation.go`` and
``pkg/apis/{apps,batch}/validation/validation.go``:

- ConfigMap/Secret: keys are config keys (``IsConfigMapKey``), a
  binaryData key may not repeat a data key, total data at most 1 MiB
  (``MaxSecretSize``).
- Service: type, ports (at least one unless headless or ExternalName;
  names unique and required when more than one; port, targetPort, nodePort
  1-65535; protocol TCP/UDP/SCTP).
- Pod specs (Pod, PodTemplate, ReplicationController, Deployment,
  ReplicaSet, StatefulSet, DaemonSet, Job, CronJob): at least one container,
  container names DNS-1123 labels unique across init and regular containers,
  image required, container/host ports, restartPolicy and dnsPolicy enums.
- Workloads: replicas >= 0, selector required, non-empty and matching the
  template labels, template restartPolicy Always (Job: OnFailure or Never).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Iterable
from typing import Any

from kapi.errors import Cause
from kapi.objectmeta import invalid, required
from kapi.selectors import SelectorError, label_selector_matches
from kapi.validation import is_dns1123_label, max_len_error, regex_error
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list

MAX_SECRET_SIZE = 1024 * 1024  # bytes, core.MaxSecretSize (also ConfigMap's limit)

CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
CONFIG_KEY_MAX = 253
_CONFIG_KEY = re.compile(CONFIG_KEY_FMT)

PORT_RANGE_MSG = "must be between 1 and 65535, inclusive"
PROTOCOLS = ("SCTP", "TCP", "UDP")
SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
SELECTOR_MISMATCH = "`selector` does not match template `labels`"

Obj = dict[str, Any]


# ------------------------------------------------------------ field errors

def not_supported(path: str, value: Any, supported: Iterable[str]) -> Cause:
    """field.NotSupported: ``Unsupported value: "x": supported values: "a", "b"``."""
    allowed = ", ".join(f'"{v}"' for v in supported)
    return Cause("FieldValueNotSupported", f"Unsupported value: {_go(value)}: supported values: {allowed}", path)


def duplicate(path: str, value: Any) -> Cause:
    """field.Duplicate: ``Duplicate value: "x"``."""
    return Cause("FieldValueDuplicate", f"Duplicate value: {_go(value)}", path)


def too_long_total(path: str, max_bytes: int) -> Cause:
    """field.TooLong for a total size: ``Too long: must have at most <n> bytes``."""
    return Cause("FieldValueTooLong", f"Too long: must have at most {max_bytes} bytes", path)


def _go(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _go_string_map(value: Any) -> str:
    """A map[string]string as Go's %#v prints it (keys sorted)."""
    if not isinstance(value, dict):
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(f"{_go(k)}:{_go(v)}" for k, v in sorted(value.items())) + "}"


# ------------------------------------------------------------ ConfigMap and Secret

def is_config_map_key(key: str) -> list[str]:
    """validation.IsConfigMapKey: messages for a key that is not a valid ConfigMap/Secret key; [] when valid."""
    out: list[str] = []
    if len(key) > CONFIG_KEY_MAX:
        out.append(max_len_error(CONFIG_KEY_MAX))
    if not _CONFIG_KEY.fullmatch(key):
        out.append(regex_error(CONFIG_KEY_MSG, CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if key == ".":
        out.append("must not be '.'")
    elif key == "..":
        out.append("must not be '..'")
    elif key.startswith(".."):
        out.append("must not start with '..'")
    return out


def _decoded_len(value: Any) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return len(binascii.a2b_base64(value))
    except (binascii.Error, ValueError):
        return 0


def _keys(data: Obj, path: str) -> list[Cause]:
    return [invalid(f"{path}[{key}]", key, msg) for key in data for msg in is_config_map_key(key)]


def validate_config_map(obj: Obj) -> list[Cause]:
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


def validate_secret(obj: Obj) -> list[Cause]:
    """ValidateSecret: data keys are config keys; decoded data (stringData folded in) at most 1 MiB."""
    data = _dict(obj.get("data"))
    out = _keys(data, "data")
    total = sum(_decoded_len(v) for v in data.values())
    total += sum(len(v.encode()) for v in _dict(obj.get("stringData")).values() if isinstance(v, str))
    if total > MAX_SECRET_SIZE:
        out.append(too_long_total("data", MAX_SECRET_SIZE))
    return out


# ------------------------------------------------------------ Service

def _port_num(path: str, value: Any) -> list[Cause]:
    port = _int(value)
    return [invalid(path, port, PORT_RANGE_MSG)] if port is not None and not 1 <= port <= 65535 else []


def validate_service(obj: Obj) -> list[Cause]:
    """ValidateService (the parts users hit): type, ports, port names and protocols."""
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    service_type = spec.get("type") or "ClusterIP"
    if isinstance(service_type, str) and service_type not in SERVICE_TYPES:
        out.append(not_supported("spec.type", service_type, SERVICE_TYPES))
    ports = _list(spec.get("ports"))
    headless = service_type == "ClusterIP" and spec.get("clusterIP") == "None"
    if not ports and not headless and service_type != "ExternalName":
        out.append(required("spec.ports"))
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
        out.extend(_port_num(f"{path}.port", port.get("port")))
        protocol = port.get("protocol")
        if isinstance(protocol, str) and protocol not in PROTOCOLS:
            out.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
        out.extend(_port_num(f"{path}.targetPort", port.get("targetPort")))
        if port.get("nodePort"):
            out.extend(_port_num(f"{path}.nodePort", port.get("nodePort")))
    return out


# ------------------------------------------------------------ Pod specs

def _containers(containers: list[Any], path: str, names: set[str], images_required: bool = True) -> list[Cause]:
    out: list[Cause] = []
    for i, container in enumerate(containers):
        container = _dict(container)
        cpath = f"{path}[{i}]"
        name = container.get("name")
        if not name:
            out.append(required(f"{cpath}.name"))
        elif isinstance(name, str):
            out.extend(invalid(f"{cpath}.name", name, msg) for msg in is_dns1123_label(name))
            if name in names:
                out.append(duplicate(f"{cpath}.name", name))
            names.add(name)
        if images_required and not container.get("image"):
            out.append(required(f"{cpath}.image"))
        for j, port in enumerate(_list(container.get("ports"))):
            port = _dict(port)
            ppath = f"{cpath}.ports[{j}]"
            if not port.get("containerPort"):
                out.append(required(f"{ppath}.containerPort"))
            else:
                out.extend(_port_num(f"{ppath}.containerPort", port.get("containerPort")))
            if port.get("hostPort"):
                out.extend(_port_num(f"{ppath}.hostPort", port.get("hostPort")))
            protocol = port.get("protocol")
            if isinstance(protocol, str) and protocol not in PROTOCOLS:
                out.append(not_supported(f"{ppath}.protocol", protocol, PROTOCOLS))
    return out


def validate_pod_spec(spec: Any, path: str) -> list[Cause]:
    """ValidatePodSpec (containers, names, images, ports, restartPolicy, dnsPolicy) with causes under ``path``."""
    if not isinstance(spec, dict):
        return []
    out: list[Cause] = []
    names: set[str] = set()
    out.extend(_containers(_list(spec.get("initContainers")), f"{path}.initContainers", names))
    containers = _list(spec.get("containers"))
    if not containers:
        out.append(required(f"{path}.containers"))
    out.extend(_containers(containers, f"{path}.containers", names))
    # Ephemeral containers are added through their subresource; their names share the namespace.
    out.extend(_containers(_list(spec.get("ephemeralContainers")), f"{path}.ephemeralContainers", names))
    # An empty policy is what kube's defaulting fills in (Always, ClusterFirst), not an error here.
    policy = spec.get("restartPolicy")
    if policy and isinstance(policy, str) and policy not in RESTART_POLICIES:
        out.append(not_supported(f"{path}.restartPolicy", policy, RESTART_POLICIES))
    dns = spec.get("dnsPolicy")
    if dns and isinstance(dns, str) and dns not in DNS_POLICIES:
        out.append(not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    return out


# ------------------------------------------------------------ workloads

def selector_matches(selector: Obj, labels: Obj) -> bool | None:
    """Whether a metav1.LabelSelector selects ``labels``; None when it cannot be evaluated (bad operator)."""
    try:
        return label_selector_matches(selector, labels)
    except SelectorError:
        return None


_EMPTY_SELECTOR = "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}"


def _workload(spec: Obj, what: str, restart_policies: tuple[str, ...] | None, selector_required: bool = True,
              replicas: bool = True, label_selector: bool = True) -> list[Cause]:
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
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            out.append(Cause("FieldValueInvalid", f"Invalid value: {_EMPTY_SELECTOR}: empty selector is invalid for "
                             f"{what}", "spec.selector"))
        else:
            labels = _dict(template.get("metadata")).get("labels")
            if selector_matches(selector, _dict(labels)) is False:
                out.append(Cause("FieldValueInvalid", f"Invalid value: {_go_string_map(labels)}: {SELECTOR_MISMATCH}",
                                 "spec.template.metadata.labels"))
    pod_spec = template.get("spec")
    out.extend(validate_pod_spec(pod_spec, "spec.template.spec"))
    policy = _dict(pod_spec).get("restartPolicy")
    if restart_policies and isinstance(pod_spec, dict) and policy and policy not in restart_policies:
        out.append(not_supported("spec.template.spec.restartPolicy", policy, restart_policies))
    return out


def _job_spec(spec: Any, prefix: str) -> list[Cause]:
    causes = _workload(_dict(spec), "job", ("OnFailure", "Never"), selector_required=False, replicas=False)
    return [Cause(c.type, c.message, prefix + c.field[len("spec"):]) for c in causes] if prefix != "spec" else causes


def validate(obj: Obj, group: str, kind: str) -> list[Cause]:
    """The semantic causes of one built-in object (``group``: "" for core); [] for kinds not covered.

    ``obj`` is the defaulted object about to be stored. Never raises for bad input.
    """
    if not isinstance(obj, dict):
        return []
    spec = _dict(obj.get("spec"))
    if group == "":
        if kind == "ConfigMap":
            return validate_config_map(obj)
        if kind == "Secret":
            return validate_secret(obj)
        if kind == "Service":
            return validate_service(obj)
        if kind == "Pod":
            return validate_pod_spec(obj.get("spec"), "spec")
        if kind == "PodTemplate":
            return validate_pod_spec(_dict(obj.get("template")).get("spec"), "template.spec")
        if kind == "ReplicationController":
            return _workload(spec, "replicationcontroller", ("Always",), label_selector=False)
    elif group == "apps":
        if kind in ("Deployment", "ReplicaSet"):
            return _workload(spec, "deployment", ("Always",))
        if kind == "StatefulSet":
            return _workload(spec, "statefulset", ("Always",))
        if kind == "DaemonSet":
            return _workload(spec, "daemonset", ("Always",), replicas=False)
    elif group == "batch":
        if kind == "Job":
            from kapi import jobs

            return _job_spec(spec, "spec") + jobs.validate(obj)
        if kind == "CronJob":
            return _job_spec(_dict(spec.get("jobTemplate")).get("spec"), "spec.jobTemplate.spec")
    elif group == "autoscaling" and kind == "HorizontalPodAutoscaler":
        from kapi import autoscaling

        return autoscaling.validate(obj)
    elif group == "certificates.k8s.io" and kind == "CertificateSigningRequest":
        from kapi import certificates

        return certificates.validate(obj)
    elif group in ("discovery.k8s.io", "node.k8s.io", "storage.k8s.io"):
        from kapi import morekinds

        return morekinds.validate(obj, group, kind)
    elif group == "apiregistration.k8s.io" and kind == "APIService":
        from kapi import apiregistration  # kube-aggregator's ValidateAPIService

        return apiregistration.validate(obj)
    return []
