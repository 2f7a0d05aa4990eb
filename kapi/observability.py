"""Per-process observability shared by every kapi service: JSON logs with the audit ID, gRPC metrics, tracing.

- **Audit ID everywhere.** The gateway sets :data:`AUDIT_ID` (a context
  variable) per request; gRPC client interceptors send it as metadata
  ``x-audit-id`` and the server interceptor of the called service sets it
  again, so every log line of that request's work, in every service, carries it.
- **Logs.** ``--log-format json`` (every service) writes one JSON object per
  line: ``ts`` (RFC 3339 UTC), ``level``, ``logger``, ``msg``, ``service``,
  ``auditID`` (when known), ``exc`` (traceback text); ``text`` (default) is
  the classic one-line format.
- **Metrics.** Every gRPC server counts and times its RPCs with
  go-grpc-prometheus's names (``grpc_server_started_total``,
  ``grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}``,
  ``grpc_server_handling_seconds``). A backend service serves them, plus
  ``process_*``/``python_*``, on plain HTTP at ``--metrics-address host:port``
  (default off); the gateway serves its own on ``/metrics`` over HTTPS.
- **Tracing.** OpenTelemetry, configured only by the standard ``OTEL_*``
  variables and off unless ``OTEL_TRACES_EXPORTER`` (``otlp`` or ``console``)
  or ``OTEL_EXPORTER_OTLP_ENDPOINT``/``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is
  set; ``OTEL_SDK_DISABLED=true`` forces it off. When off nothing is imported
  and no interceptor is installed. When on: client and server spans on every
  gRPC hop (opentelemetry-instrumentation-grpc), W3C ``traceparent``
  propagation, ``service.name`` ``kapi-<service>`` unless ``OTEL_SERVICE_NAME``.

:func:`setup` is called once per process by ``kapi <service>`` (kapi/local/cli.py)
before the service's ``main``; grpcutil's ``make_server``/``channel`` and
``configure_logging`` ask this module for interceptors and the log format.
"""

from __future__ import annotations

import argparse
import contextvars
import inspect
import logging
import os
import time
import traceback
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import grpc
import orjson

AUDIT_ID: contextvars.ContextVar[str] = contextvars.ContextVar("kapi_audit_id", default="")
METADATA_KEY = "x-audit-id"
_HANDLING_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class _State:
    service = ""
    log_format = "text"
    tracing = False
    metrics_server: Any = None


STATE = _State()


def tracing_requested(env: dict[str, str] | None = None) -> bool:
    """True when the standard OTEL_* variables ask for a trace exporter (see the module docstring)."""
    env = dict(os.environ) if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(exporter or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def setup(service: str, argv: Sequence[str]) -> None:
    """Read ``--log-format``/``--metrics-address`` from ``argv``, start tracing and the metrics listener.

    Unknown arguments are ignored (the service's own parser checks them).
    Raises SystemExit if the metrics address cannot be bound.
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--log-format", default="text", choices=("text", "json"))
    parser.add_argument("--metrics-address", default="")
    known, _ = parser.parse_known_args(list(argv))
    STATE.service, STATE.log_format = service, known.log_format
    if known.metrics_address:
        serve_metrics(known.metrics_address)
    if tracing_requested():
        start_tracing(service)


def serve_metrics(address: str) -> int:
    """Serve the default Prometheus registry on ``http://address/metrics`` (a thread); returns the bound port."""
    from prometheus_client import start_http_server

    host, _, port = address.rpartition(":")
    try:
        server, _thread = start_http_server(int(port), addr=host or "127.0.0.1")
    except (OSError, ValueError) as exc:
        raise SystemExit(f"kapi {STATE.service}: cannot serve metrics on {address}: {exc}") from None
    STATE.metrics_server = server
    return int(server.server_port)


def start_tracing(service: str) -> None:
    """Install an SDK TracerProvider exporting per OTEL_* (OTLP/gRPC by default; ``console`` for debugging)."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    name = os.environ.get("OTEL_SERVICE_NAME") or f"kapi-{service}"
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    exporter: SpanExporter
    if os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "console":
        exporter = ConsoleSpanExporter()
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    STATE.tracing = True


# ---------------------------------------------------------------------------
# Logging


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, service, auditID, exc."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line (no trailing newline)."""
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "level": record.levelname, "logger": record.name, "msg": record.getMessage(),
            "service": STATE.service}
        audit_id = AUDIT_ID.get()
        if audit_id:
            out["auditID"] = audit_id
        if record.exc_info:
            out["exc"] = "".join(traceback.format_exception(*record.exc_info))
        return orjson.dumps(out).decode()


