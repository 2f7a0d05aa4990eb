"""PUT: replace an object (k8s.io/apiserver pkg/endpoints/handlers/update.go)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import allocator, fieldmanager, negotiation, signers
from services.gateway.reviews.authorization import check_rbac_escalation
from services.gateway.scope import (
    RequestScope,
    check_duplicates,
    decode_object,
    parse_resource_version,
    resource_version_of,
)

# An update without a resourceVersion retries on Conflict until the request's deadline (kube's GuaranteedUpdate).
UNCONDITIONAL_RETRIES = 1000


async def store_update(scope: RequestScope, obj: dict[str, Any], current: Any, expected_rv: int) -> web.Response:
    """Admit ``obj`` as an UPDATE of ``current`` (a storage ObjectResponse) and write it if unchanged since.

    ``expected_rv`` is the revision the write is conditioned on; storage
    answers 409 Conflict when the object moved on. Shared by update and patch.
    """
    dry_run = scope.dry_run()
    await check_rbac_escalation(scope, obj, current.object)
    await signers.check_signer(scope, obj, current.object)  # CertificateApproval / CertificateSigning
    admitted, warnings = await scope.backends.admission.admit(
        "UPDATE", scope.attrs, scope.resource.kind, jsonutil.dumps(obj), current.object, dry_run,
        scope.field_validation(), timeout=scope.timeout)
    scope.warnings.extend(warnings)
    admitted = fieldmanager.track_update(scope, current.object, admitted)
    if dry_run:
        return scope.respond(admitted)
    reply = await allocator.store_update(scope, admitted, current, expected_rv)
    return scope.respond(reply.object)  # type: ignore[attr-defined]


async def update(scope: RequestScope) -> web.Response:
    """Replace the object named by the URL.

    With ``metadata.resourceVersion`` in the body the write is conditional
    (409 Conflict if stale); without it the update is unconditional and
    retried on races. 404 if the object does not exist.
    """
    body = await scope.request.read()
    obj = decode_object(negotiation.decode_body(body, scope.content_type), scope, name_from_url=True)
    check_duplicates(scope, body)
    wanted = parse_resource_version(resource_version_of(scope, obj))
    for attempt in range(UNCONDITIONAL_RETRIES):
        current: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                           storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
        try:
            return await store_update(scope, dict(obj), current, wanted or current.resource_version)
        except errors.StatusError as err:
            if err.reason != "Conflict" or wanted or attempt == UNCONDITIONAL_RETRIES - 1:
                raise
    raise AssertionError("unreachable")
