"""POST: create an object (k8s.io/apiserver pkg/endpoints/handlers/create.go)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors, jsonutil
from services.gateway import allocator, fieldmanager, negotiation
from services.gateway.reviews.authorization import check_rbac_escalation
from services.gateway.scope import RequestScope, check_duplicates, decode_object


async def create(scope: RequestScope) -> web.Response:
    """Decode, admit (mutate, default, validate), and store a new object; 201 with the stored object.

    Errors: 400 for a malformed or mismatched body, 409 AlreadyExists, 404
    for a missing namespace, 422 Invalid, 403 from admission.
    """
    body = await scope.request.read()
    obj = decode_object(negotiation.decode_body(body, scope.content_type), scope, name_from_url=False)
    check_duplicates(scope, body)
    dry_run = scope.dry_run()
    await check_rbac_escalation(scope, obj)
    admitted, warnings = await scope.backends.admission.admit(
        "CREATE", scope.attrs, scope.resource.kind, jsonutil.dumps(obj), b"", dry_run, scope.field_validation(),
        timeout=scope.timeout)
    scope.warnings.extend(warnings)
    admitted = fieldmanager.track_update(scope, None, admitted)
    final: dict[str, Any] = jsonutil.loads(admitted)
    name = (final.get("metadata") or {}).get("name") or ""
    if not name:
        raise errors.invalid(scope.resource.kind, "", [errors.Cause(
            "FieldValueRequired", "Required value: name or generateName is required", "metadata.name")],
            scope.resource.group)
    if dry_run:
        return scope.respond(final, 201)
    reply = await allocator.store_create(scope, name, admitted)
    return scope.respond(reply.object, 201)  # type: ignore[attr-defined]
