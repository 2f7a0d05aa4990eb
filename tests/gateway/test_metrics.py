"""Gateway metrics: kube's verb/scope labels (table), request counting and timing through an aiohttp app."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import REGISTRY

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from services.gateway import audit, metrics
from services.gateway.flowcontrol import FlowControlClient, LocalLimiter
from services.gateway.requestinfo import resolve

U = UserInfo("u")


def attrs(method: str, path: str, query: dict[str, str] | None = None) -> Attributes:
    info = resolve(method, path, query or {})
    return Attributes(U, info.verb, info.is_resource_request, info.path, info.api_group, info.api_version,
                      info.resource, info.subresource, info.namespace, info.name)


@pytest.mark.parametrize("method,path,query,content_type,verb,scope", [
    ("GET", "/api/v1/namespaces/d/pods", {}, "", "LIST", "namespace"),
    ("GET", "/api/v1/pods", {"watch": "true"}, "", "WATCH", "cluster"),
    ("GET", "/api/v1/namespaces/d/pods/p", {}, "", "GET", "resource"),
    ("POST", "/api/v1/namespaces/d/pods", {}, "application/json", "POST", "namespace"),
    ("PATCH", "/api/v1/namespaces/d/pods/p", {}, "application/apply-patch+yaml", "APPLY", "resource"),
    ("PATCH", "/api/v1/namespaces/d/pods/p", {}, "application/merge-patch+json", "PATCH", "resource"),
    ("DELETE", "/api/v1/nodes/n", {}, "", "DELETE", "resource"),
    ("GET", "/api/v1/namespaces/d/pods/p/exec", {}, "", "CONNECT", "resource"),
    ("GET", "/version", {}, "", "GET", ""),
])
def test_verb_and_scope(method, path, query, content_type, verb, scope):
    a = attrs(method, path, query)
    assert metrics.metric_verb(method, a, content_type) == verb
    assert metrics.scope_of(a) == scope


def sample(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


LIST_LABELS = {"verb": "LIST", "dry_run": "", "group": "apps", "version": "v1", "resource": "deployments",
               "subresource": "", "scope": "namespace", "component": "apiserver"}


async def test_requests_counted_timed_and_inflight():
    seen_inflight = []

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/apis/"):
            audit.received(request, attrs(request.method, request.path, dict(request.query)))
        seen_inflight.append(sample("apiserver_current_inflight_requests", {"request_kind": "readOnly"}))
        if request.query.get("watch"):
            response = web.StreamResponse()
            await response.prepare(request)
            seen_inflight.append(sample("apiserver_longrunning_requests", {
                "verb": "WATCH", "group": "apps", "version": "v1", "resource": "deployments", "subresource": "",
                "scope": "namespace", "component": "apiserver"}))
            return response
        if request.path == "/metrics":  # no flowcontrol address: local limits, no APF families
            return await metrics.response(FlowControlClient(None, LocalLimiter(0, 0)))
        return web.json_response({}, status=404 if request.path == "/nope" else 200)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", metrics.instrument(handle))
    app.on_response_prepare.append(metrics.on_response_prepare)
    client = TestClient(TestServer(app))
    await client.start_server()
    before = sample("apiserver_request_total", {**LIST_LABELS, "code": "200"})
    count_before = sample("apiserver_request_duration_seconds_count", LIST_LABELS)
    try:
        for _ in range(3):
            assert (await client.get("/apis/apps/v1/namespaces/d/deployments")).status == 200
        assert (await client.get("/nope")).status == 404
        assert (await client.get("/apis/apps/v1/namespaces/d/deployments?watch=1")).status == 200
        text = await (await client.get("/metrics")).text()
    finally:
        await client.close()
    assert sample("apiserver_request_total", {**LIST_LABELS, "code": "200"}) == before + 3
    assert sample("apiserver_request_duration_seconds_count", LIST_LABELS) == count_before + 3
    assert sample("apiserver_request_total", {"verb": "GET", "dry_run": "", "group": "", "version": "",
                                              "resource": "", "subresource": "", "scope": "",
                                              "component": "apiserver", "code": "404"}) >= 1
    watch = {**LIST_LABELS, "verb": "WATCH"}
    assert sample("apiserver_request_duration_seconds_count", watch) == 0  # long-running: not timed
    assert sample("apiserver_request_total", {**watch, "code": "200"}) >= 1
    assert seen_inflight[0] >= 1 and seen_inflight[-2] == 1  # the watch was long-running while it streamed
    assert sample("apiserver_current_inflight_requests", {"request_kind": "readOnly"}) == 0
    assert 'apiserver_request_total{' in text and "process_cpu_seconds_total" in text


def test_authentication_results_and_watch_events():
    before = {r: sample("authentication_attempts_total", {"result": r}) for r in ("success", "failure", "error")}
    with metrics.authentication():
        pass
    with pytest.raises(errors.StatusError), metrics.authentication():
        raise errors.unauthorized()
    with pytest.raises(errors.StatusError), metrics.authentication():
        raise errors.unavailable("authn down")
    after = {r: sample("authentication_attempts_total", {"result": r}) for r in before}
    assert {r: after[r] - before[r] for r in before} == {"success": 1, "failure": 1, "error": 1}
    labels = {"group": "", "version": "v1", "kind": "ConfigMap"}
    start = sample("apiserver_watch_events_total", labels)
    metrics.watch_events("", "v1", "ConfigMap", 5, 5000)
    assert sample("apiserver_watch_events_total", labels) == start + 5
    assert sample("apiserver_watch_events_sizes_sum", labels) >= 1000


async def test_watch_the_client_ends_counts_its_status_not_500():
    """kubectl get -w ended with Ctrl-C: the handler is cancelled after the stream answered 200 (kube counts it
    as a completed watch, not code 500)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        audit.received(request, attrs(request.method, request.path, dict(request.query)))
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b"{}\n")
        raise asyncio.CancelledError  # what the server does to the handler when the client goes away

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", metrics.instrument(handle))
    app.on_response_prepare.append(metrics.on_response_prepare)
    client = TestClient(TestServer(app))
    await client.start_server()
    watch = {**LIST_LABELS, "verb": "WATCH"}
    ok_before = sample("apiserver_request_total", {**watch, "code": "200"})
    failed_before = sample("apiserver_request_total", {**watch, "code": "500"})
    try:
        with contextlib.suppress(aiohttp.ClientError):
            response = await client.get("/apis/apps/v1/namespaces/d/deployments?watch=1")
            await response.read()
    finally:
        await client.close()
    assert sample("apiserver_request_total", {**watch, "code": "200"}) == ok_before + 1
    assert sample("apiserver_request_total", {**watch, "code": "500"}) == failed_before
