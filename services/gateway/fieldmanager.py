"""Gateway glue for field ownership: record managedFields on every write, and the server-side apply handler.

Every create, update and patch records an ``Update`` entry for its manager
(the ``fieldManager`` query parameter, else the User-Agent up to its first
"/", as kube-apiserver); ``PATCH`` with ``application/apply-patch+yaml``
is server-side apply (kapi.managedfields.apply), creating the object when
it is absent. Source: "Server-Side Apply" and k8s.io/apiserver
pkg/endpoints/handlers/fieldmanager (last-applied annotation sync and the
client-side-apply upgrade path).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from kapi import errors, grpcutil, jsonutil
from kapi import managedfields as mf
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation
from services.gateway import patch as patching
from services.gateway.scope import RequestScope, decode_object

MAX_MANAGER_LENGTH = 128
KUBECTL_SSA_MANAGER = "kubectl"

# Writes without a pinned resourceVersion retry on Conflict like kube's GuaranteedUpdate: until they succeed
# or the request's deadline (the chain's timeout) ends them.
CONFLICT_RETRIES = 1000


def now() -> str:
    """The current time as kube writes managedFields times (RFC 3339, seconds, UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def manager(scope: RequestScope, required: bool = False) -> str:
    """The request's field manager; 400 if longer than 128 characters or absent when ``required`` (apply)."""
    name = scope.param("fieldManager")
    if not name:
        if required:
            raise errors.bad_request("PATCH, application/apply-patch+yaml: fieldManager is required for apply "
                                     "requests")
        name = mf.manager_from_user_agent(scope.request.headers.get("User-Agent", ""))
    if len(name) > MAX_MANAGER_LENGTH:
        raise errors.invalid(scope.resource.kind, scope.info.name, [errors.Cause(
            "FieldValueTooLong", f"Too long: may not be more than {MAX_MANAGER_LENGTH} bytes",
            "fieldManager")], scope.resource.group)
    return name


def types(scope: RequestScope) -> mf.Types:
    """The list/map semantics of the request's kind."""
    r = scope.resource
    return mf.Types(patching.schema_for(r.group, r.version, r.kind), patching._definitions())


def reset_fields(scope: RequestScope) -> tuple[str, ...]:
    """Top-level fields a write to this endpoint cannot own: status on the main resource, spec on /status."""
    if scope.info.subresource == "status":
        return ("spec",)
    if "status" in scope.resource.subresources:
        return ("status",)
    return ()


def track_update(scope: RequestScope, old: bytes | None, new: bytes) -> bytes:
    """``new`` (admitted object JSON) with managedFields updated for this request's Update (unless applying)."""
    if scope.applying:
        return new
    obj = jsonutil.loads(new)
    live = jsonutil.loads(old) if old else None
    subresource = scope.info.subresource if scope.info.subresource in ("status", "scale") else ""
    fields = mf.update(live, obj, manager(scope), scope.resource.group_version, now(), types(scope), subresource,
                       reset_fields(scope))
    meta = obj.setdefault("metadata", {})
    if fields:
        meta["managedFields"] = fields
    else:
        meta.pop("managedFields", None)
    return jsonutil.dumps(obj)


def _force(scope: RequestScope) -> bool:
    value = scope.param("force")
    if value not in ("", "true", "false", "1", "0", "True", "False"):
        raise errors.bad_request(f"Invalid force value: {value}")
    return value in ("true", "1", "True")


def _sync_last_applied(config: dict[str, Any], result: dict[str, Any], live: dict[str, Any] | None,
                       name: str) -> None:
    """kube's lastAppliedUpdater: kubectl's server-side apply keeps an existing last-applied annotation current."""
    annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
    if name != KUBECTL_SSA_MANAGER or mf.LAST_APPLIED not in annotations:
        return
    applied = jsonutil.loads(jsonutil.dumps(config))
    (applied.get("metadata") or {}).get("annotations", {}).pop(mf.LAST_APPLIED, None)
    if (applied.get("metadata") or {}).get("annotations") == {}:
        applied["metadata"].pop("annotations")
    result.setdefault("metadata", {}).setdefault("annotations", {})[mf.LAST_APPLIED] = \
        jsonutil.dumps(applied).decode()


def _apply(scope: RequestScope, live: dict[str, Any] | None, config: dict[str, Any], name: str) -> dict[str, Any]:
    t, force, reset = types(scope), _force(scope), reset_fields(scope)
    version, sub, stamp = scope.resource.group_version, scope.info.subresource, now()
    try:
        result = mf.apply(live, config, name, version, stamp, t, force, sub, reset)
    except errors.StatusError as err:
        # kube's lastAppliedManager: kubectl taking over from client-side apply may claim the fields its
        # last-applied annotation lists, then apply without force.
        last = ((live or {}).get("metadata") or {}).get("annotations", {}).get(mf.LAST_APPLIED)
        if err.reason != "Conflict" or name != KUBECTL_SSA_MANAGER or not last or live is None:
            raise
        try:
            previous = jsonutil.loads(last)
        except ValueError:
            raise err from None
        if not isinstance(previous, dict):
            raise err from None
        previous.setdefault("metadata", {})["name"] = scope.info.name
        upgraded = mf.apply(live, previous, name, version, stamp, t, True, sub, reset)
        result = mf.apply(upgraded, config, name, version, stamp, t, force, sub, reset)
    _sync_last_applied(config, result, live, name)
    return result


async def server_side_apply(scope: RequestScope, body: bytes) -> web.Response:
    """PATCH with ``application/apply-patch+yaml``: apply the configuration, creating the object if absent.

    Errors: 400 without ``fieldManager`` or for a malformed body, 409
    Conflict naming the other managers' fields (kube's message), plus
    everything create and update answer.
    """
    from services.gateway.handlers.update import store_update

    name = manager(scope, required=True)
    if scope.info.subresource:
        raise errors.StatusError(415, "UnsupportedMediaType", f"apply patches are not supported on the "
                                 f"{scope.info.subresource} subresource")
    config = decode_object(negotiation.decode_body(body, negotiation.APPLY_PATCH), scope, name_from_url=False)
    meta = config["metadata"]
    if not meta.get("name"):
        meta["name"] = scope.info.name
    elif meta["name"] != scope.info.name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                 f"({scope.info.name})")
    scope.applying = True
    for attempt in range(CONFLICT_RETRIES):
        try:
            current: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                               storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
        except errors.StatusError as err:
            if err.reason != "NotFound":
                raise
            try:
                return await _create(scope, _apply(scope, None, config, name))
            except errors.StatusError as create_err:
                if create_err.reason != "AlreadyExists" or attempt == CONFLICT_RETRIES - 1:
                    raise
                continue
        live = jsonutil.loads(current.object)
        result = _apply(scope, live, config, name)
        try:
            return await store_update(scope, result, current, current.resource_version)
        except errors.StatusError as err:
            if err.reason != "Conflict" or attempt == CONFLICT_RETRIES - 1 or "Apply failed" in err.message:
                raise
    raise AssertionError("unreachable")


async def _create(scope: RequestScope, obj: dict[str, Any]) -> web.Response:
    dry_run = scope.dry_run()
    admitted, warnings = await scope.backends.admission.admit(
        "CREATE", scope.attrs, scope.resource.kind, jsonutil.dumps(obj), b"", dry_run, scope.field_validation(),
        timeout=scope.timeout)
    scope.warnings.extend(warnings)
    if dry_run:
        return scope.respond(admitted, 201)
    reply: Any = await grpcutil.call("storage", scope.backends.storage.Create, storage_pb2.CreateRequest(
        key=scope.key(), object=admitted), timeout=scope.timeout)
    return scope.respond(reply.object, 201)
