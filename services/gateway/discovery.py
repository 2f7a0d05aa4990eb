"""Discovery documents and the version/health endpoints, built from the resource table.

Legacy discovery: ``/api`` (APIVersions), ``/api/v1`` and
``/apis/<group>/<version>`` (APIResourceList), ``/apis`` (APIGroupList),
``/apis/<group>`` (APIGroup). Aggregated discovery (KEP-3352), which current
kubectl asks for first: ``/api`` and ``/apis`` with
``Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList``.
Source: "The Kubernetes API: Discovery API" reference.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from aiohttp import web

from kapi import apiregistration, errors, goyaml, jsonutil, k8sproto
from kapi.k8sproto.encoder import envelope
from kapi.resources import REGISTRY, Registry, Resource
from services.gateway import negotiation

# (group, version) -> an APIVersionDiscovery entry of a group-version kapi does not serve itself (remote), or None.
RemoteVersion = Callable[[str, str], "dict[str, Any] | None"]

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

VERSION_INFO = {
    "major": "1", "minor": "37", "emulationMajor": "1", "emulationMinor": "37",
    "minCompatibilityMajor": "1", "minCompatibilityMinor": "36",
    "gitVersion": "v1.37.0-kapi.0.1.0", "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean", "buildDate": "2026-11-29T00:00:00Z", "goVersion": "python3.11",
    "compiler": "cpython", "platform": "linux/amd64",
}


def wants_aggregated(accept: str) -> str:
    """The aggregated-discovery version ("v2", "v2beta1") the Accept header asks for first, or ""."""
    for media in negotiation.parse_accept(accept):
        if media.param("as") == "APIGroupDiscoveryList" and media.param("g") == "apidiscovery.k8s.io":
            if media.param("v") in ("v2", "v2beta1"):
                return media.param("v")
        elif media.mime in (negotiation.JSON, "*/*", "application/*"):
            return ""
    return ""


def _storage_version_hash(r: Resource) -> str:
    digest = hashlib.sha256(f"{r.group}/{r.version}/{r.kind}".encode()).digest()
    import base64

    return base64.b64encode(digest[:8]).decode()


def api_resource(r: Resource) -> dict[str, Any]:
    """One APIResource entry of an APIResourceList."""
    out: dict[str, Any] = {"name": r.resource, "singularName": r.singular, "namespaced": r.namespaced,
                           "kind": r.kind, "verbs": list(r.verbs)}
    if r.short_names:  # metav1.APIResource's field order: shortNames, categories, then storageVersionHash
        out["shortNames"] = list(r.short_names)
    if r.categories:
        out["categories"] = list(r.categories)
    out["storageVersionHash"] = _storage_version_hash(r)
    return out


# Subresources whose kind or verbs differ from the parent's: (group, version, kind, verbs).
_SUBRESOURCES: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "scale": ("autoscaling", "v1", "Scale", ("get", "patch", "update")),
    "token": ("authentication.k8s.io", "v1", "TokenRequest", ("create",)),
    "eviction": ("policy", "v1", "Eviction", ("create",)),
    "log": ("", "v1", "Pod", ("get",)),
    "binding": ("", "v1", "Binding", ("create",)),
    "exec": ("", "v1", "PodExecOptions", ("create", "get")),
    "attach": ("", "v1", "PodAttachOptions", ("create", "get")),
    "portforward": ("", "v1", "PodPortForwardOptions", ("create", "get")),
    "proxy": ("", "v1", "PodProxyOptions", ("create", "delete", "get", "patch", "update")),
}


def subresource_kind(r: Resource, sub: str) -> tuple[str, str, str]:
    """(group, version, kind) a subresource answers with (Scale, TokenRequest...; else the parent's kind)."""
    known = _SUBRESOURCES.get(sub)
    return known[:3] if known else (r.group, r.version, r.kind)


def subresource_verbs(sub: str) -> list[str]:
    """The verbs of ``<resource>/<sub>`` (``finalize``: update; Scale, TokenRequest...; else get, patch, update)."""
    if sub == "finalize":
        return ["update"]
    known = _SUBRESOURCES.get(sub)
    return list(known[3]) if known else ["get", "patch", "update"]


def subresource_order(r: Resource) -> list[str]:
    """A resource's subresources as discovery lists them: by name for the built-in kinds (kube's API installer
    sorts the storage paths it registers: ``pods/attach`` ... ``pods/status``); a custom resource's as
    apiextensions-apiserver adds them (``status``, then ``scale``)."""
    return sorted(r.subresources) if REGISTRY.is_static(r) else list(r.subresources)


def subresource_entries(r: Resource) -> list[dict[str, Any]]:
    """Legacy-discovery APIResource entries for ``<resource>/<subresource>``, in :func:`subresource_order`."""
    out = []
    for sub in subresource_order(r):
        group, version, kind = subresource_kind(r, sub)
        entry: dict[str, Any] = {"name": f"{r.resource}/{sub}", "singularName": "", "namespaced": r.namespaced,
                                 "kind": kind, "verbs": subresource_verbs(sub)}
        if (group, version) != (r.group, r.version):
            entry["group"], entry["version"] = group, version
        out.append(entry)
    return out


def server_address(host: str, default_port: int = 443) -> str:
    """The ``serverAddress`` clients reached: the request's Host header as ``host:port``.

    kube-apiserver answers its advertise address and secure port
    (``discovery.DefaultAddresses``); kapi's gateways sit behind Envoy and
    know no advertised address, so the address the client dialled (Host,
    which Envoy passes through) stands in for it. A Host without a port
    gets ``default_port`` (HTTPS); an empty or malformed Host gives "".
    """
    host = host.strip()
    if not host or any(c.isspace() or c in "/?#@" for c in host):
        return ""
    if host.startswith("["):  # [v6] or [v6]:port
        end = host.find("]")
        if end < 0:
            return ""
        rest = host[end + 1:]
        if not rest:
            return f"{host}:{default_port}"
        return host if rest.startswith(":") and rest[1:].isdigit() else ""
    name, sep, port = host.rpartition(":")
    if sep and port.isdigit() and name:
        return host
    return f"{host}:{default_port}" if not sep else ""


def api_versions(address: str = "") -> dict[str, Any]:
    """/api: the core group's versions, with ``address`` (host:port) as the server address for every client CIDR."""
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}


