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

import datetime
import functools
import hashlib
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from kapi import errors, jsonutil
from kapi.resources import REGISTRY, Registry, Resource
from services.gateway import discovery, openapi_v2pb
from services.gateway import openapi_routes as oaroutes
from services.gateway import patch as patching

# Short descriptions of the query and path parameters (kapi's words; kube's prose is not copied).
_DESCRIPTIONS = {
    "allowWatchBookmarks": "a watch may send BOOKMARK events",
    "continue": "the continue token of the previous page of this list",
    "fieldSelector": "only objects whose fields match this selector",
    "labelSelector": "only objects whose labels match this selector",
    "limit": "at most this many objects, the rest by the continue token",
    "resourceVersion": "the resourceVersion the list or watch starts from",
    "resourceVersionMatch": "how resourceVersion applies: Exact or NotOlderThan",
    "sendInitialEvents": "a watch starts with the current objects as ADDED events",
    "timeoutSeconds": "seconds a list or watch may last",
    "watch": "watch for changes to the selected objects: a stream of ADDED, MODIFIED and DELETED events instead "
             "of a list",
    "pretty": "If 'true', then the output is pretty printed.",
    "dryRun": "All: run every stage of the request but persist nothing",
    "fieldManager": "the name of the actor making the change",
    "fieldValidation": "Ignore, Warn or Strict: what to do with unknown and duplicate fields",
    "force": "an apply patch takes the fields other managers own",
    "gracePeriodSeconds": "seconds before the object is deleted",
    "orphanDependents": "deprecated: orphan the dependents (propagationPolicy Orphan)",
    "propagationPolicy": "Orphan, Background or Foreground: how dependents are garbage collected",
    "ignoreStoreReadErrorWithClusterBreakingPotential": "delete an object that cannot be read from storage",
    "namespace": "object name and auth scope, such as for teams and projects",
    "path": "path to the resource",
}


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


API_CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
_OBJECT_META_REF = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
# apiextensions' addEmbeddedProperties: its own texts for an embedded resource's apiVersion and kind
_EMBEDDED_API_VERSION = ("apiVersion defines the versioned schema of this representation of an object. More info: "
                         f"{API_CONVENTIONS}#resources")
_EMBEDDED_KIND = f"kind is a string value representing the type of this object. In CamelCase. More info: " \
                 f"{API_CONVENTIONS}#types-kinds"


@functools.cache
def meta_descriptions() -> dict[str, str]:
    """The descriptions kube gives a custom kind's meta fields, keyed ``apiVersion``, ``kind``, ``metadata`` (the
    object's) and ``listMetadata`` (its list's).

    apiextensions-apiserver's OpenAPI builder copies TypeMeta's apiVersion and kind and the
    PartialObjectMetadata(List) SwaggerDoc of metadata; built-in kinds carry the same texts, so they are read from
    the wheel's core/v1 Pod and PodList definitions rather than kept here.
    Source: apiextensions-apiserver pkg/controller/openapi/builder (addTypeMetaProperties, buildListSchema)."""
    defs = patching._definitions()
    pod, pod_list = defs["io.k8s.api.core.v1.Pod"]["properties"], defs["io.k8s.api.core.v1.PodList"]["properties"]
    return {"apiVersion": str(pod["apiVersion"]["description"]), "kind": str(pod["kind"]["description"]),
            "metadata": str(pod["metadata"]["description"]), "listMetadata": str(pod_list["metadata"]["description"])}


