"""Server-side printing: convert objects to a ``meta.k8s.io/v1`` Table.

kubectl asks for Tables and prints their rows; columns come from the
resource table's ``columns`` (kapi.resources), always led by NAME and
followed by AGE, like kube-apiserver's printers. ``includeObject`` decides
what each row carries: ``None``, ``Metadata`` (default, a
PartialObjectMetadata) or ``Object``. Source: "API concepts: Receiving
resources as Tables" and k8s.io/apimachinery pkg/util/duration (HumanDuration).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kapi.resources import Resource

_NAME_COLUMN = {"name": "Name", "type": "string", "format": "name", "priority": 0,
                "description": "Name must be unique within a namespace. More info: "
                               "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"}
_AGE_COLUMN = {"name": "Age", "type": "string", "format": "", "priority": 0,
               "description": "CreationTimestamp is a timestamp representing the server time when this object was "
                              "created."}


def human_duration(seconds: float) -> str:
    """kube's HumanDuration: 45s, 3m20s, 15m, 5h, 2d3h, 400d, 3y20d."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rem = s % 60
        return f"{minutes}m" if rem == 0 else f"{minutes}m{rem}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rem = minutes % 60
        return f"{hours}h" if rem == 0 else f"{hours}h{rem}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rem = hours % 24
        return f"{hours // 24}d" if rem == 0 else f"{hours // 24}d{rem}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rem = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rem == 0 else f"{hours // 24 // 365}y{rem}d"
    return f"{hours // 24 // 365}y"


def age(obj: dict[str, Any], now: datetime | None = None) -> str:
    """The AGE cell of an object from metadata.creationTimestamp ("<unknown>" when absent)."""
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return "<unknown>"
    try:
        created = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration(((now or datetime.now(UTC)) - created).total_seconds())


def _cell(obj: dict[str, Any], path: str) -> Any:
    if path.startswith("#"):  # number of keys in a map field (DATA columns)
        value = obj.get(path[1:]) or {}
        extra = obj.get("binaryData") or {} if path == "#data" else {}
        return len(value) + len(extra)
    if path == "@roleRef":
        ref = obj.get("roleRef") or {}
        return f"{ref.get('kind', '')}/{ref.get('name', '')}"
    node: Any = obj
    for key in path.strip(".").split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return "" if node is None else node


def column_definitions(resource: Resource) -> list[dict[str, Any]]:
    """Table columnDefinitions: Name, the resource's own columns, Age."""
    cols = [dict(_NAME_COLUMN)]
    for header, type_, _path in resource.columns:
        cols.append({"name": header, "type": type_, "format": "", "description": header, "priority": 0})
    cols.append(dict(_AGE_COLUMN))
    return cols


def row(resource: Resource, obj: dict[str, Any], include_object: str, now: datetime | None = None) -> dict[str, Any]:
    """One Table row: cells plus the object per ``includeObject`` (None, Metadata, Object)."""
    cells = [(obj.get("metadata") or {}).get("name", "")]
    cells.extend(_cell(obj, path) for _h, _t, path in resource.columns)
    cells.append(age(obj, now))
    out: dict[str, Any] = {"cells": cells}
    if include_object == "Object":
        out["object"] = obj
    elif include_object != "None":
        out["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                         "metadata": obj.get("metadata") or {}}
    return out


def table(resource: Resource, objects: list[dict[str, Any]], list_meta: dict[str, Any], include_object: str,
          version: str = "v1", headers: bool = True) -> dict[str, Any]:
    """A complete Table for ``objects`` with ``list_meta`` (resourceVersion, continue) as its metadata."""
    now = datetime.now(UTC)
    out: dict[str, Any] = {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}", "metadata": list_meta}
    out["columnDefinitions"] = column_definitions(resource) if headers else []
    out["rows"] = [row(resource, o, include_object, now) for o in objects]
    return out