def resource_list(group: str, version: str, registry: Registry = REGISTRY) -> dict[str, Any] | None:
    """/api/v1 or /apis/<group>/<version>: APIResourceList, or None if not served. The core group's (and
    extensions') has no ``apiVersion``: kube's NewAPIVersionHandler wraps their serializer in
    stripVersionNegotiatedSerializer (discovery/unaggregated version.go, util.go keepUnversioned)."""
    rows = registry.in_group_version(group, version)
    if not rows:
        return None
    gv = f"{group}/{version}" if group else version
    type_meta = {"kind": "APIResourceList"} if group in ("", "extensions") else {"kind": "APIResourceList",
                                                                                 "apiVersion": "v1"}
    return {**type_meta, "groupVersion": gv,
            "resources": [entry for r in rows for entry in (api_resource(r), *subresource_entries(r))]}


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def entries(registry: Registry = REGISTRY, apiservices: Iterable[Mapping[str, Any]] = ()
            ) -> list[apiregistration.Entry]:
    """Every served group-version (core, built-in, CRD) plus remote APIServices, with their discovery priorities.

    Priorities come from the APIService objects when given (kube-aggregator
    orders discovery by them), else kube's table / the CRD default.
    """
    static = {r.group for r in registry.static}
    served: dict[str, list[str]] = {"": ["v1"], **registry.groups()}
    return apiregistration.entries_for(served, apiservices, [g for g in served if g not in static])


def group_list(registry: Registry = REGISTRY, apiservices: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """/apis: APIGroupList of every named group, in kube-aggregator's order (kapi.apiregistration.legacy_order)."""
    order = apiregistration.legacy_order(entries(registry, apiservices))
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(g, vs) for g, vs in order if vs]}


def group(name: str, registry: Registry = REGISTRY) -> dict[str, Any] | None:
    """/apis/<group>: APIGroup, or None if not served."""
    versions = registry.groups().get(name)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def _aggregated_resource(r: Resource) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource": r.resource, "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster", "singularResource": r.singular,
        "verbs": list(r.verbs),
    }
    if r.short_names:
        out["shortNames"] = list(r.short_names)
    if r.categories:
        out["categories"] = list(r.categories)
    if r.subresources:
        out["subresources"] = [{
            "subresource": sub,
            "responseKind": dict(zip(("group", "version", "kind"), subresource_kind(r, sub), strict=True)),
            "verbs": subresource_verbs(sub)} for sub in subresource_order(r)]
    return out


