"""DELETE of one object or a collection (k8s.io/apiserver pkg/endpoints/handlers/delete.go)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors, gofmt, grpcutil, jsonutil, listoptions
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation
from services.gateway.registry import deletion, store
from services.gateway.requestinfo import query_bool
from services.gateway.scope import RequestScope, success_status

# DeleteOptions fields and the Go types kube's decoder reads them into (meta/v1 DeleteOptions).
_OPTION_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "kind": ((str,), "string"), "apiVersion": ((str,), "string"),
    "gracePeriodSeconds": ((int,), "int64"), "preconditions": ((dict,), "v1.Preconditions"),
    "orphanDependents": ((bool,), "bool"), "propagationPolicy": ((str,), "v1.DeletionPropagation"),
    "dryRun": ((list,), "[]string"), "ignoreStoreReadErrorWithClusterBreakingPotential": ((bool,), "bool"),
}
_PRECONDITION_TYPES = {"uid": "types.UID", "resourceVersion": "string"}


def _go_json_type(value: Any) -> str:
    return {bool: "bool", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), "value")


def check_option_types(options: dict[str, Any]) -> None:
    """400 BadRequest, in kube's decoder words, for a DeleteOptions field of the wrong JSON type
    (``json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64``)."""
    def refuse(value: Any, field: str, go_type: str) -> None:
        raise errors.bad_request('DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot '
                                 f"unmarshal {_go_json_type(value)} into Go struct field DeleteOptions.{field} of "
                                 f"type {go_type}")

    for key, (types, go_type) in _OPTION_TYPES.items():
        value = options.get(key)
        if value is None:
            continue
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            refuse(value, key, go_type)
        if key == "dryRun" and any(not isinstance(v, str) for v in value):
            refuse(next(v for v in value if not isinstance(v, str)), key, "string")
        if key == "preconditions":
            for name, go in _PRECONDITION_TYPES.items():
                if value.get(name) is not None and not isinstance(value[name], str):
                    refuse(value[name], f"preconditions.{name}", go)


async def _options(scope: RequestScope) -> dict[str, Any]:
    """DeleteOptions from the body, with the query parameters kube also accepts filled in where the body is silent."""
    body = await scope.request.read()
    options = negotiation.decode_body(body, scope.content_type) if body.strip() else {}
    if not isinstance(options, dict):
        raise errors.bad_request("the body of a delete request must be a DeleteOptions object")
    check_option_types(options)
    for key in ("propagationPolicy", "gracePeriodSeconds", "orphanDependents"):
        if key not in options and scope.param(key):
            value = scope.param(key)
            if key == "gracePeriodSeconds":
                try:
                    options[key] = gofmt.parse_int64(value)
                except ValueError as exc:
                    raise errors.bad_request(str(exc)) from None
            else:
                options[key] = value.lower() == "true" if key == "orphanDependents" else value
    deletion.gc_finalizer(options)  # 422 for an unsupported propagationPolicy before anything happens
    if options.get("dryRun"):
        if options["dryRun"] != ["All"]:
            raise errors.bad_request(f"Invalid dry run value: {gofmt.go_value(options['dryRun'])}")
    return options


async def delete(scope: RequestScope) -> web.Response:
    """Delete the object named by the URL (kube's handlers/delete.go and Store.Delete/finalizeDelete).

    Answers, when the object is gone at once, the deleted object for the resources whose registry returns it
    (``Resource.returns_deleted_object``: Pods, Services, ServiceAccounts, StorageClasses, ...) and else
    ``Status`` Success; when finalizers keep it, the object marked with ``metadata.deletionTimestamp``. The
    code is 200, or 202 Accepted for a kept object when DeleteOptions set ``orphanDependents: false`` (kube
    answers 202 only then, not to break older clients). DeleteOptions ``preconditions`` (uid,
    resourceVersion) make it conditional (409 Conflict); 404 if absent.
    """
    options = await _options(scope)
    deleted, pending = await store.delete(scope, scope.info.name, options)
    if pending:
        return scope.respond(deleted, 202 if options.get("orphanDependents") is False else 200)
    if scope.resource.returns_deleted_object:
        return scope.respond(deleted)
    return scope.respond(success_status(scope, deleted))


async def delete_collection(scope: RequestScope) -> web.Response:
    """Delete every object the label/field selectors match; answers the list of deleted objects.

    The query's ListOptions are checked first (422, kube's ValidateListOptions in DeleteCollection).
    """
    listoptions.check_list_options(scope.query, watch=query_bool(scope.query.get("watch")))
    options = await _options(scope)
    request = storage_pb2.ListRequest(key=scope.key(name=""), label_selector=scope.param("labelSelector"),
                                      field_selector=scope.param("fieldSelector"))
    listed: Any = await grpcutil.call("storage", scope.backends.storage.List, request, timeout=scope.timeout)
    items = []
    for raw in listed.items:
        obj = jsonutil.loads(raw)
        meta = obj.get("metadata") or {}
        try:
            items.append((await store.delete(scope, meta.get("name", ""), options))[0])
        except errors.StatusError as err:
            if err.reason != "NotFound":
                raise
    return scope.respond({"kind": scope.resource.list_kind, "apiVersion": scope.resource.group_version,
                          "metadata": {"resourceVersion": str(listed.resource_version)}, "items": items})
