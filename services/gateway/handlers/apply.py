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
from services.gateway.scope import RequestScope, decode_object


async def server_side_apply(scope: RequestScope, body: bytes) -> web.Response:
    """Apply the configuration in ``body``; 201 with the object when it was created, else 200.

    On the ``status`` subresource the configuration's status is applied to
    the existing object (managedFields entries with ``subresource:
    status``); 404 when it does not exist. Errors: 400 without
    ``fieldManager`` or for a malformed body or a name that differs from the
    URL's, 415 on other subresources, 409 Conflict naming
    the other managers' fields (kube's message), plus everything create and
    update answer.
    """
    name = fieldmanager.manager(scope, required=True)
    subresource = scope.info.subresource
    if subresource not in ("", "status"):
        raise errors.StatusError(415, "UnsupportedMediaType", f"apply patches are not supported on the "
                                 f"{subresource} subresource")
    config = decode_object(negotiation.decode_body(body, negotiation.APPLY_PATCH), scope, name_from_url=False,
                           body=body)
    meta = config["metadata"]
    if not meta.get("name"):
        meta["name"] = scope.info.name
    elif meta["name"] != scope.info.name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                 f"({scope.info.name})")
    scope.applying = True

    async def applied(live: dict[str, Any] | None) -> dict[str, Any]:
        return fieldmanager.apply(scope, live, config, name)

    # An apply to /status (kubectl apply --server-side --subresource=status) updates an existing object only.
    stored, created = await store.guaranteed_update(scope, applied, create_missing=not subresource)
    return scope.respond(stored, 201 if created else 200)
