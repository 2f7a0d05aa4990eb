"""OpenAPI v3 documents for the served resources (``/openapi/v3`` and ``/openapi/v3/<api path>``).

Built from the Kubernetes OpenAPI definitions shipped in the
``kubernetes-validate`` wheel: each group-version document holds the paths
of its resources (with ``x-kubernetes-group-version-kind`` and the standard
query parameters, among them ``fieldValidation``, which tells kubectl that
the server validates fields itself) and the schemas those kinds reference.
kubectl reads these for ``apply``/``create`` validation and ``explain``.
Source: "Kubernetes API: OpenAPI V3" (KEP-2896).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from kapi import jsonutil
from kapi.resources import REGISTRY, Registry, Resource
from services.gateway import patch as patching

_QUERY = ("dryRun", "fieldManager", "fieldValidation", "pretty")


def _param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}


def api_path(group: str, version: str) -> str:
    """The OpenAPI v3 index key of a group-version: ``api/v1`` or ``apis/<group>/<version>``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _definition_name(r: Resource) -> str | None:
    return patching._kind_index().get((r.group, r.version, r.kind))


def _closure(names: list[str]) -> dict[str, Any]:
    defs = patching._definitions()
    out: dict[str, Any] = {}
    stack = list(names)
    while stack:
        name = stack.pop()
        if name in out or name not in defs:
            continue
        text = jsonutil.dumps(defs[name]).decode().replace("#/$defs/", "#/components/schemas/")
        out[name] = jsonutil.loads(text)
        start = 0
        while (i := text.find("#/components/schemas/", start)) >= 0:
            j = text.find('"', i)
            stack.append(text[i + len("#/components/schemas/"):j])
            start = j
    return out


def _operations(r: Resource, schema_ref: dict[str, Any]) -> dict[str, Any]:
    gvk = {"group": r.group, "version": r.version, "kind": r.kind}
    body = {"content": {"application/json": {"schema": schema_ref}}}
    ok = {"200": {"description": "OK", "content": {"application/json": {"schema": schema_ref}}}}
    base = f"/{api_path(r.group, r.version)}"
    prefix = f"{base}/namespaces/{{namespace}}/{r.resource}" if r.namespaced else f"{base}/{r.resource}"
    item: dict[str, Any] = {
        "get": {"operationId": f"read{r.kind}", "responses": ok, "x-kubernetes-action": "get",
                "x-kubernetes-group-version-kind": gvk},
        "put": {"operationId": f"replace{r.kind}", "requestBody": body, "responses": ok,
                "parameters": [_param(p) for p in _QUERY], "x-kubernetes-action": "put",
                "x-kubernetes-group-version-kind": gvk},
        "patch": {"operationId": f"patch{r.kind}", "responses": ok, "x-kubernetes-action": "patch",
                  "parameters": [_param(p) for p in (*_QUERY, "force")],
                  "requestBody": {"content": {t: {"schema": {"type": "object"}} for t in (
                      "application/json-patch+json", "application/merge-patch+json",
                      "application/strategic-merge-patch+json", "application/apply-patch+yaml")}},
                  "x-kubernetes-group-version-kind": gvk},
        "delete": {"operationId": f"delete{r.kind}", "responses": ok, "x-kubernetes-action": "delete",
                   "parameters": [_param("dryRun")], "x-kubernetes-group-version-kind": gvk},
        "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
    }
    collection: dict[str, Any] = {
        "get": {"operationId": f"list{r.kind}", "responses": {"200": {"description": "OK"}},
                "x-kubernetes-action": "list", "x-kubernetes-group-version-kind": gvk},
        "post": {"operationId": f"create{r.kind}", "requestBody": body, "responses": ok,
                 "parameters": [_param(p) for p in _QUERY], "x-kubernetes-action": "post",
                 "x-kubernetes-group-version-kind": gvk},
    }
    if r.namespaced:
        ns = {"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}}
        item["parameters"].append(ns)
        collection["parameters"] = [ns]
    return {prefix: collection, f"{prefix}/{{name}}": item}


@functools.cache
def group_version_document(group: str, version: str, registry: Registry = REGISTRY) -> bytes | None:
    """The OpenAPI v3 document (JSON bytes) of one group-version, or None if not served."""
    rows = registry.in_group_version(group, version)
    if not rows:
        return None
    paths: dict[str, Any] = {}
    roots = []
    for r in rows:
        name = _definition_name(r)
        ref = {"$ref": f"#/components/schemas/{name}"} if name else {"type": "object"}
        if name:
            roots.append(name)
        paths.update(_operations(r, ref))
    doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.37.0"}, "paths": paths,
           "components": {"schemas": _closure(roots)}}
    return jsonutil.dumps(doc)


@functools.cache
def index(registry: Registry = REGISTRY) -> bytes:
    """The ``/openapi/v3`` index: API path -> serverRelativeURL with a content hash."""
    paths: dict[str, Any] = {}
    seen = []
    for r in registry.rows:
        if (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    for group, version in seen:
        doc = group_version_document(group, version, registry) or b""
        digest = hashlib.sha512(doc).hexdigest()[:128].upper()
        key = api_path(group, version)
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return jsonutil.dumps({"paths": paths})