def aggregated(legacy_core: bool, version: str, registry: Registry = REGISTRY,
               apiservices: Iterable[Mapping[str, Any]] = (), remote: RemoteVersion | None = None) -> dict[str, Any]:
    """APIGroupDiscoveryList for /api (``legacy_core``) or /apis, groups in kapi.apiregistration.aggregated_order.

    A group-version kapi does not serve (a remote APIService's) takes its
    entry from ``remote``; without one it is left out. An item's metadata is
    ``{"name": "<group>"}``, the core group's ``{}`` (ObjectMeta's ``name`` is
    omitempty and ``creationTimestamp`` omitzero in 1.37); versions carry ``version``, ``resources``, ``freshness`` in
    apidiscovery/v2 APIVersionDiscovery's order.
    """
    if legacy_core:
        groups: list[tuple[str, list[str]]] = [("", ["v1"])]
    else:
        groups = [(g, vs) for g, vs in apiregistration.aggregated_order(entries(registry, apiservices)) if g]
    items = []
    for name, versions in groups:
        entries_: list[dict[str, Any]] = []
        for v in versions:
            rows = registry.in_group_version(name, v)
            if rows:  # APIVersionDiscovery's field order: version, resources, freshness
                entries_.append({"version": v, "resources": [_aggregated_resource(r) for r in rows],
                                 "freshness": "Current"})
            elif remote is not None and (entry := remote(name, v)) is not None:
                entries_.append(entry)
        if entries_:  # ObjectMeta's name is omitempty (the core group's item has none), creationTimestamp omitzero
            meta: dict[str, Any] = {"name": name} if name else {}
            items.append({"metadata": meta, "versions": entries_})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {}, "items": items}


# --- ETag of the aggregated documents --------------------------------------------------------------------------


def encode_aggregated(doc: Mapping[str, Any]) -> tuple[bytes, str]:
    """An APIGroupDiscoveryList as kube writes it and its ETag hash: ``(body, hash)``.

    ``body`` is json.Encoder's form (compact, HTML-escaped, trailing
    newline). ``hash`` is 128 upper-case hex digits: SHA-512 of
    ``json.Marshal`` of the list *without* its TypeMeta (kube hashes the
    cached ``APIGroupDiscoveryList{Items: ...}``, whose kind and apiVersion
    are empty and omitted: ``{"metadata":{},"items":[...]}``), so v2 and
    v2beta1 (and kube's protobuf form) share one ETag; ``Vary: Accept`` keeps
    caches from mixing them. ``doc`` must start with ``kind`` and
    ``apiVersion`` (as :func:`aggregated` builds it).
    kube: apiserver endpoints/discovery/aggregated etag.go calculateETag,
    handler.go fetchFromCache.
    """
    body = jsonutil.go_escape(jsonutil.dumps(doc))
    type_meta = jsonutil.go_escape(jsonutil.dumps({"kind": doc["kind"], "apiVersion": doc["apiVersion"]}))
    hashed = b"{" + body[len(type_meta):]  # '{"kind":..,"apiVersion":..,' dropped: the rest is what kube hashes
    return body + b"\n", hashlib.sha512(hashed).hexdigest().upper()


# (legacy_core, version) -> (cache key, body, hash) of the last document built.
_DOCUMENTS: dict[tuple[bool, str], tuple[Hashable, bytes, str]] = {}


def aggregated_document(legacy_core: bool, version: str, registry: Registry = REGISTRY,
                        apiservices: Iterable[Mapping[str, Any]] = (), remote: RemoteVersion | None = None,
                        key: Hashable = None) -> tuple[bytes, str]:
    """:func:`aggregated` encoded by :func:`encode_aggregated`: ``(body, hash)``, built once per document version.

    The document is rebuilt when ``registry.generation`` (a CRD added,
    changed or removed) or ``key`` changes: ``key`` stands for whatever else
    it was built from (the APIServices and the remote documents: the caller
    names their versions). Building /apis costs about 0.6 ms and hashing
    0.1 ms; a cached answer costs a dict look-up. kube also caches the
    document and its ETag until a group-version is added or removed
    (handler.go ``cache.Store(nil)``).
    """
    cache_key = (id(registry), registry.generation, key)
    cached = _DOCUMENTS.get((legacy_core, version))
    if cached is not None and cached[0] == cache_key:
        return cached[1], cached[2]
    body, digest = encode_aggregated(aggregated(legacy_core, version, registry, apiservices, remote))
    _DOCUMENTS[(legacy_core, version)] = (cache_key, body, digest)
    return body, digest


