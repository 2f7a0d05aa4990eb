"""Prometheus metrics of the gateway with kube-apiserver's names, served on ``GET /metrics``.

``/metrics`` is a non-resource URL authorized like any other (kube's
``system:monitoring`` ClusterRole grants it; admins have it). The text is
Prometheus exposition format 0.0.4 from the process's default registry, so it
also has ``process_*``/``python_*`` and the gRPC metrics of kapi/observability.py.

Metrics (names, labels and buckets as kube-apiserver's
``k8s.io/apiserver/pkg/endpoints/metrics``):

- ``apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}``
- ``apiserver_request_duration_seconds{verb,dry_run,group,version,resource,subresource,scope,component}``
  (not for WATCH/CONNECT, which run for minutes)
- ``apiserver_current_inflight_requests{request_kind="readOnly"|"mutating"}``
- ``apiserver_longrunning_requests{verb,group,version,resource,subresource,scope,component}``
- ``apiserver_watch_events_total{group,version,kind}`` and ``apiserver_watch_events_sizes`` (bytes)
- ``authentication_duration_seconds{result="success"|"failure"|"error"}``,
  ``authentication_attempts{result}``
- the cluster's ``apiserver_flowcontrol_*`` families (kapi/flowcontrolmetrics.py), read from the flowcontrol
  service at scrape time, and ``kapi_flowcontrol_local_fallback`` (this gateway's own state)

``verb`` is kube's metric verb: the HTTP method upper-cased, with LIST,
WATCH, APPLY (server-side apply patch) and CONNECT where they apply; ``scope``
is ``resource`` (one object), ``namespace``, ``cluster`` or "" (non-resource).
Label children are cached, so a request costs a few microseconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)

from kapi import errors, flowcontrolmetrics, jsonutil
from kapi.attributes import Attributes, UserInfo
from services.gateway.audit import ATTRIBUTES
from services.gateway.flowcontrol import FlowControlClient
from services.gateway.requestinfo import resolve

log = logging.getLogger(__name__)
disable_created_metrics()  # no *_created series: kube-apiserver has none
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_LONGRUNNING = web.RequestKey("kapi.metrics.longrunning", object)
_STREAM_STATUS = web.RequestKey("kapi.metrics.stream_status", int)  # the status a started stream answered
DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30,
                    45, 60)
AUTH_BUCKETS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192,
                16.384)
_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
APPLY_PATCH = "application/apply-patch+yaml"


def _collector(name: str, make: Callable[[], Any]) -> Any:
    existing = getattr(REGISTRY, "_names_to_collectors", {})
    return existing.get(name) or make()


REQUESTS = _collector("apiserver_request_total", lambda: Counter(
    "apiserver_request_total", "Counter of apiserver requests broken out for each verb, dry run value, group, "
    "version, resource, scope, component, and HTTP response code.", (*_LABELS, "code")))
DURATION = _collector("apiserver_request_duration_seconds", lambda: Histogram(
    "apiserver_request_duration_seconds", "Response latency distribution in seconds for each verb, dry run value, "
    "group, version, resource, subresource, scope and component.", _LABELS, buckets=DURATION_BUCKETS))
INFLIGHT = _collector("apiserver_current_inflight_requests", lambda: Gauge(
    "apiserver_current_inflight_requests", "Maximal number of currently used inflight request limit of this "
    "apiserver per request kind in last second.", ("request_kind",)))
LONGRUNNING = _collector("apiserver_longrunning_requests", lambda: Gauge(
    "apiserver_longrunning_requests", "Gauge of all active long-running apiserver requests broken out by verb, "
    "group, version, resource, scope and component.", ("verb", "group", "version", "resource", "subresource",
                                                       "scope", "component")))
WATCH_EVENTS = _collector("apiserver_watch_events", lambda: Counter(
    "apiserver_watch_events", "Number of events sent in watch clients", ("group", "version", "kind")))
WATCH_EVENT_SIZES = _collector("apiserver_watch_events_sizes", lambda: Histogram(
    "apiserver_watch_events_sizes", "Watch event size distribution in bytes", ("group", "version", "kind"),
    buckets=(1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)))
AUTH_DURATION = _collector("authentication_duration_seconds", lambda: Histogram(
    "authentication_duration_seconds", "Authentication duration in seconds broken out by result.", ("result",),
    buckets=AUTH_BUCKETS))
AUTH_ATTEMPTS = _collector("authentication_attempts", lambda: Counter(
    "authentication_attempts", "Counter of authenticated attempts.", ("result",)))
SHARED_WATCHES = _collector("kapi_watch_shared_upstreams", lambda: Gauge(
    "kapi_watch_shared_upstreams", "Storage watch streams this gateway shares among client watches "
    "(services/gateway/watchfanout.py)."))
SHARED_WATCH_CLIENTS = _collector("kapi_watch_shared_clients", lambda: Gauge(
    "kapi_watch_shared_clients", "Client watches served by this gateway's shared storage watch streams."))
FALLBACK = _collector("kapi_flowcontrol_local_fallback", lambda: Gauge(
    "kapi_flowcontrol_local_fallback", "1 while this gateway admits requests with its local max-in-flight limits "
    "because the flowcontrol service is unreachable, else 0."))

_children: dict[tuple[Any, tuple[str, ...]], Any] = {}


def _child(metric: Any, labels: tuple[str, ...]) -> Any:
    key = (metric, labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*labels)
    return child


def metric_verb(method: str, attrs: Attributes | None, content_type: str) -> str:
    """kube's metric verb for a request (``LIST``, ``WATCH``, ``APPLY``, ``GET``, ``POST``, ...)."""
    if attrs is not None and attrs.resource_request:
        if attrs.verb == "list":
            return "LIST"
        if attrs.verb == "watch":
            return "WATCH"
        if attrs.verb == "patch" and content_type == APPLY_PATCH:
            return "APPLY"
        if attrs.subresource in ("exec", "attach", "portforward", "proxy"):
            return "CONNECT"
    return method.upper()


