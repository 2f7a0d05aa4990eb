"""What runs once the filters let a request through: the REST handlers, discovery, OpenAPI and the rest.

:func:`routes` is the innermost handler of the chain (services/gateway/chain.py):
remote APIServices (aggregation.py), the service-account issuer documents,
the APF debug dumps, ``/metrics``, discovery and OpenAPI documents,
``/version``, and resource requests, routed to one verb handler each
(services/gateway/handlers/) or to a subresource handler
(services/gateway/reviews/). Writes inside the handlers go through the one
write path, services/gateway/registry/store.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from kapi import errors, jsonutil, k8sproto
from kapi.attributes import Attributes
from kapi.resources import REGISTRY, Resource
from services.gateway import (
    componentstatus,
    conversion,
    debug,
    discovery,
    issuerdiscovery,
    metrics,
    negotiation,
    openapi,
    reviews,
    rootindex,
)
from services.gateway.backends import Backends
from services.gateway.context import CONTEXT, Handler, context
from services.gateway.handlers.create import create
from services.gateway.handlers.delete import delete, delete_collection
from services.gateway.handlers.get import get
from services.gateway.handlers.list import list_
from services.gateway.handlers.patch import BUILTIN_PATCH_TYPES, check_patch_type, patch
from services.gateway.handlers.review import review
from services.gateway.handlers.scale import scale
from services.gateway.handlers.update import update
from services.gateway.handlers.watch import watch
from services.gateway.requestinfo import RequestInfo
from services.gateway.scope import RequestScope

ScopeHandler = Callable[[RequestScope], Awaitable[web.StreamResponse]]
VERB_HANDLERS: dict[str, ScopeHandler] = {
    "get": get, "list": list_, "create": create, "update": update, "patch": patch, "delete": delete,
    "deletecollection": delete_collection, "watch": watch,
}

# kube 1.33+ (KEP-4974, "Deprecate v1.Endpoints"): the warning of every v1 Endpoints request
ENDPOINTS_DEPRECATED = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"


def not_found_path() -> errors.StatusError:
    """kube's 404 for a path nothing serves: go-restful's ServiceError as NewGenericServerResponse(404), whose
    Status carries an empty ``details: {}`` (kubectl reads it: ``kubectl debug`` dereferences the details of a
    404 from a subresource it probes)."""
    return errors.StatusError(404, "NotFound", "the server could not find the requested resource", empty_details=True)


def routes(backends: Backends) -> Handler:
    """The innermost handler: answers an authenticated, seated and authorized request."""

    async def serve(request: web.Request) -> web.StreamResponse:
        ctx = context(request)
        info, attrs, timeout = ctx.info, ctx.attrs, ctx.timeout
        assert info is not None and attrs is not None and ctx.user is not None
        if backends.aggregator is not None:  # remote APIServices and merged /apis discovery (aggregation.py)
            aggregated = await backends.aggregator.serve(request, info.path, ctx.user, timeout)
            if aggregated is not None:
                return aggregated
        if not info.is_resource_request:
            if issuerdiscovery.handles(info.path):
                return await issuerdiscovery.respond(info.path, backends, timeout)
            if debug.handles(info.path):
                return await debug.respond(info.path, request.query, backends, timeout)
            if info.path.rstrip("/") == "/metrics":
                return await metrics.response(backends.flowcontrol)
            if info.path == "/":
                return rootindex.response(backends)
            return non_resource(request, info)
        return await resource_request(request, info, attrs, backends, timeout)

    return serve


def non_resource(request: web.Request, info: RequestInfo) -> web.Response:
    """Discovery documents, /version; 404 Status for anything else."""
    path = info.path.rstrip("/") or "/"
    accept = request.headers.get("Accept", "")
    parts = [p for p in path.split("/") if p]
    body: dict[str, Any] | None = None
    content_type = negotiation.JSON
    if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
        response = openapi.v3_response(parts[2:], request.query.get("hash", ""), request.headers)
        if response is None:
            raise not_found_path()
        return response
    if path == "/openapi/v2":
        return openapi.v2_response(accept, request.headers)
    if path == "/version":
        body = discovery.VERSION_INFO
    elif path in ("/api", "/apis"):
        version = discovery.wants_aggregated(accept)
        if version:  # cached per registry generation, with kube's ETag / 304 (discovery.aggregated_response)
            return discovery.aggregated_response(request.headers, version,
                                                 *discovery.aggregated_document(path == "/api", version))
        body = (discovery.api_versions(discovery.server_address(request.headers.get("Host", "")))
                if path == "/api" else discovery.group_list())
    elif len(parts) == 2 and parts[0] == "api":
        body = discovery.resource_list("", parts[1])
    elif len(parts) == 2 and parts[0] == "apis":
        body = discovery.group(parts[1])
    elif len(parts) == 3 and parts[0] == "apis":
        body = discovery.resource_list(parts[1], parts[2])
    if body is None:
        raise not_found_path()
    if path == "/version":
        response = web.Response(body=jsonutil.dumps(body) + b"\n", status=200)
        response.headers["Content-Type"] = content_type
        return response
    return discovery.legacy_response(request, body)  # JSON, YAML or protobuf; 406 as kube's discovery handlers


def _subresource_handler(resource: Resource, info: RequestInfo) -> ScopeHandler | None:
    """The handler of ``<resource>/<subresource>`` for this verb, or None (405).

    Handlers registered in services/gateway/reviews/ come first (e.g.
    serviceaccounts/token); then scale, and status/finalize, which are the
    object's own get/update/patch with the subresource in the attributes.
    """
    reviews.load()
    custom = reviews.SUBRESOURCES.get((resource.group, resource.resource, info.subresource))
    if custom is not None:
        return custom
    allowed = ("update",) if info.subresource == "finalize" else ("get", "update", "patch")
    if info.verb not in allowed:
        return None
    return scale if info.subresource == "scale" else VERB_HANDLERS[info.verb]


def check_route_media(request: web.Request, resource: Resource, info: RequestInfo) -> None:
    """go-restful's route selection for a built-in resource's request, after its path and method matched (404 and
    405 are decided before): a PATCH whose Content-Type is none of the route's patch types is 415 ``415:
    Unsupported Media Type`` (:func:`negotiation.check_route_content_type`; other routes consume ``*/*``), then an
    Accept none of the route's Produces matches is 406 ``406: Not Acceptable\\n\\nAvailable representations: ...``
    (:func:`negotiation.check_route_accept`), both before kube's handler sees the request (its own 415 and 406 come
    after: :func:`check_patch_type`, :func:`negotiation.negotiate`). kube: go-restful jsr311.go detectRoute,
    endpoints/installer.go (the routes' Produces and Consumes), server/handler.go serviceErrorHandler."""
    headers = request.headers
    produces = negotiation.route_produces(resource.group, resource.resource, info.subresource, info.verb)
    if request.method == "PATCH" and produces is not None:
        negotiation.check_route_content_type(headers.get("Content-Type", ""), BUILTIN_PATCH_TYPES)
    negotiation.check_route_accept(headers.get("Accept", ""), produces)


async def resource_request(request: web.Request, info: RequestInfo, attrs: Attributes, backends: Backends,
                           timeout: float) -> web.StreamResponse:
    """Route a resource request to its verb handler."""
    resource = REGISTRY.get(info.api_group, info.api_version, info.resource)
    if resource is None or len(info.parts) > 3 or (info.subresource and info.subresource not in resource.subresources):
        raise not_found_path()
    if resource.namespaced and not info.namespace and info.verb not in ("list", "watch"):
        raise not_found_path()
    if not resource.namespaced and info.namespace and resource.resource != "namespaces":
        raise not_found_path()
    if resource.resource == "namespaces" and info.namespace:
        info = dataclasses.replace(info, namespace="")
    if not info.subresource and ((info.verb == "create" and info.name)
                                 or (info.verb in ("update", "patch") and not info.name)):
        handler = None  # POST to an object's URL, PUT/PATCH to a collection: kube answers 405
    elif info.subresource:
        handler = _subresource_handler(resource, info)
    elif (resource.group, resource.resource) == ("", "componentstatuses"):
        handler = componentstatus.HANDLERS.get(info.verb)  # probed at each request (componentstatus.py)
    elif not resource.stored:
        if info.name:
            raise not_found_path()  # a review (a Creater only) has just its collection's POST route
        handler = review
    else:
        handler = VERB_HANDLERS.get(info.verb) if info.verb in resource.verbs else None
    if handler is None:
        if info.verb == "watch" and not info.subresource and "list" in (resource.verbs or ()):
            # the list route serves ?watch: ListResource refuses a Lister that is no Watcher (MethodNotSupported)
            raise errors.method_not_allowed(resource.resource, "watch", resource.group)
        raise errors.no_route()  # kube registers no route for a verb the storage does not implement
    static = REGISTRY.is_static(resource)
    if static:  # kube's go-restful router matches the route's media types first (custom resources have none)
        check_route_media(request, resource, info)
    custom = backends.custom_resources  # CRD rules: 405/415 refusals, deprecated-version warnings (dynamic.py)
    # The request's warning recorder (warning.py): what the scope gathers is sent with a refusal too.
    recorder = request[CONTEXT].warnings if CONTEXT in request else []
    if custom is not None:
        custom.check(resource, info.verb, request.headers.get("Content-Type", "").split(";")[0].strip(), recorder)
    if (resource.group, resource.resource) == ("", "endpoints") and static:
        recorder.append(ENDPOINTS_DEPRECATED)  # KEP-4974: every request to v1 Endpoints, reads and writes
    if (resource.group, resource.resource) == ("", "componentstatuses"):
        recorder.append(componentstatus.DEPRECATED_WARNING)  # APILifecycleDeprecated 1.19: every get and list
    # Protobuf objects for the built-in kinds with a message (kube's legacy codecs), not custom resources.
    protobuf = static and k8sproto.encodable(resource.group_version, resource.kind)
    if handler is patch or (handler is scale and info.verb == "patch"):
        # kube's PatchResource refuses a media type that is no patch type (415) before it negotiates the response
        # (406); createHandler and UpdateResource negotiate the response first (their 415 comes after).
        check_patch_type(request.headers.get("Content-Type", ""), resource)
    output = negotiation.negotiate(request.headers.get("Accept", ""), protobuf=protobuf)
    backends = conversion.backends_for(backends, resource)  # CRD versions: convert reads and writes (conversion.py)
    scope = RequestScope(request=request, info=info, attrs=attrs, resource=resource, query=request.query,
                         output=output, backends=backends, timeout=timeout, warnings=recorder)
    return await handler(scope)