def aggregated_response(headers: Mapping[str, str], version: str, body: bytes, digest: str) -> web.Response:
    """The answer to an aggregated-discovery request: 200 with ``body``, or 304 Not Modified with none.

    Both carry ``ETag: "<digest>"``, ``Vary: Accept`` and
    ``Cache-Control: public`` (which the Cache-Control filter then leaves
    alone). 304 when the request's first ``If-None-Match`` value is exactly
    the quoted hash (no list, ``*`` or weak ``W/`` match, as kube compares
    the strings); it has no Content-Type. The legacy documents (APIVersions,
    APIGroupList, APIGroup, APIResourceList) carry no ETag.
    kube: apiserver endpoints/discovery/aggregated etag.go ServeHTTPWithETag.
    """
    quoted = f'"{digest}"'
    if headers.get("If-None-Match") == quoted:
        response = web.Response(status=304)
    else:
        response = web.Response(body=body, status=200)
        response.headers["Content-Type"] = AGGREGATED_V2 if version == "v2" else AGGREGATED_V2BETA1
    response.headers["ETag"] = quoted
    response.headers["Vary"] = "Accept"
    response.headers["Cache-Control"] = "public"
    return response


# The legacy documents' serializer (the server's codecs: JSON, YAML, protobuf), as its 406 lists them.
LEGACY_PRODUCES = negotiation.PRODUCES_PROTOBUF
_META = "k8s.io.apimachinery.pkg.apis.meta.v1"


def encode_legacy(doc: Mapping[str, Any], mime: str, pretty: bool = False) -> bytes:
    """A legacy discovery document (APIVersions, APIGroupList, APIGroup, APIResourceList, as this module builds
    them: ``kind`` and, unless kube strips it, ``apiVersion``) in ``mime``.

    JSON: json.Encoder's form (compact, HTML-escaped, trailing newline), or with ``pretty`` MarshalIndent's
    (:func:`kapi.jsonutil.dumps_go_indent`: kube's pretty JSON serializer; YAML and protobuf have none).
    YAML: :func:`kapi.goyaml.dumps`. PROTOBUF: the ``k8s\\0`` envelope with the document's apiVersion ("" where
    kube's stripVersionNegotiatedSerializer removes it) and kind around the meta.v1 message of that name
    (apimachinery meta/v1 generated.proto). Raises :class:`kapi.k8sproto.EncodeError` for a kind without one.
    """
    if mime == negotiation.YAML:  # shared dicts (preferredVersion) are written out each time, never aliased
        return goyaml.dumps(doc)
    if mime == negotiation.PROTOBUF:
        kind = str(doc.get("kind") or "")
        msg = k8sproto.schema().messages.get(f"{_META}.{kind}")
        if msg is None:
            raise k8sproto.EncodeError(f"no protobuf message for {kind}")
        return envelope(str(doc.get("apiVersion") or ""), kind, k8sproto.default_encoder().message(msg, doc))
    if pretty:
        return jsonutil.dumps_go_indent(doc)
    return jsonutil.go_escape(jsonutil.dumps(doc)) + b"\n"


def legacy_response(request: web.Request, doc: Mapping[str, Any]) -> web.Response:
    """The answer to a legacy discovery request, negotiated as kube's discovery handlers do.

    First go-restful's route match (the routes produce JSON, YAML and protobuf): an Accept none of whose entries,
    cut at ``;``, is one of them or ``*/*`` is its 406 ``406: Not Acceptable`` (:func:`negotiation.check_route_accept`).
    Then WriteObjectNegotiated with DefaultEndpointRestrictions (no conversions: an entry with ``as``/``g``/``v``
    such as the aggregated ``application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`` is skipped;
    :func:`negotiation.error_output` is that negotiation): nothing acceptable is 406 NotAcceptable ``only the
    following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf``.
    Pretty JSON per :func:`negotiation.pretty`. kube: apiserver endpoints/discovery/unaggregated (root.go,
    legacy.go, group.go, version.go), handlers/responsewriters/writers.go WriteObjectNegotiated.
    """
    accept = request.headers.get("Accept", "")
    negotiation.check_route_accept(accept, LEGACY_PRODUCES)
    output = negotiation.error_output(accept)
    if output is None:
        raise errors.not_acceptable("only the following media types are accepted: " + ", ".join(LEGACY_PRODUCES))
    pretty = output.mime == negotiation.JSON and negotiation.pretty(
        request.rel_url.raw_query_string, request.query, request.headers.get("User-Agent", ""))
    response = web.Response(body=encode_legacy(doc, output.mime, pretty), status=200)
    response.headers["Content-Type"] = output.mime
    return response
