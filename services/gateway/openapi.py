"""OpenAPI documents for the served resources: ``/openapi/v3`` (+ ``/openapi/v3/<api path>``) and ``/openapi/v2``.

Built from the Kubernetes OpenAPI definitions shipped in the
``kubernetes-validate`` wheel: each group-version document holds the paths
of its resources (with ``x-kubernetes-group-version-kind`` and the standard
query parameters, among them ``fieldValidation``, which tells kubectl that
the server validates fields itself) and the schemas those kinds reference.
kubectl reads these for ``apply``/``create`` validation and ``explain``.
The wheel's definitions are JSON Schema (``"type": ["string", "null"]``);
:func:`openapi_schema` turns them back into OpenAPI schemas as kube-openapi
publishes them (one type, IntOrString as ``format: int-or-string``), which
kubectl's explain templates require. ``/openapi/v2`` is one Swagger 2.0
document of every served path and the same definitions, as JSON or as
gnostic protobuf (services/gateway/openapi_v2pb.py), which kubectl's
client-side validation reads.
Source: "Kubernetes API: OpenAPI V3" (KEP-2896), kube-openapi.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from kapi import errors, jsonutil
from kapi.resources import REGISTRY, Registry, Resource
from services.gateway import openapi_v2pb
from services.gateway import patch as patching

_QUERY = ("dryRun", "fieldManager", "fieldValidation", "pretty")


def _param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}


# The query parameters of a list (and watch) of a collection, metav1.ListOptions' fields: (name, type, what).
_LIST_QUERY = (
    ("allowWatchBookmarks", "boolean", "a watch may send BOOKMARK events"),
    ("continue", "string", "the continue token of the previous page of this list"),
    ("fieldSelector", "string", "only objects whose fields match this selector"),
    ("labelSelector", "string", "only objects whose labels match this selector"),
    ("limit", "integer", "at most this many objects, the rest by the continue token"),
    ("resourceVersion", "string", "the resourceVersion the list or watch starts from"),
    ("resourceVersionMatch", "string", "how resourceVersion applies: Exact or NotOlderThan"),
    ("sendInitialEvents", "boolean", "a watch starts with the current objects as ADDED events"),
    ("timeoutSeconds", "integer", "seconds a list or watch may last"),
    ("watch", "boolean", "watch for changes to the selected objects: a stream of ADDED, MODIFIED and DELETED "
                         "events instead of a list"),
)
_WATCH_MEDIA = ("application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")


def _list_params(v2: bool) -> list[dict[str, Any]]:
    """The list query parameters as OpenAPI v2 or v3 parameter objects."""
    if v2:
        return [{"name": n, "in": "query", "type": t, "uniqueItems": True, "description": d}
                for n, t, d in _LIST_QUERY]
    return [{"name": n, "in": "query", "description": d, "schema": {"type": t, "uniqueItems": True}}
            for n, t, d in _LIST_QUERY]


def _list_definition(r: Resource, name: str | None) -> str | None:
    """The ``<Kind>List`` definition beside a kind's (a CRD's ``names.listKind``), if there is one."""
    if not name or not name.endswith(r.kind):
        return None
    list_name = name[:-len(r.kind)] + r.list_kind
    return list_name if list_name in patching._definitions() or list_name in _CUSTOM_DEFINITIONS else None


def api_path(group: str, version: str) -> str:
    """The OpenAPI v3 index key of a group-version: ``api/v1`` or ``apis/<group>/<version>``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


# Custom resources (services/gateway/dynamic.py): (group, version, kind) -> (definition name, schema), and every
# definition they add (kinds and lists), as OpenAPI v3 schemas with #/components/schemas/ references.
_CUSTOM_KINDS: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
_CUSTOM_DEFINITIONS: dict[str, dict[str, Any]] = {}


def set_custom(kinds: dict[tuple[str, str, str], tuple[str, dict[str, Any]]],
               definitions: dict[str, dict[str, Any]]) -> None:
    """Replace the custom resources' definitions and drop every cached document (they are rebuilt on demand)."""
    _CUSTOM_KINDS.clear()
    _CUSTOM_KINDS.update(kinds)
    _CUSTOM_DEFINITIONS.clear()
    _CUSTOM_DEFINITIONS.update(definitions)
    group_version_document.cache_clear()
    index.cache_clear()
    swagger_v2.cache_clear()


def _definition_name(r: Resource) -> str | None:
    custom = _CUSTOM_KINDS.get((r.group, r.version, r.kind))
    if custom is not None:
        return custom[0]
    return patching._kind_index().get((r.group, r.version, r.kind))


_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"


def _without_type_meta_enum(name: str, schema: Any) -> Any:
    """apiVersion/kind without the ``enum`` the wheel's schemas add (kube's OpenAPI has none; explain shows it)."""
    if name in ("apiVersion", "kind") and isinstance(schema, dict) and "enum" in schema:
        return {k: v for k, v in schema.items() if k != "enum"}
    return schema


