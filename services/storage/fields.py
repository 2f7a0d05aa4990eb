"""Selectable fields per resource: what a field selector may name and each object's values.

Every resource supports ``metadata.name`` and ``metadata.namespace``
(``runtime.DefaultMetaV1FieldSelectorConversion``). A few core resources
support more, as kube-apiserver's per-type field label conversions and
``GetAttrs`` functions do (pods: spec.nodeName, status.phase ...; secrets:
type; events: involvedObject.*; namespaces: status.phase; nodes:
spec.unschedulable). Values are strings; an absent field is "".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kapi import crd

_META = frozenset({"metadata.name", "metadata.namespace"})


def _path(*parts: str) -> Callable[[Mapping[str, Any]], str]:
    def get(obj: Mapping[str, Any]) -> str:
        value: Any = obj
        for part in parts:
            if not isinstance(value, Mapping):
                return ""
            value = value.get(part)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _pod_ips(obj: Mapping[str, Any]) -> str:
    ips = (obj.get("status") or {}).get("podIPs") or []
    return ",".join(str(ip.get("ip", "")) for ip in ips if isinstance(ip, Mapping))


# (group, resource) -> extra field -> getter
_EXTRA: dict[tuple[str, str], dict[str, Callable[[Mapping[str, Any]], str]]] = {
    ("", "pods"): {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: "true" if (o.get("spec") or {}).get("hostNetwork") else "false",
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.podIPs": _pod_ips,
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    ("", "secrets"): {"type": _path("type")},
    ("", "namespaces"): {"status.phase": _path("status", "phase")},
    ("", "nodes"): {"spec.unschedulable": lambda o: "true" if (o.get("spec") or {}).get("unschedulable") else "false"},
    ("", "events"): {
        **{f"involvedObject.{f}": _path("involvedObject", f)
           for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
        "reason": _path("reason"),
        "reportingComponent": _path("reportingComponent"),
        "source": _path("source", "component"),
        "type": _path("type"),
    },
    ("", "replicationcontrollers"): {"status.replicas": _path("status", "replicas")},
    ("batch", "jobs"): {"status.successful": _path("status", "successful")},
    ("certificates.k8s.io", "certificatesigningrequests"): {"spec.signerName": _path("spec", "signerName")},
}


def supported_fields(group: str, resource: str, custom: tuple[str, ...] = ()) -> frozenset[str]:
    """Field labels a field selector on ``group``/``resource`` may use; ``custom``: a CRD's selectableFields."""
    return _META | frozenset(_EXTRA.get((group, resource), {})) | frozenset(custom)


def _custom_value(obj: Mapping[str, Any], path: str) -> str:
    """A CRD selectable field's value: the scalar at the JSON path as a string ("" when absent or not a scalar)."""
    found = crd.jsonpath(obj, "." + path)
    if not found or isinstance(found[0], (dict, list)) or found[0] is None:
        return ""
    value = found[0]
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def object_fields(group: str, resource: str, obj: Mapping[str, Any], custom: tuple[str, ...] = ()) -> dict[str, str]:
    """The selectable field values of ``obj`` (a decoded object of ``group``/``resource``).

    ``custom``: a custom resource's ``selectableFields`` JSON paths without the
    leading dot ("Custom resource field selectors" in the CRD docs).
    """
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": str(meta.get("name") or ""), "metadata.namespace": str(meta.get("namespace") or "")}
    for name, get in _EXTRA.get((group, resource), {}).items():
        fields[name] = get(obj)
    for path in custom:
        fields[path] = _custom_value(obj, path)
    return fields
