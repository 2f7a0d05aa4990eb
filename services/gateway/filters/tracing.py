"""OpenTelemetry server span per gateway request (on only when OTEL_* asks; kapi/observability.py).

The span continues the client's W3C ``traceparent``/``tracestate`` when sent,
is the current span while the chain runs (so the gRPC client interceptors
make its children, and every service's server span follows), and carries:
``http.request.method``, ``url.path``, ``k8s.verb``, ``k8s.resource``,
``k8s.subresource``, ``k8s.namespace``, ``k8s.name``, ``k8s.user``,
``kapi.audit_id`` and ``http.response.status_code`` (status ERROR for 5xx).
Its name is ``<verb> <resource>`` (``list configmaps``) or ``<METHOD> <path>``
for non-resource requests. Source: OpenTelemetry HTTP semantic conventions;
kube-apiserver's own tracing (KEP-647) records the same request attributes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from kapi import observability
from services.gateway.audit import ATTRIBUTES, AUDIT_ID

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def instrument(handler: Handler, tracer: Any = None) -> Handler:
    """``handler`` inside a server span; ``handler`` itself when tracing is off and no ``tracer`` is given."""
    if tracer is None:
        if not observability.STATE.tracing:
            return handler
        from opentelemetry import trace

        tracer = trace.get_tracer("kapi.gateway")
    from opentelemetry import propagate
    from opentelemetry.trace import SpanKind, Status, StatusCode

    async def traced(request: web.Request) -> web.StreamResponse:
        parent = propagate.extract(dict(request.headers))
        with tracer.start_as_current_span(f"{request.method} {request.path}", context=parent, kind=SpanKind.SERVER,
                                          record_exception=False, set_status_on_exception=False) as span:
            span.set_attribute("http.request.method", request.method)
            span.set_attribute("url.path", request.path)
            code = 500
            try:
                response = await handler(request)
                code = response.status
                return response
            except web.HTTPException as exc:
                code = exc.status
                raise
            finally:
                attrs = request.get(ATTRIBUTES)
                if attrs is not None:
                    if attrs.resource_request:
                        span.update_name(f"{attrs.verb} {attrs.resource}")
                    for key, value in (("k8s.verb", attrs.verb), ("k8s.resource", attrs.resource),
                                       ("k8s.subresource", attrs.subresource), ("k8s.namespace", attrs.namespace),
                                       ("k8s.name", attrs.name), ("k8s.user", attrs.user.username)):
                        if value:
                            span.set_attribute(key, value)
                span.set_attribute("kapi.audit_id", request.get(AUDIT_ID, ""))
                span.set_attribute("http.response.status_code", code)
                if code >= 500:
                    span.set_status(Status(StatusCode.ERROR))

    return traced
