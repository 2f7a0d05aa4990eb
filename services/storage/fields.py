"""Selectable fields per resource: what a field selector may name and each object's values.

Every resource supports ``metadata.name`` and ``metadata.namespace``
(``runtime.DefaultMetaV1FieldSelectorConversion``). A built-in kind's own
field labels (pods: spec.nodeName, status.phase ...; secrets: type; events:
involvedObject.*; namespaces: status.phase; nodes: spec.unschedulable; ...)
are its strategy's ``selectable_fields`` in :mod:`kapi.kinds`, as kube's
per-type field label conversions and ``GetAttrs`` functions; a custom
resource's are its CRD's ``selectableFields``. Values are strings; an absent
field is "".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from kapi import crd, kinds
from kapi.resources import REGISTRY

_META = frozenset({"metadata.name", "metadata.namespace"})


@cache
def _getters(group: str, resource: str) -> Mapping[str, Callable[[Any], str]]:
    """The selectable fields of a built-in resource's kind ({} for a resource kapi does not serve built in)."""
    for row in REGISTRY.static:
        if (row.group, row.resource) == (group, resource):
            return kinds.strategy_for(row.group, row.kind).selectable_fields
    return {}


def supported_fields(group: str, resource: str, custom: tuple[str, ...] = ()) -> frozenset[str]:
    """Field labels a field selector on ``group``/``resource`` may use; ``custom``: a CRD's selectableFields."""
    return _META | frozenset(_getters(group, resource)) | frozenset(custom)


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
