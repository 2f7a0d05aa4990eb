"""POST: create an object (k8s.io/apiserver pkg/endpoints/handlers/create.go)."""

from __future__ import annotations

from aiohttp import web

from services.gateway import fieldmanager
from services.gateway.registry import store
from services.gateway.scope import RequestScope, check_duplicates, decode_request


async def create(scope: RequestScope) -> web.Response:
    """Decode the body and create it through the write path (registry/store.py); 201 with the stored object.

    Errors: 400 for a malformed or mismatched body, 409 AlreadyExists, 404
    for a missing namespace, 422 Invalid, 403 from admission or a hook.
    """
    body = await scope.request.read()
    fieldmanager.check_write_options(scope)  # the options first, as kube's handler (422 <Verb>Options)
    obj = decode_request(scope, body, name_from_url=False)
    check_duplicates(scope, body, obj)
    return scope.respond(await store.create(scope, obj), 201)