def scope_of(attrs: Attributes | None) -> str:
    """``resource`` (a named object), ``namespace``, ``cluster``, or "" for non-resource requests."""
    if attrs is None or not attrs.resource_request:
        return ""
    if attrs.name:
        return "resource"
    return "namespace" if attrs.namespace else "cluster"


def _labels(request: web.Request) -> tuple[str, ...]:
    attrs = request.get(ATTRIBUTES)
    if attrs is None:  # refused before the attributes were known (401, bad path)
        try:
            info = resolve(request.method, request.path, request.query)
        except Exception:  # noqa: BLE001 - metrics must never fail a request
            info = None
        if info is not None and info.is_resource_request:
            attrs = Attributes(UserInfo(""), info.verb, True, info.path, info.api_group, info.api_version,
                               info.resource, info.subresource, info.namespace, info.name)
    verb = metric_verb(request.method, attrs, request.headers.get("Content-Type", "").split(";")[0].strip())
    dry_run = "All" if "dryRun" in request.query else ""
    if attrs is None or not attrs.resource_request:
        return verb, dry_run, "", "", "", "", "", "apiserver"
    return (verb, dry_run, attrs.api_group, attrs.api_version, attrs.resource, attrs.subresource, scope_of(attrs),
            "apiserver")


def instrument(handler: Handler) -> Handler:
    """``handler`` wrapped to count, time and gauge every request (kube's ``MonitorRequest``)."""
    readonly, mutating = INFLIGHT.labels("readOnly"), INFLIGHT.labels("mutating")

    async def monitored(request: web.Request) -> web.StreamResponse:
        start = time.perf_counter()
        gauge = readonly if request.method in _READ_METHODS else mutating
        gauge.inc()
        code = 500
        try:
            response = await handler(request)
            code = response.status
            return response
        except web.HTTPException as exc:
            code = exc.status
            raise
        except asyncio.CancelledError:
            # The client went away. A watch (or other stream) it ends had already answered with its status:
            # count that, as kube does, not a 500.
            code = request.get(_STREAM_STATUS, code)
            raise
        finally:
            gauge.dec()
            streaming = request.get(_LONGRUNNING)
            if streaming is not None:
                streaming.dec()
            labels = _labels(request)
            if labels[0] not in ("WATCH", "CONNECT"):
                _child(DURATION, labels).observe(time.perf_counter() - start)
            _child(REQUESTS, (*labels, str(code))).inc()

    return monitored


async def on_response_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """aiohttp signal: a streamed (long-running) response counts in ``apiserver_longrunning_requests``."""
    if isinstance(response, web.Response):
        return
    labels = _labels(request)
    gauge = _child(LONGRUNNING, (labels[0], *labels[2:]))
    gauge.inc()
    request[_LONGRUNNING] = gauge  # decremented when the handler returns
    request[_STREAM_STATUS] = response.status


def watch_events(group: str, version: str, kind: str, count: int, size: int) -> None:
    """Count ``count`` watch events (``size`` bytes in total) sent to one watcher."""
    if count:
        _child(WATCH_EVENTS, (group, version, kind)).inc(count)
        _child(WATCH_EVENT_SIZES, (group, version, kind)).observe(size / count)


@contextmanager
def authentication() -> Iterator[None]:
    """Time one authentication: success, failure (401) or error (anything else) (kube's authentication metrics)."""
    start = time.perf_counter()
    result = "error"
    try:
        yield
        result = "success"
    except errors.StatusError as err:
        result = "failure" if err.code == 401 else "error"
        raise
    finally:
        _child(AUTH_DURATION, (result,)).observe(time.perf_counter() - start)
        _child(AUTH_ATTEMPTS, (result,)).inc()


async def response(flowcontrol: FlowControlClient) -> web.Response:
    """The ``/metrics`` body (Prometheus text format), with the cluster's ``apiserver_flowcontrol_*`` families.

    The APF families come from the flowcontrol service (``Dump`` kind
    ``counters``, at most 2 seconds) and describe the whole cluster, so every
    gateway reports the same values: aggregate them with ``max``, not ``sum``.
    When the service cannot answer they are left out and
    ``kapi_flowcontrol_local_fallback`` (1 while this gateway is on its local
    max-in-flight limits) says why.
    """
    FALLBACK.set(0 if flowcontrol.connected or not flowcontrol.configured else 1)
    body = generate_latest(REGISTRY)
    if flowcontrol.connected:
        try:
            body += flowcontrolmetrics.text(jsonutil.loads(await flowcontrol.dump("counters", False, 2.0)))
        except (errors.StatusError, ValueError) as exc:
            log.info("apiserver_flowcontrol_* metrics left out: %s", exc)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
