"""PATCH of one object (k8s.io/apiserver pkg/endpoints/handlers/patch.go).

The gateway reads the current object, applies the patch (services/gateway/patch.py),
and writes the result conditioned on the revision it read; on a Conflict it
retries with a fresh read, unless the patch itself pinned a resourceVersion.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import fieldmanager, negotiation
from services.gateway import patch as patching
from services.gateway.handlers.update import store_update
from services.gateway.scope import RequestScope, parse_resource_version, resource_version_of

# Like kube's GuaranteedUpdate, a patch retries on Conflict until it succeeds or the request's deadline ends it.
RETRIES = 1000


def apply(content_type: str, current: dict[str, Any], patch: Any, scope: RequestScope,
          merge_schema: bool = True) -> dict[str, Any]:
    """Apply a decoded ``patch`` of ``content_type`` to ``current``; 415 for unsupported patch types.

    ``merge_schema`` False applies strategic merge patches without the
    resource's schema (for subresource views such as Scale).
    """
    if content_type == negotiation.MERGE_PATCH:
        result = patching.merge_patch(current, patch)
    elif content_type == negotiation.JSON_PATCH:
        result = patching.json_patch(current, patch)
    elif content_type == negotiation.STRATEGIC_MERGE_PATCH:
        r = scope.resource
        schema = patching.schema_for(r.group, r.version, r.kind) if merge_schema else {}
        result = patching.strategic_merge_patch(current, patch, schema)
    else:
        raise errors.StatusError(415, "UnsupportedMediaType", f"the server does not support the patch type "
                                 f"{content_type!r} for {r.resource if (r := scope.resource) else ''}")
    if not isinstance(result, dict):
        raise errors.bad_request("the patch did not produce an object")
    return result


async def patch(scope: RequestScope) -> web.Response:
    """Patch the object named by the URL; 404 if absent, 409 if a pinned resourceVersion is stale."""
    content_type = scope.content_type
    if content_type not in negotiation.PATCH_TYPES:
        raise errors.StatusError(415, "UnsupportedMediaType",
                                 f"the body of the request was in an unknown format - accepted media types include: "
                                 f"{', '.join(negotiation.PATCH_TYPES[:3])}")
    body = await scope.request.read()
    if len(body) > negotiation.MAX_BODY_BYTES:
        raise errors.too_large()
    if content_type == negotiation.APPLY_PATCH:
        return await fieldmanager.server_side_apply(scope, body)
    patch_doc = negotiation.decode_body(body, content_type)
    for attempt in range(RETRIES):
        current: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                           storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
        original = jsonutil.loads(current.object)
        result = apply(content_type, original, patch_doc, scope)
        meta = result.get("metadata")
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata must be an object")
        pinned = resource_version_of(scope, result)
        if pinned and parse_resource_version(pinned) != current.resource_version:
            raise errors.conflict(scope.resource.resource, scope.info.name, "the object has been modified; please "
                                  "apply your changes to the latest version and try again", scope.resource.group)
        original_pinned = str((original.get("metadata") or {}).get("resourceVersion") or "")
        user_pinned = pinned and pinned != original_pinned
        try:
            return await store_update(scope, result, current, current.resource_version)
        except errors.StatusError as err:
            if err.reason != "Conflict" or user_pinned or attempt == RETRIES - 1:
                raise
    raise AssertionError("unreachable")
