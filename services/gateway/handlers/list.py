"""LIST of a collection (k8s.io/apiserver pkg/endpoints/handlers/get.go ListResource)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors, gofmt, grpcutil, jsonutil, listoptions
from kapi.resources import REGISTRY, Resource
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation, table
from services.gateway.scope import RequestScope, go_type


def _limit(text: str) -> int:
    """An int64 query parameter of ListOptions (``limit``, ``timeoutSeconds``) as its decoder parses it: 0 when
    absent, 400 ``strconv.ParseInt: ...`` when it is no int64 (a negative limit is none)."""
    if not text:
        return 0
    try:
        value = gofmt.parse_int64(text)
    except ValueError as exc:
        raise errors.bad_request(str(exc)) from None
    return max(value, 0)


async def list_(scope: RequestScope) -> web.Response:
    """List objects with label/field selectors, ``limit``/``continue`` and resourceVersion semantics.

    The JSON answer is assembled from the stored object bytes without
    re-encoding them. Raises 400 for bad selectors or parameters, 410 for an
    expired continue token (from storage), 422 for ListOptions kube's ValidateListOptions refuses
    (after the parameters decode, before the resourceVersion is parsed, as ListResource).
    """
    limit = _limit(scope.param("limit"))
    _limit(scope.param("timeoutSeconds"))  # decoded into ListOptions (and unused by a list): a bad one is 400
    listoptions.check_list_options(scope.query, watch=False)
    rv = scope.param("resourceVersion")  # parsed by storage, after the continue token (ValidateListOptions)
    request = storage_pb2.ListRequest(
        key=scope.key(name=""), label_selector=scope.param("labelSelector"),
        field_selector=scope.field_selector(), limit=limit,
        resource_version=rv, resource_version_match=scope.param("resourceVersionMatch"),
        selectable_fields=scope.selectable_fields())
    setattr(request, "continue", scope.param("continue"))
    reply: Any = await grpcutil.call("storage", scope.backends.storage.List, request, timeout=scope.timeout)
    meta: dict[str, Any] = {"resourceVersion": str(reply.resource_version)}
    token = getattr(reply, "continue")
    if token:
        meta["continue"] = token
    if reply.has_remaining_item_count:
        meta["remainingItemCount"] = reply.remaining_item_count
    resource = scope.resource
    if scope.output.table:
        objects = [jsonutil.loads(item) for item in reply.items]
        body = table.table(resource, objects, meta, negotiation.include_object(scope.param("includeObject")),
                           scope.output.version)
        return scope.respond(body)
    negotiation.check_partial(scope.output, True, go_type(resource, list_=True))  # 406 for as=PartialObjectMetadata
    if scope.output.partial_metadata:
        items = [{"kind": "PartialObjectMetadata", "apiVersion": scope.output.meta_api_version,
                  "metadata": jsonutil.loads(i).get("metadata", {})} for i in reply.items]
        return scope.respond({"kind": "PartialObjectMetadataList", "apiVersion": scope.output.meta_api_version,
                              "metadata": meta, "items": items})
    encoded: list[bytes] = list(reply.items)
    if REGISTRY.is_static(resource):
        encoded = [typed_item(item, resource) for item in encoded]
    if scope.output.mime == negotiation.JSON:
        head = jsonutil.dumps({"kind": resource.list_kind, "apiVersion": resource.group_version, "metadata": meta})
        data = head[:-1] + b',"items":[' + b",".join(encoded) + b"]}"
        return scope.respond(data)
    return scope.respond({"kind": resource.list_kind, "apiVersion": resource.group_version, "metadata": meta,
                          "items": [jsonutil.loads(i) for i in encoded]})


def typed_item(item: bytes, resource: Resource) -> bytes:
    """One stored object (JSON) as an item of a built-in kind's list: without ``apiVersion`` and ``kind``.

    kube encodes a typed list (``ConfigMapList``: ``Items []ConfigMap``) whose items' TypeMeta the
    conversion left empty, so they carry neither; clients fill them from the list's kind (client-go's
    unstructured decoder, kubectl). Custom resource lists keep them (kube lists unstructured objects),
    as do watch events and Table rows. The common layouts (``{"apiVersion":..,"kind":..,`` either way
    round) are cut from the bytes; any other is decoded and encoded again.
    """
    api_version, kind = jsonutil.dumps(resource.group_version), jsonutil.dumps(resource.kind)
    for prefix in (b'{"apiVersion":' + api_version + b',"kind":' + kind + b",",
                   b'{"kind":' + kind + b',"apiVersion":' + api_version + b","):
        if item.startswith(prefix):
            return b"{" + item[len(prefix):]
    obj = jsonutil.loads(item)
    if isinstance(obj, dict) and ("apiVersion" in obj or "kind" in obj):
        obj.pop("apiVersion", None)
        obj.pop("kind", None)
        return jsonutil.dumps(obj)
    return item