class TextFormatter(logging.Formatter):
    """The one-line text format, with ``[audit-id]`` when a request's audit ID is known."""

    def format(self, record: logging.LogRecord) -> str:
        """``time LEVEL logger: [audit-id] message``."""
        text = super().format(record)
        audit_id = AUDIT_ID.get()
        if audit_id:
            head, sep, tail = text.partition(": ")
            text = f"{head}{sep}[{audit_id}] {tail}" if sep else f"[{audit_id}] {text}"
        return text


def log_handler() -> logging.Handler:
    """A stderr handler with the configured format (``--log-format``)."""
    handler = logging.StreamHandler()
    if STATE.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    return handler


# ---------------------------------------------------------------------------
# gRPC interceptors


def _metrics() -> tuple[Any, Any, Any]:
    from prometheus_client import REGISTRY, Counter, Histogram, disable_created_metrics

    disable_created_metrics()

    existing = getattr(REGISTRY, "_names_to_collectors", {})
    if "grpc_server_started_total" in existing:
        return (existing["grpc_server_started_total"], existing["grpc_server_handled_total"],
                existing["grpc_server_handling_seconds"])
    labels = ("grpc_type", "grpc_service", "grpc_method")
    started = Counter("grpc_server_started_total", "RPCs started on the server.", labels)
    handled = Counter("grpc_server_handled_total", "RPCs completed on the server, by code.", (*labels, "grpc_code"))
    seconds = Histogram("grpc_server_handling_seconds", "Seconds from RPC start to its end on the server.",
                        labels, buckets=_HANDLING_BUCKETS)
    return started, handled, seconds


def _code(context: grpc.aio.ServicerContext, failed: bool) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    return "UNKNOWN" if failed else "OK"


_FACTORIES = {"unary": grpc.unary_unary_rpc_method_handler, "server_stream": grpc.unary_stream_rpc_method_handler,
              "client_stream": grpc.stream_unary_rpc_method_handler,
              "bidi_stream": grpc.stream_stream_rpc_method_handler}


