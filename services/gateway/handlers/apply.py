"""Server-side apply: ``PATCH`` with ``application/apply-patch+yaml`` (kube's patch.go applyPatcher).

The configuration is applied to the object read inside the write path's
guaranteed update (services/gateway/fieldmanager.py computes the result and
its managedFields), and the object is created through the same write path
when it does not exist — so an apply runs exactly the admission and hooks
that POST and PUT run (RBAC escalation prevention, Service IP allocation,
...), dry run or not. Source: "Server-Side Apply".
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors
from services.gateway import fieldmanager, negotiation
from services.gateway.registry import store
from services.gateway.scope import RequestScope, decode_object, resource_version_of


def object_type(sent: Any) -> tuple[str, str, str]:
    """The (group, version, kind) of an apply body as kube's unstructured object reads it.

    A missing or non-string ``apiVersion``/``kind`` is ``""``; an ``apiVersion`` that is not ``version`` or
    ``group/version`` (more than one ``/``) gives an empty GroupVersionKind, kind included
    (``Unstructured.GroupVersionKind`` on a ``ParseGroupVersion`` error). A body that is null or empty is an
    empty object.
    """
    data: dict[str, Any] = sent if isinstance(sent, dict) else {}
    raw_version, raw_kind = data.get("apiVersion"), data.get("kind")
    api_version = raw_version if isinstance(raw_version, str) else ""
    kind = raw_kind if isinstance(raw_kind, str) else ""
    if api_version in ("", "/"):
        return "", "", kind
    if api_version.count("/") > 1:
        return "", "", ""
    group, _, version = api_version.rpartition("/")
    return group, version, kind


def check_object_type(got: tuple[str, str, str], scope: RequestScope) -> None:
    """400 ``invalid object type: <group>/<version>, Kind=<kind>`` unless ``got`` (:func:`object_type` of the
    body) is the endpoint's group, version and kind.

    kube's versionCheckManager (the outermost field manager) compares the applied object's GroupVersionKind with
    the request's before anything else looks at the configuration, so a body without ``apiVersion`` or ``kind``
    (``/, Kind=``), of another kind, version or group is refused in Go's ``schema.GroupVersionKind`` words.
    """
    if got != (scope.resource.group, scope.resource.version, scope.resource.kind):
        raise errors.bad_request(f"invalid object type: {got[0]}/{got[1]}, Kind={got[2]}")


async def server_side_apply(scope: RequestScope, body: bytes) -> web.Response:
    """Apply the configuration in ``body``; 201 with the object when it was created, else 200.

    On the ``status`` subresource the configuration's status is applied to
    the existing object (managedFields entries with ``subresource:
    status``); 404 when it does not exist. Errors: 400 without
    ``fieldManager``, for a malformed body, a body of another GroupVersionKind
    (``invalid object type: /, Kind=``, :func:`check_object_type`), a name that differs from the
    URL's or a configuration with ``metadata.managedFields`` ("metadata.managedFields
    must be nil", kube's FieldManager.Apply), 415 on other subresources, 409 Conflict
    naming the other managers' fields (kube's message), for a configuration's
    ``metadata.resourceVersion`` the object has moved past ("the object has been
    modified; ...": kube merges it into the object, so the store's precondition
    applies) or for one with a ``metadata.uid`` when the object does not exist ("uid mismatch: ..."),
    plus everything create and update answer; a configuration that does not fit its type is kube's plain 500
    ``failed to create typed patch object (...)`` (:func:`fieldmanager.check_declared`). An apply that changes
    nothing writes nothing.
    """
    name = fieldmanager.manager(scope, required=True)
    subresource = scope.info.subresource
    if subresource not in ("", "status"):
        raise errors.StatusError(415, "UnsupportedMediaType", f"apply patches are not supported on the "
                                 f"{subresource} subresource")
    sent = negotiation.decode_body(body, negotiation.APPLY_PATCH)
    sent_type = object_type(sent)
    if not subresource:
        check_object_type(sent_type, scope)
    if isinstance(sent, dict):  # checked here or (on /status) once the object is found; "/v1" is the core "v1"
        sent["apiVersion"], sent["kind"] = scope.resource.group_version, scope.resource.kind
    sent_meta = sent.get("metadata") if isinstance(sent, dict) else None
    sent_namespace = str(sent_meta.get("namespace") or "") if isinstance(sent_meta, dict) else ""
    config = decode_object(sent, scope, name_from_url=False, body=body)
    meta = config["metadata"]
    if not meta.get("name"):
        meta["name"] = scope.info.name
    if meta.get("managedFields") is not None:
        # kube's FieldManager.Apply (structuredmerge.go): checked before any conflict
        raise errors.bad_request("metadata.managedFields must be nil")
    fieldmanager.check_declared(scope, config, sent_namespace)
    pinned = resource_version_of(scope, config)
    scope.applying = True

    async def applied(live: dict[str, Any] | None) -> dict[str, Any]:
        if subresource:  # kube's /status store answers NotFound before it runs the patcher
            check_object_type(sent_type, scope)
        result = fieldmanager.apply(scope, live, config, name)
        # kube's patcher.applyPatch, after the field manager: a uid names an object that must exist, then the name
        uid = (result.get("metadata") or {}).get("uid")
        if uid and live is None:
            raise errors.conflict(scope.resource.resource, scope.info.name, f"uid mismatch: the provided object "
                                  f"specified uid {uid}, and no existing object was found", scope.resource.group)
        if meta["name"] != scope.info.name:
            raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                     f"({scope.info.name})")
        if pinned and live is not None:
            # The configuration's resourceVersion is merged into the object like any field, so the store's
            # optimistic-concurrency check refuses a stale one (409 "the object has been modified; ...").
            result.setdefault("metadata", {})["resourceVersion"] = pinned
        return result

    # An apply to /status (kubectl apply --server-side --subresource=status) updates an existing object only.
    stored, created = await store.guaranteed_update(scope, applied, create_missing=not subresource)
    return scope.respond(stored, 201 if created else 200)