def with_embedded_meta(schema: Any, v2: bool) -> Any:
    """A custom resource schema (v3, or v2 after ToStructuralOpenAPIV2) with every ``x-kubernetes-embedded-resource``
    object given ``apiVersion``, ``kind`` (kube's embedded texts) and ``metadata`` (ObjectMeta, a
    ``#/components/schemas/`` reference) and ``kind``, ``apiVersion`` added to its ``required``; a new value.

    In v2 an embedded object that preserves unknown fields gets nothing (kubectl's v2 validation would refuse
    its unknown fields). Source: apiextensions-apiserver pkg/controller/openapi/builder addEmbeddedProperties."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: with_embedded_meta(v, v2) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = with_embedded_meta(out[key], v2)
    if out.get("x-kubernetes-embedded-resource") is not True or (
            v2 and out.get("x-kubernetes-preserve-unknown-fields") is True):
        return out
    out["properties"] = {**(out.get("properties") or {}),
                         "apiVersion": {"type": "string", "description": _EMBEDDED_API_VERSION},
                         "kind": {"type": "string", "description": _EMBEDDED_KIND},
                         "metadata": {"$ref": _OBJECT_META_REF, "description": meta_descriptions()["metadata"]}}
    required = list(out.get("required") or [])
    out["required"] = required + [r for r in ("kind", "apiVersion") if r not in required]
    return out


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
            custom = with_embedded_meta(openapi_v2pb.crd_schema_v2(custom) if v2 else custom, v2)
            out[name] = openapi_schema(custom, ref_prefix, v2)
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
    return oaroutes.PATCH_TYPES if registry.is_static(r) else oaroutes.CUSTOM_PATCH_TYPES


def _routes(r: Resource, registry: Registry) -> list[oaroutes.Route]:
    subs = {sub: (discovery.subresource_kind(r, sub), tuple(discovery.subresource_verbs(sub)))
            for sub in r.subresources}
    return oaroutes.routes(r, subs, registry.is_static(r))


def _schema_of(route: oaroutes.Route, what: str | None, r: Resource, ref_prefix: str) -> dict[str, Any] | None:
    """The schema a route reads or answers (``Route.body``/``Route.response``), a ``$ref`` where kube has one."""
    if what is None:
        return None
    if what == "string":
        return {"type": "string"}
    name: str | None
    if what == "object":
        name = _definition_name_of(route.gvk)
    elif what == "list":
        name = _list_definition(r, _definition_name(r))
    elif what == "deleted":
        # the object for resources that return it (Resource.returns_deleted_object), else a plain object (a Status
        # or, while finalizers keep it, the object), as kube 1.37's OpenAPI has them
        name = _definition_name(r) if r.returns_deleted_object else None
    else:
        name = {"status": oaroutes.STATUS, "watch": oaroutes.WATCH_EVENT, "delete": oaroutes.DELETE_BODY,
                "patch": oaroutes.PATCH_BODY, "scale": _SCALE}[what]
    return {"$ref": ref_prefix + name} if name else {"type": "object"}


_SCALE = "io.k8s.api.autoscaling.v1.Scale"
_CODE_TEXT = {"200": "OK", "201": "Created", "202": "Accepted"}


def _parameter(name: str, where: str, json_type: str, v2: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "in": where}
    if name in _DESCRIPTIONS:
        out["description"] = _DESCRIPTIONS[name]
    if where == "path":
        out["required"] = True
    if v2:
        out["type"] = json_type
        out["uniqueItems"] = True
    else:
        out["schema"] = {"type": json_type, "uniqueItems": True}
    return out


def _path_parameters(route: oaroutes.Route, r: Resource, v2: bool) -> list[dict[str, Any]]:
    out = []
    for name in route.path_params:
        p = _parameter(name, "path", "string", v2)
        if name == "name":
            p["description"] = f"name of the {route.gvk[2] if route.action == 'connect' else r.kind}"
        out.append(p)
    return out


def _operation(route: oaroutes.Route, r: Resource, v2: bool) -> dict[str, Any]:
    """One operation object; its path and pretty parameters are left to the path item (:func:`_paths`)."""
    prefix = "#/definitions/" if v2 else "#/components/schemas/"
    operation_id, tag = oaroutes.operation_id_and_tag(route)
    group, version, kind = route.gvk
    params = [_parameter(n, "query", t, v2) for n, t in route.query]
    body = _schema_of(route, route.body, r, prefix)
    response = _schema_of(route, route.response, r, prefix)
    op: dict[str, Any] = {"description": route.doc}
    if v2:
        op["consumes"] = list(route.consumes)
        op["produces"] = list(route.produces)
        op["schemes"] = ["https"]
    op["tags"] = [tag]
    op["operationId"] = operation_id
    if body is not None and v2:
        params.insert(0, {"name": "body", "in": "body", "required": route.body not in ("delete",), "schema": body})
    op["parameters"] = params
    if body is not None and not v2:
        op["requestBody"] = {"content": {t: {"schema": body} for t in route.consumes},
                             "required": route.body != "delete"}
    responses: dict[str, Any] = {}
    for code in route.codes:
        if v2:
            responses[code] = {"description": _CODE_TEXT[code], "schema": response}
        else:
            responses[code] = {"description": _CODE_TEXT[code],
                               "content": {t: {"schema": response} for t in route.produces}}
    responses["401"] = {"description": "Unauthorized"}
    op["responses"] = responses
    op["x-kubernetes-action"] = route.action
    op["x-kubernetes-group-version-kind"] = {"group": group, "kind": kind, "version": version}
    return op


def _paths(r: Resource, registry: Registry, v2: bool) -> dict[str, Any]:
    """The path items of one resource: its operations by path and method, with the parameters every operation of
    a path shares (the path parameters and ``pretty``) on the path item, as kube-openapi moves them."""
    items: dict[str, Any] = {}
    for route in _routes(r, registry):
        item = items.setdefault(route.path, {"__routes": []})
        item["__routes"].append(route)
        item[route.method.lower()] = _operation(route, r, v2)
    for item in items.values():
        routes = item.pop("__routes")
        shared = {"pretty"} if all(any(n == "pretty" for n, _ in rt.query) for rt in routes) else set()
        for method in [m for m in item]:
            op = item[method]
            op["parameters"] = [p for p in op["parameters"] if p["name"] not in shared or p["in"] != "query"]
            if not op["parameters"]:
                del op["parameters"]
        item["parameters"] = _path_parameters(routes[0], r, v2) + (
            [_parameter("pretty", "query", "string", v2)] if shared else [])
    return items


def _definition_name_of(gvk: tuple[str, str, str]) -> str | None:
    custom = _CUSTOM_KINDS.get(gvk)
    if custom is not None:
        return custom[0]
    return patching._kind_index().get(gvk)


def _roots(r: Resource) -> list[str]:
    """The definitions the paths of ``r`` reference directly."""
    out = [oaroutes.STATUS, oaroutes.WATCH_EVENT, oaroutes.DELETE_BODY, oaroutes.PATCH_BODY]
    name = _definition_name(r)
    if name:
        out.append(name)
        list_name = _list_definition(r, name)
        if list_name:
            out.append(list_name)
    for sub in r.subresources:
        sub_name = _definition_name_of(discovery.subresource_kind(r, sub))
        if sub_name:
            out.append(sub_name)
    if "scale" in r.subresources:
        out.append(_SCALE)
    return out


@functools.cache
def group_version_document(group: str, version: str, registry: Registry = REGISTRY) -> bytes | None:
    """The OpenAPI v3 document (JSON bytes) of one group-version, or None if not served."""
    rows = registry.in_group_version(group, version)
    if not rows:
        return None
    paths: dict[str, Any] = {}
    roots: list[str] = []
    for r in rows:
        roots.extend(_roots(r))
        paths.update(_paths(r, registry, v2=False))
    doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.37.0"}, "paths": paths,
           "components": {"schemas": _closure(roots)}}
    return jsonutil.go_escape(jsonutil.dumps(doc))  # kube-openapi's handler3: json.Marshal, HTML-escaped


@functools.cache
def index(registry: Registry = REGISTRY) -> bytes:
    """The ``/openapi/v3`` index: API path -> serverRelativeURL with a content hash."""
    paths: dict[str, Any] = {}
    seen = []
    for r in registry.rows:
        if (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    for group, version in seen:
        key = api_path(group, version)
        paths[key] = {"serverRelativeURL": v3_url(key, v3_etag(group_version_document(group, version, registry)))}
    return jsonutil.dumps({"paths": paths})


def v3_etag(doc: bytes | None) -> str:
    """kube-openapi's computeV3ETag: the upper-case hex SHA-512 of a document (128 characters)."""
    return hashlib.sha512(doc or b"").hexdigest().upper()


