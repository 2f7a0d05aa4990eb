"""Server-side printing: convert objects to a ``meta.k8s.io/v1`` Table.

kubectl asks for Tables and prints their rows; columns come from the
kind's printer (printers.py), led by Name and followed by Age, like
kube-apiserver's printers; kinds without one get Name and Created At. ``includeObject`` decides
what each row carries: ``None``, ``Metadata`` (default, a
PartialObjectMetadata) or ``Object``. Source: "API concepts: Receiving
resources as Tables".
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kapi.resources import Resource
from services.gateway import printers
from services.gateway.columns import age

_NAME_COLUMN = {"name": "Name", "type": "string", "format": "name", "priority": 0,
                "description": "Name must be unique within a namespace. More info: "
                               "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"}
_AGE_COLUMN = {"name": "Age", "type": "string", "format": "", "priority": 0,
               "description": "CreationTimestamp is a timestamp representing the server time when this object was "
                              "created."}


def column_definitions(resource: Resource) -> list[dict[str, Any]]:
    """Table columnDefinitions: Name, the kind's printer columns with Age at kube's place (or Name, Created At)."""
    cols = [dict(_NAME_COLUMN)]
    printer = printers.printer_for(resource.group, resource.resource)
    if printer is not None and not printer.with_name:
        cols = []
    if printer is None:
        cols.append({"name": "Created At", "type": "date", "format": "", "priority": 0,
                     "description": _AGE_COLUMN["description"]})
        return cols
    for c in printer.columns:
        cols.append({"name": c.name, "type": c.type, "format": c.format, "description": c.description or c.name,
                     "priority": c.priority})
    if printer.with_age:
        cols.insert(len(cols) - len(printer.columns) + printer.age_position(), dict(_AGE_COLUMN))
    return cols


def row(resource: Resource, obj: dict[str, Any], include_object: str, now: datetime | None = None,
        version: str = "v1") -> dict[str, Any]:
    """One Table row: cells plus the object per ``includeObject`` (None, Metadata, Object); a Metadata row's
    PartialObjectMetadata is in the Table's meta.k8s.io ``version``."""
    meta = obj.get("metadata") or {}
    cells: list[Any] = [meta.get("name", "")]
    printer = printers.printer_for(resource.group, resource.resource)
    if printer is not None and not printer.with_name:
        cells = []
    elif printer is not None and printer.name is not None:
        cells = [printer.name(obj)]
    if printer is None:
        cells.append(meta.get("creationTimestamp") or "")
    else:
        try:
            values = printer.cells(obj)
        except (AttributeError, TypeError, ValueError):  # malformed stored data must not break a listing
            values = ["<unknown>"] * len(printer.columns)
        values = list(values)
        if printer.with_age:
            values.insert(printer.age_position(), age(obj, now))
        cells.extend(values)
    out: dict[str, Any] = {"cells": cells}
    if include_object == "Object":
        out["object"] = obj
    elif include_object != "None":
        out["object"] = {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}", "metadata": meta}
    return out


def table(resource: Resource, objects: list[dict[str, Any]], list_meta: dict[str, Any], include_object: str,
          version: str = "v1", headers: bool = True) -> dict[str, Any]:
    """A complete Table for ``objects`` with ``list_meta`` (resourceVersion, continue) as its metadata."""
    now = datetime.now(UTC)
    out: dict[str, Any] = {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}", "metadata": list_meta}
    out["columnDefinitions"] = column_definitions(resource) if headers else []
    out["rows"] = [row(resource, o, include_object, now, version) for o in objects]
    return out


def scale_table(scale: dict[str, Any], include_object: str, version: str = "v1") -> dict[str, Any]:
    """The Table of a built-in workload's autoscaling/v1 Scale (``<workload>/scale`` with as=Table): kube's
    printScale columns Name (no ``name`` format), Desired, Available and Age; metadata.resourceVersion the Scale's."""
    meta = scale.get("metadata") or {}
    cols = [{"name": "Name", "type": "string", "format": "", "description": _NAME_COLUMN["description"], "priority": 0},
            {"name": "Desired", "type": "integer", "format": "", "priority": 0,
             "description": "replicas is the desired number of instances for the scaled object."},
            {"name": "Available", "type": "integer", "format": "", "priority": 0,
             "description": "replicas is the actual number of observed instances of the scaled object."},
            dict(_AGE_COLUMN)]
    cells = [meta.get("name", ""), (scale.get("spec") or {}).get("replicas", 0),
             (scale.get("status") or {}).get("replicas", 0), age(scale)]
    out_row: dict[str, Any] = {"cells": cells}
    if include_object == "Object":
        out_row["object"] = scale
    elif include_object != "None":
        out_row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}", "metadata": meta}
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}",
            "metadata": {"resourceVersion": meta.get("resourceVersion", "")}, "columnDefinitions": cols,
            "rows": [out_row]}
