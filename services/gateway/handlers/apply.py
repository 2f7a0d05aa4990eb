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


async def server_side_apply(scope: RequestScope, body: bytes) -> web.Response:
    """Apply the configuration in ``body``; 201 with the object when it was created, else 200.

    On the ``status`` subresource the configuration's status is applied to
    the existing object (managedFields entries with ``subresource:
    status``); 404 when it does not exist. Errors: 400 without
    ``fieldManager``, for a malformed body, a name that differs from the
    URL's or a configuration with ``metadata.managedFields`` ("metadata.managedFields
    must be nil", kube's FieldManager.Apply), 415 on other subresources, 409 Conflict
    naming the other managers' fields (kube's message) or for a configuration's
    ``metadata.resourceVersion`` the object has moved past ("the object has been
    modified; ...": kube merges it into the object, so the store's precondition
    applies), plus everything create and update answer.
    """
    name = fieldmanager.manager(scope, required=True)
    subresource = scope.info.subresource
    if subresource not in ("", "status"):
        raise errors.StatusError(415, "UnsupportedMediaType", f"apply patches are not supported on the "
                                 f"{subresource} subresource")
    sent = negotiation.decode_body(body, negotiation.APPLY_PATCH)
    sent_meta = sent.get("metadata") if isinstance(sent, dict) else None
    sent_namespace = str(sent_meta.get("namespace") or "") if isinstance(sent_meta, dict) else ""
    config = decode_object(sent, scope, name_from_url=False, body=body)
    meta = config["metadata"]
    if not meta.get("name"):
        meta["name"] = scope.info.name
    elif meta["name"] != scope.info.name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                 f"({scope.info.name})")
    if meta.get("managedFields") is not None:
        # kube's FieldManager.Apply (structuredmerge.go): checked before any conflict
        raise errors.bad_request("metadata.managedFields must be nil")
    fieldmanager.check_declared(scope, config, sent_namespace)
    pinned = resource_version_of(scope, config)
    scope.applying = True

    async def applied(live: dict[str, Any] | None) -> dict[str, Any]:
        result = fieldmanager.apply(scope, live, config, name)
        if pinned and live is not None:
            # The configuration's resourceVersion is merged into the object like any field, so the store's
            # optimistic-concurrency check refuses a stale one (409 "the object has been modified; ...").
            result.setdefault("metadata", {})["resourceVersion"] = pinned
        return result

    # An apply to /status (kubectl apply --server-side --subresource=status) updates an existing object only.
    stored, created = await store.guaranteed_update(scope, applied, create_missing=not subresource)
    return scope.respond(stored, 201 if created else 200)