def v3_url(key: str, etag: str) -> str:
    """The serverRelativeURL of one group-version document, e.g. ``/openapi/v3/api/v1?hash=<etag>``."""
    return f"/openapi/v3/{key}?hash={etag}"


def v3_response(api_parts: list[str], query_hash: str, headers: Mapping[str, str]) -> web.Response | None:
    """Answer ``GET /openapi/v3`` (the index) or ``/openapi/v3/api/v1``, ``/openapi/v3/apis/<group>/<version>`` as
    kube-openapi's handler3 does.

    A document carries ``ETag: "<sha512>"`` (an ``If-None-Match`` naming it is 304). With ``?hash=`` equal to it the
    answer is ``Cache-Control: public, immutable``, ``Expires`` a year ahead and ``Vary: Accept``; another hash is a
    301 to the current URL (Go's http.Redirect body). Without a hash the chain's ``no-cache, private`` applies.
    None for a path that is not a served group-version (the caller's 404).
    """
    if not api_parts:
        return web.Response(body=index(), status=200, content_type="application/json")
    if api_parts[0] == "api" and len(api_parts) == 2:
        data = group_version_document("", api_parts[1])
    elif api_parts[0] == "apis" and len(api_parts) == 3:
        data = group_version_document(api_parts[1], api_parts[2])
    else:
        data = None
    if data is None:
        return None
    etag = v3_etag(data)
    out = {"ETag": f'"{etag}"'}
    if query_hash:
        if query_hash != etag:
            url = v3_url("/".join(api_parts), etag)
            return web.Response(status=301, text=f'<a href="{url}">Moved Permanently</a>.\n\n',
                                content_type="text/html", headers={**out, "Location": url})
        expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=365)
        out.update({"Vary": "Accept", "Cache-Control": "public, immutable",
                    "Expires": expires.strftime("%a, %d %b %Y %H:%M:%S UTC")})
    if f'"{etag}"' in headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=out)
    return web.Response(body=data, status=200, content_type="application/json", headers=out)


@functools.cache
def swagger_v2(registry: Registry = REGISTRY) -> bytes:
    """The ``/openapi/v2`` document (Swagger 2.0 JSON bytes): every served path and the definitions it references."""
    paths: dict[str, Any] = {}
    roots = []
    for r in registry.rows:
        roots.extend(_roots(r))
        paths.update(_paths(r, registry, v2=True))
    doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.37.0"}, "paths": paths,
           "definitions": _closure(roots, "#/definitions/", v2=True),
           "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                   "name": "authorization", "in": "header"}},
           "security": [{"BearerToken": []}]}
    return jsonutil.go_escape(jsonutil.dumps(doc))  # kube-openapi's handler: json.Marshal, HTML-escaped


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
