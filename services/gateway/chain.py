"""The gateway's handler chain, top to bottom in one place (k8s.io/apiserver DefaultBuildHandlerChain).

Order, as kube-apiserver: request info -> timeout -> authentication ->
priority and fairness (a seat) -> authorization -> REST handler (one module
per verb in handlers/). Every failure becomes a Kubernetes ``Status`` body
with its HTTP code (kapi.errors); nothing escapes as a bare 500.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import ssl
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from kapi import errors, jsonutil
from kapi.attributes import Attributes, UserInfo
from kapi.duration import parse_duration
from kapi.resources import REGISTRY, Resource
from services.gateway import (
    audit,
    conversion,
    debug,
    discovery,
    impersonation,
    issuerdiscovery,
    metrics,
    negotiation,
    openapi,
    reviews,
    tracing,
)
from services.gateway.backends import Credentials
from services.gateway.handlers.create import create
from services.gateway.handlers.delete import delete, delete_collection
from services.gateway.handlers.get import get
from services.gateway.handlers.list import list_
from services.gateway.handlers.patch import patch
from services.gateway.handlers.review import review
from services.gateway.handlers.scale import scale
from services.gateway.handlers.update import update
from services.gateway.handlers.watch import watch
from services.gateway.requestinfo import RequestInfo, resolve
from services.gateway.scope import RequestScope

if TYPE_CHECKING:
    from services.gateway.backends import Backends

log = logging.getLogger(__name__)

Handler = Callable[[RequestScope], Awaitable[web.StreamResponse]]
VERB_HANDLERS: dict[str, Handler] = {
    "get": get, "list": list_, "create": create, "update": update, "patch": patch, "delete": delete,
    "deletecollection": delete_collection, "watch": watch,
}
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")


def not_found_path() -> errors.StatusError:
    """kube's 404 for a path nothing serves."""
    return errors.StatusError(404, "NotFound", "the server could not find the requested resource")


def status_response(err: errors.StatusError, audit_id: str = "") -> web.Response:
    """Render a StatusError as its Status JSON with the matching HTTP code and Retry-After."""
    response = web.Response(body=jsonutil.dumps(err.status()), status=err.code, content_type=negotiation.JSON)
    if err.retry_after is not None and err.code in (429, 503, 504):
        response.headers["Retry-After"] = str(err.retry_after)
    if audit_id:
        response.headers["Audit-Id"] = audit_id
    return response


def parse_go_duration(text: str) -> float:
    """A Go duration ("32s", "1m30s", "500ms") in seconds (:func:`kapi.duration.parse_duration`, strict);
    400 BadRequest if malformed."""
    try:
        return parse_duration(text, strict=True)
    except ValueError:
        raise errors.bad_request(f'invalid timeout "{text}"') from None  # noqa: B907


def credentials(request: web.Request, front_proxy_names: frozenset[str]) -> Credentials:
    """What the request presents, trusting x-forwarded-client-cert only from the front proxy (by its cert CN)."""
    authorization = request.headers.get("Authorization", "")
    ssl_object: ssl.SSLObject | None = request.transport.get_extra_info("ssl_object") if request.transport else None
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return Credentials(authorization=authorization)
    cert = x509.load_der_x509_certificate(der)
    names = [a.value for a in cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)]
    if names and names[0] in front_proxy_names:
        return Credentials(authorization=authorization,
                           forwarded_client_cert=request.headers.get("x-forwarded-client-cert", ""))
    return Credentials(authorization=authorization,
                       client_certificate_chain=cert.public_bytes(Encoding.PEM).decode())


