"""The gateway's handler chain, top to bottom in one function (k8s.io/apiserver DefaultBuildHandlerChain).

:func:`build_handler_chain` composes the filters, each ``with_x(handler,
deps) -> handler`` in a file of its own: generic ones in
services/gateway/filters/ (panic recovery, health, timeout, priority and
fairness, Server-Timing, tracing; metrics in services/gateway/metrics.py), API-aware ones
in services/gateway/apifilters/ (request info, authentication,
impersonation, authorization; audit in services/gateway/audit.py). A
request passes them outermost first — the order of kube-apiserver:

tracing -> metrics -> Server-Timing -> audit -> panic recovery -> health -> request info ->
authentication (401) -> impersonation -> priority and fairness (429) ->
authorization (403) -> timeout (504) -> routes (services/gateway/routes.py:
discovery, OpenAPI, the REST verb handlers, whose writes all go through
services/gateway/registry/store.py).

:func:`install` mounts the chain on the aiohttp application and registers
every response hook (audit, metrics, APF headers, Server-Timing, Cache-Control) — nowhere else. See
docs/architecture.md, "The request path".
"""

from __future__ import annotations

from aiohttp import web

from services.gateway import audit, debug, metrics, routes
from services.gateway.apifilters.authentication import with_authentication
from services.gateway.apifilters.authorization import with_authorization
from services.gateway.apifilters.impersonation import with_impersonation
from services.gateway.apifilters.requestinfo import with_request_info
from services.gateway.backends import Backends
from services.gateway.context import Handler
from services.gateway.filters import cachecontrol, serverheader, servertiming, tracing
from services.gateway.filters.health import with_health
from services.gateway.filters.priority import with_priority_and_fairness
from services.gateway.filters.recovery import expect_continue, with_panic_recovery
from services.gateway.filters.timeout import with_timeout


def build_handler_chain(backends: Backends) -> Handler:
    """The aiohttp handler that runs every request through the chain, built innermost first."""
    handler = routes.routes(backends)
    handler = with_timeout(handler)
    handler = with_authorization(handler, backends)
    handler = with_priority_and_fairness(handler, backends)
    handler = with_impersonation(handler, backends)
    handler = with_authentication(handler, backends)
    handler = with_request_info(handler, backends.config)
    handler = with_health(handler, backends)
    handler = with_panic_recovery(handler)
    handler = audit.with_audit(handler, backends.audit)
    handler = servertiming.with_server_timing(handler)
    handler = metrics.instrument(handler)
    return tracing.instrument(handler)


def install(app: web.Application, backends: Backends) -> Handler:
    """Serve every path of ``app`` through the chain and register the chain's response hooks and cleanup.

    Returns the chain's handler, which the public gRPC API (services/gateway/grpcapi.py) runs its calls through.
    """
    app.on_response_prepare.append(audit.on_response_prepare)  # Audit-Id on streams; ResponseStarted
    app.on_response_prepare.append(metrics.on_response_prepare)  # apiserver_longrunning_requests
    app.on_response_prepare.append(debug.on_response_prepare)  # PF headers on streams; watch seats end here
    app.on_response_prepare.append(servertiming.on_response_prepare)  # Server-Timing
    app.on_response_prepare.append(cachecontrol.on_response_prepare)  # Cache-Control: no-cache, private
    app.on_response_prepare.append(serverheader.on_response_prepare)  # no Server header (Go's net/http sends none)
    app.on_cleanup.append(audit.cleanup(backends.audit))
    # Any path, control characters included (``.`` alone stops at a newline: aiohttp's text 404 for ``%0a``).
    handler = build_handler_chain(backends)
    app.router.add_route("*", r"/{tail:[\s\S]*}", handler, expect_handler=expect_continue)
    return handler
