"""PATCH of one object (k8s.io/apiserver pkg/endpoints/handlers/patch.go).

JSON patch, merge patch and strategic merge patch are applied by the
gateway (services/gateway/patch.py) to the object read inside the write
path's guaranteed update, so a Conflict re-reads and re-applies the patch;
``application/apply-patch+yaml`` is server-side apply (handlers/apply.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors, gofmt, limits
from kapi.resources import REGISTRY, Resource
from services.gateway import negotiation, smptypes
from services.gateway import patch as patching
from services.gateway.handlers.apply import server_side_apply
from services.gateway.registry import store
from services.gateway.scope import RequestScope


def apply(content_type: str, current: dict[str, Any], patch: Any, scope: RequestScope,
          merge_schema: bool = True) -> dict[str, Any]:
    """Apply a decoded ``patch`` of ``content_type`` to ``current``; 415 for unsupported patch types.

    ``merge_schema`` False applies strategic merge patches without the
    resource's schema (for subresource views such as Scale).

    A strategic merge patch's result is then converted into the kind's Go
    struct as kube's applyPatchToObject does (services/gateway/smptypes.py):
    a value of the wrong type there is kube's 422 ``patch: Invalid value:
    "<patch>": <converter error>``. Not for JSON or merge patches (kube
    decodes their result, another error) nor kinds without a Go struct
    (custom resources, the Scale view).
    """
    if content_type == negotiation.MERGE_PATCH:
        result = patching.merge_patch(current, patch)
    elif content_type == negotiation.JSON_PATCH:
        result = patching.json_patch(current, patch)
    elif content_type == negotiation.STRATEGIC_MERGE_PATCH:
        r = scope.resource
        schema = patching.schema_for(r.group, r.version, r.kind) if merge_schema else {}
        result = patching.strategic_merge_patch(current, patch, schema)
        if merge_schema and r is not None and isinstance(result, dict):
            smptypes.check_patched(result, patch, current, r.group, r.version, r.kind)
    else:
        raise errors.StatusError(415, "UnsupportedMediaType", f"the server does not support the patch type "
                                 f"{content_type!r} for {r.resource if (r := scope.resource) else ''}")
    if not isinstance(result, dict):
        raise errors.bad_request("the patch did not produce an object")
    return result


# The patch types of kube's PATCH routes, in its order: the API installer's for built-in resources, the
# apiextensions crdHandler's (no strategic merge patch) for custom resources.
BUILTIN_PATCH_TYPES = (negotiation.JSON_PATCH, negotiation.MERGE_PATCH, negotiation.STRATEGIC_MERGE_PATCH,
                       negotiation.APPLY_PATCH)
CUSTOM_PATCH_TYPES = (negotiation.JSON_PATCH, negotiation.MERGE_PATCH, negotiation.APPLY_PATCH)


def check_patch_type(header: str, resource: Resource) -> None:
    """415 UnsupportedMediaType unless the PATCH's ``Content-Type`` header is one of ``resource``'s patch types.

    As kube's PatchResource, the header is cut at its first ``;`` (one at the start is kept) and compared as
    written, without trimming or case folding (``Application/Merge-Patch+JSON`` is 415): ``the body of the
    request was in an unknown format - accepted media types include: <the route's patch types>``. PatchResource
    checks this first, before it negotiates the response (406) or reads the body (413), so routes.py calls it
    ahead of :func:`negotiation.negotiate` for a PATCH (handlers/patch.go)."""
    cut = header.find(";")
    supported = BUILTIN_PATCH_TYPES if REGISTRY.is_static(resource) else CUSTOM_PATCH_TYPES
    if (header[:cut] if cut > 0 else header) not in supported:
        raise errors.StatusError(415, "UnsupportedMediaType",
                                 f"the body of the request was in an unknown format - accepted media types include: "
                                 f"{', '.join(supported)}")


async def read_patch(scope: RequestScope) -> bytes:
    """The body of a PATCH: 415 for a media type that is no patch type of the resource
    (:func:`check_patch_type`), 413 when too large."""
    check_patch_type(scope.request.headers.get("Content-Type", ""), scope.resource)
    body = await scope.request.read()
    if len(body) > limits.MAX_BODY_BYTES:
        raise errors.too_large()
    return body


async def patch(scope: RequestScope) -> web.Response:
    """Patch the object named by the URL; 404 if absent, 409 if a pinned resourceVersion is stale."""
    body = await read_patch(scope)
    content_type = scope.content_type
    if content_type == negotiation.APPLY_PATCH:
        return await server_side_apply(scope, body)
    patch_doc = negotiation.decode_body(body, content_type)
    scope.patch_type = content_type  # admission's 422 `patch: Invalid value` for a patched object that won't decode
    if content_type == negotiation.STRATEGIC_MERGE_PATCH:
        scope.patch_value = gofmt.go_json_v(patch_doc)

    async def patched(live: dict[str, Any] | None) -> dict[str, Any]:
        assert live is not None
        result = apply(content_type, live, patch_doc, scope)
        if not isinstance(result.get("metadata"), dict):
            raise errors.bad_request("metadata must be an object")
        return result

    stored, _ = await store.guaranteed_update(scope, patched)
    return scope.respond(stored)
