"""Webhook metrics (kube's names and labels) and webhook call spans, against the TLS example servers."""
# ruff: noqa: F811 (the imported fixture "servers" is a test parameter)

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client import REGISTRY, generate_latest

from tests.admission.fakes import pod, request
from tests.admission.test_webhooks import Servers, hook, plugins, refusal, servers  # noqa: F401 (fixture)

DURATION = "apiserver_admission_webhook_admission_duration_seconds_count"
REQUESTS = "apiserver_admission_webhook_request_total"
REJECTIONS = "apiserver_admission_webhook_rejection_count"


def sample(metric: str, /, **labels: str) -> float:
    return REGISTRY.get_sample_value(metric, labels) or 0.0


@pytest.mark.parametrize(("kind", "path", "policy", "obj_labels", "rejected", "code", "error_type"), [
    ("m", "/mutate", "Fail", {}, "false", "200", ""),
    ("v", "/validate", "Fail", {"team": "a"}, "false", "200", ""),
    ("v", "/validate", "Fail", {}, "true", "403", "no_error"),  # denied: missing label
    ("m", "/bad-status", "Fail", {}, "true", "500", "calling_webhook_error"),  # HTTP 500 from the webhook
    ("m", "/bad-uid", "Fail", {}, "true", "0", "calling_webhook_error"),  # bad answer
    ("v", "/bad-status", "Ignore", {}, "false", "500", ""),  # failure ignored: not a rejection
])
async def test_webhook_metrics(servers: Servers, kind: str, path: str, policy: str, obj_labels: dict[str, str],
                               rejected: str, code: str, error_type: str) -> None:
    name = f"metrics-{kind}-{path.strip('/')}-{policy}-{rejected}.example.com".lower()
    type_ = "admit" if kind == "m" else "validating"
    m, v = plugins((kind, [hook(name, servers.url(path), servers.ca, failurePolicy=policy)]))
    obj = pod()
    obj["metadata"]["labels"] = obj_labels
    req = request("CREATE", "pods", obj)
    if rejected == "true":
        await refusal(m.admit(req) if kind == "m" else v.validate(req))
    else:
        await (m.admit(req) if kind == "m" else v.validate(req))
    assert sample(DURATION, name=name, type=type_, operation="CREATE", rejected=rejected) == 1
    assert sample(REQUESTS, name=name, type=type_, operation="CREATE", code=code, rejected=rejected) == 1
    rejections = {k: v for k, v in
                  ((e, sample(REJECTIONS, name=name, type=type_, operation="CREATE", error_type=e, rejection_code=code))
                   for e in ("no_error", "calling_webhook_error", "apiserver_internal_error")) if v}
    assert rejections == ({error_type: 1.0} if error_type else {})


async def test_not_called_is_not_counted_and_dry_run_is_internal(servers: Servers) -> None:
    name = "metrics-skipped.example.com"
    m, _ = plugins(("m", [hook(name, servers.url("/mutate"), servers.ca,
                                matchConditions=[{"name": "never", "expression": "false"}])]))
    await m.admit(request("CREATE", "pods", pod()))
    assert sample(DURATION, name=name, type="admit", operation="CREATE", rejected="false") == 0
    name = "metrics-dryrun.example.com"
    m, _ = plugins(("m", [hook(name, servers.url("/mutate"), servers.ca, sideEffects="Some")]))
    await refusal(m.admit(request("CREATE", "pods", pod(), dry_run=True)))
    assert sample(REJECTIONS, name=name, type="admit", operation="CREATE", error_type="apiserver_internal_error",
                  rejection_code="0") == 1
    text = generate_latest(REGISTRY).decode()
    assert "# TYPE apiserver_admission_webhook_rejection_count untyped" in text
    assert ('apiserver_admission_webhook_rejection_count{error_type="apiserver_internal_error",'
            f'name="{name}",operation="CREATE",rejection_code="0",type="admit"}} 1.0') in text


async def test_webhook_spans_and_traceparent(servers: Servers) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    m, v = plugins(("m", [hook("traced-m.example.com", servers.url("/mutate"), servers.ca)]),
                   ("v", [hook("traced-v.example.com", servers.url("/validate"), servers.ca)]))
    assert m.client.tracer is None  # tracing off by default: no spans
    m.client.tracer = provider.get_tracer("test")
    tracer = m.client.tracer
    with tracer.start_as_current_span("request") as parent:
        await m.admit(request("CREATE", "pods", pod()))
        await refusal(v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}})))
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"request", "Call mutating webhook", "Call validating webhook"}
    mutating, validating = spans["Call mutating webhook"], spans["Call validating webhook"]
    assert mutating.kind == SpanKind.CLIENT
    assert mutating.parent is not None and mutating.parent.span_id == parent.get_span_context().span_id
    assert dict(mutating.attributes or {}) == {
        "webhook.name": "traced-m.example.com", "webhook.configuration": "cfg-0", "k8s.resource": "pods",
        "k8s.operation": "CREATE", "webhook.rejected": False, "http.response.status_code": 200}
    assert validating.attributes["webhook.rejected"] is True  # type: ignore[index]
    assert validating.status.status_code == StatusCode.UNSET  # a denial is an answer, not an error



async def test_webhook_request_carries_traceparent() -> None:
    seen: list[str] = []

    async def allow(http: web.Request) -> web.Response:
        seen.append(http.headers.get("traceparent", ""))
        body = await http.json()
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": {"uid": body["request"]["uid"], "allowed": True}})

    app = web.Application()
    app.router.add_post("/allow", allow)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        _, v = plugins(("v", [hook("traceparent.example.com", str(server.make_url("/allow")), "")]))
        await v.validate(request("CREATE", "pods", pod()))
        assert seen == [""]  # tracing off: nothing injected
        v.client.tracer = provider.get_tracer("test")
        await v.validate(request("CREATE", "pods", pod()))
        (span,) = exporter.get_finished_spans()
        assert seen[1].startswith(f"00-{span.context.trace_id:032x}-{span.context.span_id:016x}-")
    finally:
        await server.close()
