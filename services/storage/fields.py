"""Selectable fields per resource: what a field selector may name and each object's values.

Which labels a selector may name is the kind's field label conversion
(``Scheme.AddFieldLabelConversionFunc`` in kube's ``pkg/apis/<group>/v1/conversion.go``):
:data:`CONVERSIONS` transcribes those of the kinds that register one (pods,
nodes, namespaces, services, secrets, events, replication controllers, jobs,
CSRs, resource slices, volume attachments), each with its own refusal text;
every other built-in kind gets ``runtime.DefaultMetaV1FieldSelectorConversion``
(metadata.name, metadata.namespace; ``"x" is not a known field selector: ...``)
and a custom resource the apiextensions converter (metadata.name,
metadata.namespace and its CRD's ``selectableFields``; ``field label not
supported: x``). The values are the strategy's ``selectable_fields`` in
:mod:`kapi.kinds` (kube's ``ToSelectableFields`` / ``GetAttrs``) plus the
metadata ones; a label accepted but not in the set (a Pod's status.podIPs) is
"", as ``fields.Set.Get`` answers. Values are strings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from kapi import crd, kinds
from kapi.resources import REGISTRY
from kapi.selectors import DEFAULT_FIELD_LABELS, FieldLabels

_META = frozenset({"metadata.name", "metadata.namespace"})
_NAME = frozenset({"metadata.name"})

#: (group, kind) -> the kind's v1 field label conversion, as kube's conversion.go files register them
CONVERSIONS: Mapping[tuple[str, str], FieldLabels] = {
    ("", "Pod"): FieldLabels(_META | {
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork",
        "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"},
        aliases={"spec.host": "spec.nodeName"}),  # old v1 clients' spec.host
    ("", "Node"): FieldLabels(_NAME | {"spec.unschedulable"}),
    ("", "ReplicationController"): FieldLabels(_META | {"status.replicas"}),
    ("", "Event"): FieldLabels(_META | {
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
        "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
        "reportingComponent", "source", "type"}),
    ("", "Namespace"): FieldLabels(_NAME | {"status.phase"}),
    ("", "Secret"): FieldLabels(_META | {"type"}),
    ("", "Service"): FieldLabels(_META | {"spec.clusterIP", "spec.type"}),
    ("batch", "Job"): FieldLabels(_META | {"status.successful"}, refusal="field label {quoted} not supported for Job"),
    ("certificates.k8s.io", "CertificateSigningRequest"): FieldLabels(_NAME | {"spec.signerName"}),
    ("resource.k8s.io", "ResourceSlice"): FieldLabels(
        _NAME | {"spec.nodeName", "spec.driver"},
        refusal="field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: {label}"),
    ("storage.k8s.io", "VolumeAttachment"): FieldLabels(
        _NAME | {"spec.nodeName", "spec.attacher", "spec.persistentVolumeName"}),
}


@cache
def _kind(group: str, resource: str) -> str | None:
    """The kind of a built-in resource (None for a resource kapi does not serve built in: a custom one)."""
    for row in REGISTRY.static:
        if (row.group, row.resource) == (group, resource):
            return row.kind
    return None


def _getters(group: str, resource: str) -> Mapping[str, Callable[[Any], str]]:
    """The selectable fields of a built-in resource's kind ({} for a resource kapi does not serve built in)."""
    kind = _kind(group, resource)
    return kinds.strategy_for(group, kind).selectable_fields if kind is not None else {}


def supported_fields(group: str, resource: str, custom: tuple[str, ...] = ()) -> FieldLabels:
    """The field label conversion of ``group``/``resource`` (a :class:`FieldLabels` for ``parse_field_selector``).

    A built-in kind's from :data:`CONVERSIONS`, else DefaultMetaV1FieldSelectorConversion; a custom
    resource's (``custom``: its CRD's selectableFields) is crConverter.ConvertFieldLabel's.
    """
    kind = _kind(group, resource)
    if kind is None:
        return FieldLabels(_META | frozenset(custom))
    return CONVERSIONS.get((group, kind), DEFAULT_FIELD_LABELS)


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
    for name, get in _getters(group, resource).items():
        fields[name] = get(obj)
    for path in custom:
        fields[path] = _custom_value(obj, path)
    return fields
