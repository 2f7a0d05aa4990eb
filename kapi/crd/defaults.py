"""Structural-schema defaulting of custom resources (apiextensions-apiserver ``pkg/apiserver/schema/defaulting``).

A CRD version's ``openAPIV3Schema`` may give ``default`` values; kube-apiserver
fills them into absent properties of a custom resource on every request body
(admission: services.admission.crd_schema) and also whenever it reads an
object from etcd, so objects stored before a default was added, or whose
defaulted part was dropped on the way in (``status`` on create with the
status subresource), read back defaulted (the gateway: services.gateway.crddefaults).
Source: "Extend the Kubernetes API with CustomResourceDefinitions" > "Defaulting".
This module is pure: decoded JSON values and schema dicts only.
"""

from __future__ import annotations

import copy
from typing import Any

Schema = dict[str, Any]


def default(value: Any, sch: Schema) -> None:
    """Fill ``default`` of absent properties in place, recursively (objects, arrays, additionalProperties).

    ``value`` is a decoded JSON value and ``sch`` its structural schema; defaults are deep-copied,
    so the schema is never aliased by the object.
    """
    if not isinstance(sch, dict):
        return
    if isinstance(value, dict):
        for key, sub in (sch.get("properties") or {}).items():
            if key not in value and isinstance(sub, dict) and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                default(value[key], sub)
        extra = sch.get("additionalProperties")
        if isinstance(extra, dict):
            for key, item in value.items():
                if key not in (sch.get("properties") or {}):
                    default(item, extra)
    elif isinstance(value, list) and isinstance(sch.get("items"), dict):
        for item in value:
            default(item, sch["items"])


def has_defaults(sch: Any) -> bool:
    """Whether :func:`default` can change anything: some ``default`` under properties, additionalProperties or items.

    ``default`` elsewhere (in allOf/anyOf/oneOf/not, which structural schemas forbid) does not count.
    """
    if not isinstance(sch, dict):
        return False
    props = sch.get("properties")
    if isinstance(props, dict) and any(isinstance(s, dict) and ("default" in s or has_defaults(s))
                                       for s in props.values()):
        return True
    return has_defaults(sch.get("additionalProperties")) or has_defaults(sch.get("items"))
