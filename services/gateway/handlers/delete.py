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


def check_options(options: dict[str, Any]) -> None:
    """A decoded DeleteOptions as kube checks it before deleting anything: 400 for a field of the wrong JSON type
    (:func:`check_option_types`), then 422 for options ValidateDeleteOptions refuses
    (:func:`deletion.validate_delete_options`: ``orphanDependents`` with ``propagationPolicy``, an unknown policy,
    a ``dryRun`` other than ``All``)."""
    check_option_types(options)
    deletion.validate_delete_options(options)


def _query_bool(value: str) -> bool:
    """A bool query parameter as kube's parameter codec reads it (Convert_Slice_string_To_bool): false only for
    ``0`` and ``false`` in any case, true for anything else (the empty string too)."""
    return value != "0" and value.lower() != "false"


# The DeleteOptions fields kube's parameter codec reads from the query (their ``json`` names).
_QUERY_OPTIONS = ("gracePeriodSeconds", "orphanDependents", "propagationPolicy", "dryRun",
                  "ignoreStoreReadErrorWithClusterBreakingPotential")


def options_from_query(scope: RequestScope) -> dict[str, Any]:
    """DeleteOptions from the query, as kube's DecodeParameters fills them when the request has no body: a
    parameter present (even empty) sets its field; ``gracePeriodSeconds`` parses as an int64 (400 with
    strconv's text), bools as :func:`_query_bool`, ``dryRun`` takes every value."""
    options: dict[str, Any] = {}
    for key in _QUERY_OPTIONS:
        if key not in scope.query:
            continue
        value = scope.param(key)
        if key == "gracePeriodSeconds":
            try:
                options[key] = gofmt.parse_int64(value)
            except ValueError as exc:
                raise errors.bad_request(str(exc)) from None
        elif key == "dryRun":
            options[key] = scope.query.getall(key)
        elif key == "propagationPolicy":
            options[key] = value
        else:
            options[key] = _query_bool(value)
    return options


async def _options(scope: RequestScope) -> dict[str, Any]:
    """DeleteOptions from the body, else (no body) from the query, as kube's delete handlers read them: a body
    makes the query's options ignored. Checked by :func:`check_options` before anything is deleted
    (handlers/delete.go DeleteResource/DeleteCollection: ValidateDeleteOptions, 422)."""
    body = await scope.request.read()
    if not body.strip():
        options = options_from_query(scope)
    else:
        options = negotiation.decode_body(body, scope.content_type)
        if not isinstance(options, dict):
            raise errors.bad_request("the body of a delete request must be a DeleteOptions object")
    check_options(options)
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
                                      field_selector=scope.field_selector())
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
