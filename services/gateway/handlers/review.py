"""POST to a create-only API that is computed and never stored (the *Review kinds).

The decoded body is checked like any create (apiVersion/kind, field types, unknown fields dropped), then handed
to the handler registered in services/gateway/reviews/; its answer is the
same object with ``status`` filled, as kube-apiserver returns it (201), its keys in Go struct order (kube encodes
the typed object: kapi.k8sproto.goorder).
"""

from __future__ import annotations

from aiohttp import web

from kapi import errors, schema
from services.gateway import reviews
from services.gateway.scope import RequestScope, decode_request


async def review(scope: RequestScope) -> web.Response:
    """Answer a POST to a ``stored=False`` resource; 404 if no handler is registered, 405 for other verbs."""
    reviews.load()
    resource = scope.resource
    handler = reviews.REVIEWS.get((resource.group, resource.resource))
    if handler is None:
        raise errors.StatusError(404, "NotFound", "the server could not find the requested resource")
    if scope.info.verb != "create":
        raise errors.no_route()
    body = await scope.request.read()
    obj = decode_request(scope, body, name_from_url=False)
    if schema.has_schema(resource.group, resource.version, resource.kind):
        # kube decodes into the typed struct: wrong types are a 400, unknown fields are dropped (never echoed
        # back), refused under fieldValidation=Strict and warned about otherwise.
        checked = schema.validate(obj, resource.group, resource.version, resource.kind)
        type_errors = [c for c in checked.causes if c.type == "FieldValueTypeInvalid"]
        if type_errors:
            raise schema.decode_error(resource.kind, resource.version, type_errors[0])
        scope.warnings.extend(schema.apply_field_validation(
            checked.unknown, scope.field_validation(), kind=resource.kind, version=resource.version))
    answer, status = await handler(scope, obj)
    return scope.respond(answer, status, composed=True)