class ServerInterceptor(grpc.aio.ServerInterceptor):
    """Counts and times every RPC, and sets :data:`AUDIT_ID` from ``x-audit-id`` metadata for its duration."""

    def __init__(self) -> None:
        self.started, self.handled, self.seconds = _metrics()
        self._children: dict[tuple[str, str, str], tuple[Any, Any]] = {}
        # method -> (the server's handler, it wrapped) for calls without an audit ID (the default: the ID travels
        # only with JSON logs): the same handler comes back for every call of a method, so it is wrapped once.
        self._plain: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(self, continuation: Callable[..., Any],
                                details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        """Wrap the method's handler (all four streaming kinds)."""
        handler = await continuation(details)
        if handler is None:
            return handler
        method: str = details.method  # type: ignore[attr-defined]
        audit_id = next((v for k, v in (details.invocation_metadata or ()) if k == METADATA_KEY), "")  # type: ignore[attr-defined]
        if not audit_id:
            known = self._plain.get(method)
            if known is not None and known[0] is handler:
                return known[1]
        wrapped = self._wrap_handler(handler, method, audit_id)
        if not audit_id:
            if len(self._plain) >= 1024:
                self._plain.clear()
            self._plain[method] = (handler, wrapped)
        return wrapped

    def _wrap_handler(self, handler: grpc.RpcMethodHandler, method: str, audit_id: str) -> grpc.RpcMethodHandler:
        service, _, name = method.lstrip("/").rpartition("/")
        if handler.unary_unary:
            kind, behavior = "unary", handler.unary_unary
        elif handler.unary_stream:
            kind, behavior = "server_stream", handler.unary_stream
        elif handler.stream_unary:
            kind, behavior = "client_stream", handler.stream_unary
        else:
            kind, behavior = "bidi_stream", handler.stream_stream
        if not (inspect.iscoroutinefunction(behavior) or inspect.isasyncgenfunction(behavior)):
            return handler  # a synchronous servicer (grpc_health's): left as it is
        key = (kind, service, name)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = (self.started.labels(*key), self.seconds.labels(*key))
        return _FACTORIES[kind](self._wrap(behavior, key, child, audit_id),
                                request_deserializer=handler.request_deserializer,
                                response_serializer=handler.response_serializer)

    def _wrap(self, behavior: Callable[..., Any], key: tuple[str, str, str], child: tuple[Any, Any],
              audit_id: str) -> Callable[..., Any]:
        started, seconds = child
        handled = self.handled

        def finish(context: grpc.aio.ServicerContext, start: float, failed: bool) -> None:
            seconds.observe(time.perf_counter() - start)
            handled.labels(*key, _code(context, failed)).inc()

        if inspect.isasyncgenfunction(behavior):
            async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                token = AUDIT_ID.set(audit_id) if audit_id else None
                started.inc()
                start, failed = time.perf_counter(), True
                try:
                    async for item in behavior(request, context):
                        yield item
                    failed = False
                finally:
                    finish(context, start, failed)
                    if token is not None:
                        AUDIT_ID.reset(token)
            return stream

        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if audit_id:
                AUDIT_ID.set(audit_id)  # this RPC's own task
            started.inc()
            start, failed = time.perf_counter(), True
            try:
                result = await behavior(request, context)
                failed = False
                return result
            finally:
                finish(context, start, failed)
        return call


def _with_audit_id(details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
    audit_id = AUDIT_ID.get()
    if not audit_id:
        return details
    metadata = grpc.aio.Metadata(*(details.metadata or ()))
    metadata.add(METADATA_KEY, audit_id)
    return grpc.aio.ClientCallDetails(details.method, details.timeout, metadata, details.credentials,
                                      details.wait_for_ready)


class _UnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_with_audit_id(details), request)


class _UnaryStream(grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_with_audit_id(details), request)


class _StreamUnary(grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(self, continuation: Any, details: Any, request_iterator: Any) -> Any:
        return await continuation(_with_audit_id(details), request_iterator)


class _StreamStream(grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(self, continuation: Any, details: Any, request_iterator: Any) -> Any:
        return await continuation(_with_audit_id(details), request_iterator)


def _behavior(handler: grpc.RpcMethodHandler) -> Callable[..., Any]:
    return handler.unary_unary or handler.unary_stream or handler.stream_unary or handler.stream_stream


class _AsyncOnly(grpc.aio.ServerInterceptor):
    """Runs ``inner`` only for async handlers (OpenTelemetry's aio interceptor awaits every handler; grpc_health's
    servicer is synchronous)."""

    def __init__(self, inner: grpc.aio.ServerInterceptor) -> None:
        self.inner = inner

    async def intercept_service(self, continuation: Callable[..., Any],
                                details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        """Delegate to ``inner`` with the already-resolved handler, unless it is synchronous."""
        handler = await continuation(details)
        behavior = _behavior(handler) if handler is not None else None
        if behavior is None or not (inspect.iscoroutinefunction(behavior) or inspect.isasyncgenfunction(behavior)):
            return handler

        async def resolved(_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
            return handler

        return await self.inner.intercept_service(resolved, details)


def server_interceptors() -> list[grpc.aio.ServerInterceptor]:
    """Interceptors for ``grpc.aio.server``: metrics + audit ID; the OpenTelemetry one when tracing is on."""
    out: list[grpc.aio.ServerInterceptor] = [ServerInterceptor()]
    if STATE.tracing:
        from opentelemetry.instrumentation.grpc import aio_server_interceptor

        out.insert(0, _AsyncOnly(aio_server_interceptor()))
    return out


def client_interceptors() -> list[Any]:
    """Interceptors for gRPC channels: ``x-audit-id`` propagation when logs are JSON; OpenTelemetry when tracing.

    None at all with text logs and tracing off: aio client interceptors cost
    a task per call, so the default request path pays nothing.
    """
    out: list[Any] = []
    if STATE.log_format == "json":
        out += [_UnaryUnary(), _UnaryStream(), _StreamUnary(), _StreamStream()]
    if STATE.tracing:
        from opentelemetry.instrumentation.grpc import aio_client_interceptors

        out += list(aio_client_interceptors())
    return out