def build_handler_chain(backends: Backends) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The aiohttp handler that runs every request through the chain."""

    async def handle(request: web.Request) -> web.StreamResponse:
        audit_id = request.headers.get("Audit-ID") or str(uuid.uuid4())
        request[audit.AUDIT_ID] = audit_id
        try:
            response = await _serve(request, backends)
        except errors.StatusError as err:
            response = status_response(err, audit_id)
            debug.set_pf_headers(request, response)
            return response
        except web.HTTPRequestEntityTooLarge:  # aiohttp's body limit: answer kube's Status, not text
            return status_response(errors.too_large(), audit_id)
        except (ConnectionResetError, web.HTTPException):
            raise
        except Exception as exc:  # noqa: BLE001 - the one place unknown errors become 500 Status
            request[audit.PANIC] = exc
            log.exception("audit-id %s: %s %s failed", audit_id, request.method, request.path)
            return status_response(errors.internal(f"{type(exc).__name__}"), audit_id)
        if not response.prepared:
            response.headers["Audit-Id"] = audit_id
            debug.set_pf_headers(request, response)
        return response

    return tracing.instrument(metrics.instrument(audit.with_audit(handle, backends.audit)))


async def _serve(request: web.Request, backends: Backends) -> web.StreamResponse:
    path = request.path
    if path in HEALTH_PATHS or path.startswith(tuple(p + "/" for p in HEALTH_PATHS)):
        return health(path, backends, "verbose" in request.query)
    query = request.query
    info = resolve(request.method, path, query)
    config = backends.config
    timeout = config.request_timeout
    if query.get("timeout"):
        timeout = min(parse_go_duration(query["timeout"]), timeout) or timeout
    creds = credentials(request, config.front_proxy_names)
    with metrics.authentication():
        user = await backends.authn.authenticate(creds, timeout=timeout)
    acting = await impersonation.impersonate(request.headers, user, backends.authz, timeout)
    if acting is not None:
        request["impersonator"], user = acting.impersonator, acting.user
    attrs = attributes(info, user, query)
    audit.received(request, attrs)
    seat = debug.new_seat(request, info.long_running)
    async with backends.flowcontrol.seat(attrs, info.long_running, timeout, seat, debug.list_limit(query)):
        allowed, reason = await backends.authz.authorize(attrs, timeout=timeout)
        if not allowed:
            raise forbidden(attrs, reason)
        if backends.aggregator is not None:  # remote APIServices and merged /apis discovery (aggregation.py)
            aggregated = await backends.aggregator.serve(request, info.path, user, timeout)
            if aggregated is not None:
                return aggregated
        if not info.is_resource_request and issuerdiscovery.handles(info.path):
            return await issuerdiscovery.respond(info.path, backends, timeout)
        if not info.is_resource_request and debug.handles(info.path):
            return await debug.respond(info.path, query, backends, timeout)
        if not info.is_resource_request and info.path.rstrip("/") == "/metrics":
            return await metrics.response(backends.flowcontrol)
        if not info.is_resource_request:
            return non_resource(request, info)
        if info.long_running:
            return await resource_request(request, info, attrs, backends, timeout)
        try:
            async with asyncio.timeout(timeout):
                return await resource_request(request, info, attrs, backends, timeout)
        except TimeoutError:
            raise errors.request_timeout() from None


def attributes(info: RequestInfo, user: UserInfo, query: Any) -> Attributes:
    """Authorization attributes; a list/watch with ``fieldSelector=metadata.name=x`` names ``x`` (as kube)."""
    name = info.name
    if info.verb in ("list", "watch") and not name:
        selector = query.get("fieldSelector", "")
        for term in selector.split(","):
            key, sep, value = term.partition("==") if "==" in term else term.partition("=")
            if sep and key.strip() == "metadata.name" and "!" not in key and value and "/" not in value:
                name = value.strip()
    return Attributes(user=user, verb=info.verb, resource_request=info.is_resource_request, path=info.path,
                      api_group=info.api_group, api_version=info.api_version, resource=info.resource,
                      subresource=info.subresource, namespace=info.namespace, name=name)


def forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
    """kube's 403: ``configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" ...``."""
    user = attrs.user.username
    if not attrs.resource_request:
        message = f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        where = (f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope")
        message = f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {where}'
    if reason:
        message = f"{message}: {reason}"
    if not attrs.resource_request:
        return errors.forbidden_message(f"forbidden: {message}")
    return errors.forbidden(attrs.resource, attrs.name, message, attrs.api_group)


def health(path: str, backends: Backends, verbose: bool = False) -> web.Response:
    """/healthz, /livez, /readyz (and their /<check> forms): "ok", or 500 naming the failed check.

    ``?verbose`` lists the checks; /readyz's includes the flow-control line (services/gateway/debug.py).
    """
    if path.startswith("/readyz") and not backends.ready:
        reason = "shutdown" if backends.shutting_down else "bootstrap"
        return web.Response(status=500, text=f"[-]{reason} failed: reason withheld\nreadyz check failed\n")
    if verbose:
        lines = ["[+]ping ok", *(debug.readyz_lines(backends) if path.startswith("/readyz") else [])]
        return web.Response(text="\n".join(lines) + f"\n{path.strip('/').split('/')[0]} check passed\n")
    return web.Response(text="ok")


def non_resource(request: web.Request, info: RequestInfo) -> web.Response:
    """Discovery documents, /version; 404 Status for anything else."""
    path = info.path.rstrip("/") or "/"
    accept = request.headers.get("Accept", "")
    parts = [p for p in path.split("/") if p]
    body: dict[str, Any] | None = None
    content_type = negotiation.JSON
    if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
        return openapi_response(parts[2:])
    if path == "/openapi/v2":
        return openapi.v2_response(accept, request.headers)
    if path == "/version":
        body = discovery.VERSION_INFO
    elif path in ("/api", "/apis"):
        version = discovery.wants_aggregated(accept)
        if version:
            body = discovery.aggregated(path == "/api", version)
            content_type = discovery.AGGREGATED_V2 if version == "v2" else discovery.AGGREGATED_V2BETA1
        else:
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
    response = web.Response(body=jsonutil.dumps(body), status=200)
    response.headers["Content-Type"] = content_type
    return response


def openapi_response(api_parts: list[str]) -> web.Response:
    """/openapi/v3 (index) or /openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>."""
    if not api_parts:
        data: bytes | None = openapi.index()
    elif api_parts[0] == "api" and len(api_parts) == 2:
        data = openapi.group_version_document("", api_parts[1])
    elif api_parts[0] == "apis" and len(api_parts) == 3:
        data = openapi.group_version_document(api_parts[1], api_parts[2])
    else:
        data = None
    if data is None:
        raise not_found_path()
    response = web.Response(body=data, status=200, content_type=negotiation.JSON)
    response.headers["Cache-Control"] = "public, immutable" if api_parts else "no-cache, private"
    return response


def _subresource_handler(resource: Resource, info: RequestInfo) -> Handler | None:
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
    elif not resource.stored:
        handler = review
    else:
        handler = VERB_HANDLERS.get(info.verb) if info.verb in resource.verbs else None
    if handler is None:
        name = f"{resource.resource}/{info.subresource}" if info.subresource else resource.resource
        raise errors.method_not_allowed(name, info.verb or request.method, resource.group)
    custom = backends.custom_resources  # CRD rules: 405/415 refusals, deprecated-version warnings (dynamic.py)
    warnings = custom.check(resource, info.verb, request.headers.get("Content-Type", "").split(";")[0].strip()) \
        if custom is not None else []
    output = negotiation.negotiate(request.headers.get("Accept", ""))
    backends = conversion.backends_for(backends, resource)  # CRD versions: convert reads and writes (conversion.py)
    scope = RequestScope(request=request, info=info, attrs=attrs, resource=resource, query=request.query,
                         output=output, backends=backends, timeout=timeout, warnings=warnings)
    return await handler(scope)
