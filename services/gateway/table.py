"""Server-side printing: convert objects to a ``meta.k8s.io/v1`` Table.

kubectl asks for Tables and prints their rows; columns come from the
kind's printer (printers.py), led by Name and followed by Age, like
kube-apiserver's printers; kinds without one get Name and Created At. ``includeObject`` decides
what each row carries: ``None``, ``Metadata`` (default, a
PartialObjectMetadata) or ``Object``. Source: "API concepts: Receiving
resources as Tables".
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

from kapi.resources import Resource
from services.gateway import patch as patching
from services.gateway import printers, printers_more
from services.gateway.columns import age

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@functools.cache
def swagger_doc(definition: str, field: str) -> str:
    """The description of ``field`` in the OpenAPI ``definition`` (e.g. ObjectMeta, ``name``), the text kube's
    printers take from ``<Type>{}.SwaggerDoc()[field]``; "" when either is unknown. Read once from the
    definitions kapi serves in /openapi (kubernetes-validate's _definitions.json)."""
    prop = ((patching._definitions().get(definition) or {}).get("properties") or {}).get(field) or {}
    return str(prop.get("description") or "")


def describe(text: str) -> str:
    """A column description: ``swagger:<definition>#<field>`` (see :func:`printers_more.doc`) resolved by
    :func:`swagger_doc`, any other text as it is."""
    if text.startswith(printers_more.SWAGGER):
        definition, _, field = text[len(printers_more.SWAGGER):].partition("#")
        return swagger_doc(definition, field)
    return text


def name_column() -> dict[str, Any]:
    """kube's Name column: ``metav1.ObjectMeta{}.SwaggerDoc()["name"]`` (printers.go, tableconvertor.New)."""
    return {"name": "Name", "type": "string", "format": "name", "priority": 0,
            "description": swagger_doc(_OBJECT_META, "name")}


def age_column() -> dict[str, Any]:
    """kube's printers' Age column: type string, ``ObjectMeta{}.SwaggerDoc()["creationTimestamp"]``."""
    return {"name": "Age", "type": "string", "format": "", "priority": 0,
            "description": swagger_doc(_OBJECT_META, "creationTimestamp")}


def column_definitions(resource: Resource) -> list[dict[str, Any]]:
    """Table columnDefinitions: Name, the kind's printer columns with Age at kube's place (or Name, Created At).

    A custom resource's columns are those of its own version (apiextensions-apiserver builds one table
    convertor per served version)."""
    cols = [name_column()]
    printer = printers.printer_for(resource.group, resource.resource, resource.version)
    if printer is not None and not printer.with_name:
        cols = []
    if printer is None:
        cols.append({"name": "Created At", "type": "date", "format": "", "priority": 0,
                     "description": swagger_doc(_OBJECT_META, "creationTimestamp")})
        return cols
    for c in printer.columns:
        cols.append({"name": c.name, "type": c.type, "format": c.format,
                     "description": describe(c.description) if c.description else c.name, "priority": c.priority})
    if printer.with_age:
        cols.insert(len(cols) - len(printer.columns) + printer.age_position(), age_column())
    return cols


def row(resource: Resource, obj: dict[str, Any], include_object: str, now: datetime | None = None,
        version: str = "v1") -> dict[str, Any]:
    """One Table row: cells plus the object per ``includeObject`` (None, Metadata, Object); a Metadata row's
    PartialObjectMetadata is in the Table's meta.k8s.io ``version``."""
    meta = obj.get("metadata") or {}
    cells: list[Any] = [meta.get("name", "")]
    printer = printers.printer_for(resource.group, resource.resource, resource.version)
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
    cols = [{"name": "Name", "type": "string", "format": "", "description": swagger_doc(_OBJECT_META, "name"),
             "priority": 0},
            {"name": "Desired", "type": "integer", "format": "", "priority": 0,
             "description": "replicas is the desired number of instances for the scaled object."},
            {"name": "Available", "type": "integer", "format": "", "priority": 0,
             "description": "replicas is the actual number of observed instances of the scaled object."},
            age_column()]
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
