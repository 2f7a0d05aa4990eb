"""PUT: replace an object (k8s.io/apiserver pkg/endpoints/handlers/update.go)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from services.gateway import fieldmanager
from services.gateway.registry import store
from services.gateway.scope import (
    RequestScope,
    check_duplicates,
    decode_request,
    parse_resource_version,
    resource_version_of,
)


async def update(scope: RequestScope) -> web.Response:
    """Replace the object named by the URL (also ``/status``, ``/approval``, ``/finalize``).

    With ``metadata.resourceVersion`` in the body the write is conditional
    (409 Conflict if stale); without it the update is unconditional and
    retried on races (store.guaranteed_update). 404 if the object does not exist.
    """
    body = await scope.request.read()
    fieldmanager.check_write_options(scope)  # the options first, as kube's handler (422 <Verb>Options)
    obj = decode_request(scope, body, name_from_url=True)
    check_duplicates(scope, body, obj)
    parse_resource_version(resource_version_of(scope, obj))  # 400 for a malformed one before anything is read

    async def replace(live: dict[str, Any] | None) -> dict[str, Any]:
        return dict(obj)

    stored, _ = await store.guaranteed_update(scope, replace)
    return scope.respond(stored)
