"""Gateway server span: attributes, incoming traceparent honoured, nothing when tracing is off."""

from __future__ import annotations

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kapi.attributes import Attributes, UserInfo
from services.gateway import audit
from services.gateway.filters import tracing

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


async def handle(request: web.Request) -> web.StreamResponse:
    request[audit.AUDIT_ID] = "aid-1"
    if request.path.startswith("/api/"):
        audit.received(request, Attributes(UserInfo("alice"), "list", True, request.path, "", "v1", "configmaps",
                                           namespace="demo"))
    return web.json_response({}, status=503 if request.path == "/down" else 200)


def test_off_by_default_returns_the_handler():
    assert tracing.instrument(handle) is handle


async def test_server_span_attributes_and_traceparent():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", tracing.instrument(handle, provider.get_tracer("test")))
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        await client.get("/api/v1/namespaces/demo/configmaps",
                         headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"})
        await client.get("/down")
    finally:
        await client.close()
    listed, down = exporter.get_finished_spans()
    assert listed.name == "list configmaps" and listed.kind.name == "SERVER"
    assert format(listed.context.trace_id, "032x") == TRACE_ID
    assert format(listed.parent.span_id, "016x") == PARENT_ID
    assert dict(listed.attributes) == {
        "http.request.method": "GET", "url.path": "/api/v1/namespaces/demo/configmaps", "k8s.verb": "list",
        "k8s.resource": "configmaps", "k8s.namespace": "demo", "k8s.user": "alice", "kapi.audit_id": "aid-1",
        "http.response.status_code": 200}
    assert down.name == "GET /down" and down.parent is None and down.status.status_code.name == "ERROR"
