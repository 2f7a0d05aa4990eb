"""PATCH of one object (k8s.io/apiserver pkg/endpoints/handlers/patch.go).

JSON patch, merge patch and strategic merge patch are applied by the
gateway (services/gateway/patch.py) to the object read inside the write
path's guaranteed update, so a Conflict re-reads and re-applies the patch;
``application/apply-patch+yaml`` is server-side apply (handlers/apply.py).
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from kapi import errors, gofmt, limits
from kapi.resources import REGISTRY, Resource
from services.gateway import fieldmanager, negotiation, smptypes
from services.gateway import patch as patching
from services.gateway.handlers.apply import server_side_apply
from services.gateway.registry import store
from services.gateway.scope import (
    TYPE_META_STRUCT,
    RequestScope,
    check_name,
    dry_run_causes,
    field_validation_causes,
    go_json_type,
    invalid_options,
)


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
        if patch is None or not isinstance(patch, (dict, list)):
            raise errors.bad_request("Invalid JSON Patch")  # json-patch's MergePatch: ErrBadJSONPatch
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
        # the patched JSON then fails to decode (the serializer's Interpret): jsonPatcher's 422 `patch: Invalid value`
        value = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
        raise errors.invalid_patch(value, "couldn't get version/kind; json parse error: json: cannot unmarshal "
                                   f"{go_json_type(result)} into Go value of type {TYPE_META_STRUCT}")
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


# ValidateFieldValidation's choices, as sets.NewString(...).List() sorts them.
def validate_patch_options(scope: RequestScope, content_type: str) -> None:
    """ValidatePatchOptions on the query's PatchOptions, as PatchResource runs it once the body is read and
    before the patch is decoded; 422 ``PatchOptions.meta.k8s.io "" is invalid: ...`` with, in kube's order:

    - not an apply (``application/apply-patch+yaml``) and ``force`` present, whatever its value: ``force:
      Forbidden: may not be specified for non-apply patch``;
    - an apply without ``fieldManager``: ``fieldManager: Required value: is required for apply patch``;
    - ValidateFieldManager (:func:`fieldmanager.field_manager_causes`), ValidateDryRun
      (:func:`scope.dry_run_causes`), ValidateFieldValidation (``fieldValidation: Unsupported value: "x":
      supported values: "", "Ignore", "Strict", "Warn"``).

    Source: ``apimachinery/pkg/apis/meta/v1/validation/validation.go``, ``apiserver/.../handlers/patch.go``."""
    causes = []
    name = scope.param("fieldManager")
    if content_type != negotiation.APPLY_PATCH:
        if "force" in scope.query:
            causes.append(errors.Cause("FieldValueForbidden", "Forbidden: may not be specified for non-apply patch",
                                       "force"))
    elif not name:
        causes.append(fieldmanager.APPLY_MANAGER_REQUIRED)
    causes += fieldmanager.field_manager_causes(name)
    causes += dry_run_causes(scope.query.getall("dryRun", []))
    causes += field_validation_causes(scope.param("fieldValidation"))
    if causes:
        raise invalid_options("patch", causes)


def check_identity(scope: RequestScope, result: dict[str, Any]) -> None:
    """What kube's patcher.applyPatch does with the patched object's name and namespace, in place on ``result``
    (a JSON, merge or strategic merge patch's result):

    - EnsureObjectNamespaceMatchesRequestNamespace with the request's namespace (none for a cluster-scoped
      resource and for Namespaces themselves, ExpectedNamespaceForResource): the same is kept, none becomes the
      request's, a cluster-scoped object's is dropped, another is 400 ``the namespace of the provided object
      does not match the namespace sent on the request``;
    - checkName (:func:`services.gateway.scope.check_name`): 400 ``the name of the object (p9) does not match
      the name on the URL (p4)``, an emptied or removed name ``the name of the object (p4 based on URL) was
      undeterminable: name must be provided``.

    Sources: ``apiserver/pkg/endpoints/handlers/patch.go`` applyPatch, ``handlers/rest.go`` checkName,
    ``apiserver/pkg/registry/rest/create.go`` EnsureObjectNamespaceMatchesRequestNamespace."""
    meta = result["metadata"]
    r = scope.resource
    expected = scope.info.namespace if r.namespaced and not (r.group == "" and r.resource == "namespaces") else ""
    given = meta.get("namespace") or ""
    if given != expected:
        if not given:
            meta["namespace"] = expected
        elif not expected:
            meta.pop("namespace", None)
        else:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
    check_name(scope, meta.get("name") or "")


async def patch(scope: RequestScope) -> web.Response:
    """Patch the object named by the URL; 404 if absent, 409 if a pinned resourceVersion is stale.

    The PatchOptions are checked once the body is read (:func:`validate_patch_options`, 422), the patched
    object's name and namespace after each patch (:func:`check_identity`, 400)."""
    body = await read_patch(scope)
    content_type = scope.content_type
    validate_patch_options(scope, content_type)
    if content_type == negotiation.APPLY_PATCH:
        return await server_side_apply(scope, body)
    patch_doc = negotiation.decode_body(body, content_type)
    scope.patch_type = content_type  # admission's 422 `patch: Invalid value` for a patched object that won't decode
    if content_type == negotiation.STRATEGIC_MERGE_PATCH:
        scope.patch_value = gofmt.go_json_v(patch_doc)

    async def patched(live: dict[str, Any] | None) -> dict[str, Any]:
        assert live is not None
        result = apply(content_type, live, patch_doc, scope)
        if result.get("metadata") is None:  # removed or null: an object without a name (checkName's 400)
            result["metadata"] = {}
        if not isinstance(result.get("metadata"), dict):
            raise errors.bad_request("metadata must be an object")
        check_identity(scope, result)
        return result

    stored, _ = await store.guaranteed_update(scope, patched)
    return scope.respond(stored)