def openapi_schema(schema: Any, ref_prefix: str, v2: bool = False) -> Any:
    """One definition of the wheel's JSON Schema as an OpenAPI schema (a new value).

    ``"type": [T, "null"]`` -> ``"type": T``; ``null`` leaves enums and
    ``oneOf``; ``$ref``s point under ``ref_prefix`` (``#/components/schemas/``
    for v3, ``#/definitions/`` for v2); in v3 a ``$ref`` with siblings is
    wrapped in ``allOf`` as kube-openapi does.
    """
    if isinstance(schema, list):
        return [openapi_schema(s, ref_prefix, v2) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            if types:
                out["type"] = types[0]
        elif key == "enum" and isinstance(value, list):
            out["enum"] = [v for v in value if v is not None]
        elif key == "$ref" and isinstance(value, str):
            out["$ref"] = ref_prefix + value.rsplit("/", 1)[-1]
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {k: openapi_schema(_without_type_meta_enum(k, v) if key == "properties" else v, ref_prefix, v2)
                        for k, v in value.items()}
        else:
            out[key] = openapi_schema(value, ref_prefix, v2)
    if "oneOf" in out and isinstance(out["oneOf"], list):
        out["oneOf"] = [o for o in out["oneOf"] if o != {}]
    if not v2 and "$ref" in out and len(out) > 1:
        out["allOf"] = [{"$ref": out.pop("$ref")}]
    return out


def _definition(name: str, ref_prefix: str, v2: bool) -> dict[str, Any]:
    raw = patching._definitions()[name]
    if name == _INT_OR_STRING:
        return {"description": raw.get("description", ""), "type": "string", "format": "int-or-string"}
    if name == _QUANTITY and v2:
        return {"description": raw.get("description", ""), "type": "string"}
    return dict(openapi_schema(raw, ref_prefix, v2))


def _closure(names: list[str], ref_prefix: str = "#/components/schemas/", v2: bool = False) -> dict[str, Any]:
    """The definitions ``names`` reference, transitively, as OpenAPI schemas keyed by definition name."""
    defs = patching._definitions()
    out: dict[str, Any] = {}
    stack = list(names)
    while stack:
        name = stack.pop()
        if name in out or (name not in defs and name not in _CUSTOM_DEFINITIONS):
            continue
        if name in _CUSTOM_DEFINITIONS:
            custom = _CUSTOM_DEFINITIONS[name]
            out[name] = openapi_schema(openapi_v2pb.crd_schema_v2(custom) if v2 else custom, ref_prefix, v2)
        else:
            out[name] = _definition(name, ref_prefix, v2)
        text = jsonutil.dumps(out[name]).decode()
        start = 0
        while (i := text.find(ref_prefix, start)) >= 0:
            j = text.find('"', i)
            stack.append(text[i + len(ref_prefix):j])
            start = j
    return out


def patch_types(r: Resource, registry: Registry = REGISTRY) -> tuple[str, ...]:
    """PATCH content types of ``r`` as its OpenAPI lists them: no strategic merge for custom resources.

    kubectl picks a strategic merge patch for ``kubectl apply`` only when the
    path's OpenAPI offers it; kube-apiserver refuses it (415) for custom
    resources, whose OpenAPI lists JSON, merge and apply patches only.
    """
    if registry.is_static(r):
        return ("application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json", "application/apply-patch+yaml")
    return "application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"


def _delete_responses(r: Resource, schema_ref: dict[str, Any], v2: bool) -> dict[str, Any]:
    """A DELETE's 200 and 202 responses: the object for resources that return it
    (``Resource.returns_deleted_object``), else a plain ``type: object`` (a Status or, while finalizers keep
    it, the object), as kube 1.37's OpenAPI has them (the official Python client generated from it types those
    responses ``object``)."""
    ref = schema_ref if r.returns_deleted_object else {"type": "object"}
    if v2:
        return {"200": {"description": "OK", "schema": ref}, "202": {"description": "Accepted", "schema": ref}}
    return {code: {"description": text, "content": {"application/json": {"schema": ref}}}
            for code, text in (("200", "OK"), ("202", "Accepted"))}


def _operations(r: Resource, schema_ref: dict[str, Any], registry: Registry = REGISTRY) -> dict[str, Any]:
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
                  "requestBody": {"content": {t: {"schema": {"type": "object"}} for t in patch_types(r, registry)}},
                  "x-kubernetes-group-version-kind": gvk},
        "delete": {"operationId": f"delete{r.kind}", "responses": _delete_responses(r, schema_ref, v2=False),
                   "x-kubernetes-action": "delete",
                   "parameters": [_param("dryRun")], "x-kubernetes-group-version-kind": gvk},
        "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
    }
    list_name = _list_definition(r, schema_ref.get("$ref", "").rsplit("/", 1)[-1] or None)
    list_ok: dict[str, Any] = {"description": "OK"}
    if list_name:
        list_ok["content"] = {m: {"schema": {"$ref": f"#/components/schemas/{list_name}"}}
                              for m in ("application/json", *_WATCH_MEDIA)}
    collection: dict[str, Any] = {
        "get": {"operationId": f"list{r.kind}", "responses": {"200": list_ok}, "parameters": _list_params(False),
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
        list_name = _list_definition(r, name)
        if list_name:
            roots.append(list_name)
        paths.update(_operations(r, ref, registry))
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


def _v2_operations(r: Resource, name: str | None) -> dict[str, Any]:
    """Swagger 2.0 path items of one resource (collection and object)."""
    ref = {"$ref": f"#/definitions/{name}"} if name else {"type": "object"}
    gvk = {"group": r.group, "version": r.version, "kind": r.kind}
    ok = {"200": {"description": "OK", "schema": ref}}
    body = {"name": "body", "in": "body", "required": True, "schema": ref}
    query = [{"name": p, "in": "query", "type": "string", "uniqueItems": True} for p in _QUERY]
    tag = (r.group.split(".")[0] if r.group else "core") + "_" + r.version
    base = f"/{api_path(r.group, r.version)}"
    prefix = f"{base}/namespaces/{{namespace}}/{r.resource}" if r.namespaced else f"{base}/{r.resource}"

    def op(action: str, verb: str, params: list[dict[str, Any]], consumes: tuple[str, ...] = ("*/*",)
           ) -> dict[str, Any]:
        return {"operationId": f"{verb}{r.kind}", "tags": [tag], "consumes": list(consumes),
                "produces": ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
                "schemes": ["https"], "parameters": params, "responses": ok, "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk}

    path_params = [{"name": "name", "in": "path", "required": True, "type": "string", "uniqueItems": True}]
    if r.namespaced:
        ns = {"name": "namespace", "in": "path", "required": True, "type": "string", "uniqueItems": True}
        path_params.append(ns)
    patch_body = {"name": "body", "in": "body", "required": True, "schema": {"type": "object"}}
    item = {"get": op("get", "read", []), "put": op("put", "replace", [body, *query]),
            "patch": op("patch", "patch", [patch_body, *query], patch_types(r)),
            "delete": {**op("delete", "delete", query[:1]), "responses": _delete_responses(r, ref, v2=True)},
            "parameters": path_params}
    list_name = _list_definition(r, name)
    listing = op("list", "list", _list_params(True))
    listing["produces"] = [*listing["produces"], *_WATCH_MEDIA]
    if list_name:
        listing["responses"] = {"200": {"description": "OK", "schema": {"$ref": f"#/definitions/{list_name}"}}}
    collection = {"get": listing, "post": op("post", "create", [body, *query]), "parameters": path_params[1:]}
    return {prefix: collection, f"{prefix}/{{name}}": item}


@functools.cache
def swagger_v2(registry: Registry = REGISTRY) -> bytes:
    """The ``/openapi/v2`` document (Swagger 2.0 JSON bytes): every served path and the definitions it references."""
    paths: dict[str, Any] = {}
    roots = []
    for r in registry.rows:
        name = _definition_name(r)
        if name:
            roots.append(name)
        list_name = _list_definition(r, name)
        if list_name:
            roots.append(list_name)
        paths.update(_v2_operations(r, name))
    doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.37.0"}, "paths": paths,
           "definitions": _closure(roots, "#/definitions/", v2=True),
           "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                   "name": "authorization", "in": "header"}},
           "security": [{"BearerToken": []}]}
    return jsonutil.dumps(doc)


V2_PROTOBUF = openapi_v2pb.CONTENT_TYPE


def v2_response(accept: str, headers: Mapping[str, str] | None = None) -> web.Response:
    """Answer ``GET /openapi/v2`` as kube-openapi's handler does: JSON, or gnostic protobuf (``V2_PROTOBUF``), else 406.

    The form is negotiated from Accept (:func:`openapi_v2pb.negotiate`);
    both carry kube's ``ETag`` (an ``If-None-Match`` that matches is 304) and
    ``Vary: Accept``; the protobuf is sent gzip-compressed when the client
    accepts gzip. Encodings are cached until the document changes.
    """
    headers = headers or {}
    form = openapi_v2pb.negotiate(accept)
    if form is None:
        raise errors.not_acceptable(f"only the following media types are accepted: application/json, "
                                    f"{V2_PROTOBUF} (not {accept})")
    doc = openapi_v2pb.encoded(swagger_v2())
    common = {"Cache-Control": "no-cache, private", "Vary": "Accept", "ETag": doc.etag}
    if doc.etag in headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=common)
    if form == "json":
        return web.Response(body=doc.json, status=200, content_type="application/json", headers=common)
    if "gzip" in headers.get("Accept-Encoding", ""):
        return web.Response(body=doc.protobuf_gzip, status=200, content_type=V2_PROTOBUF,
                            headers={**common, "Content-Encoding": "gzip"})
    return web.Response(body=doc.protobuf, status=200, content_type=V2_PROTOBUF, headers=common)
