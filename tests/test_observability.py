"""kapi.observability: tracing switch (OTEL_* table), JSON logs with the audit ID, gRPC metrics and x-audit-id."""

from __future__ import annotations

import io
import json
import logging
import urllib.request

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from kapi import grpcutil, observability


@pytest.mark.parametrize("env,on", [
    ({}, False),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, True),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317"}, True),
    ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
    ({"OTEL_TRACES_EXPORTER": "console"}, True),
    ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4317"}, False),
    ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4317"}, False),
    ({"OTEL_SERVICE_NAME": "x"}, False),
])
def test_tracing_requested(env, on):
    assert observability.tracing_requested(env) is on


def test_json_log_lines_carry_the_audit_id(monkeypatch):
    monkeypatch.setattr(observability.STATE, "log_format", "json")
    monkeypatch.setattr(observability.STATE, "service", "storage")
    stream = io.StringIO()
    handler = observability.log_handler()
    handler.setStream(stream)  # type: ignore[attr-defined]
    logger = logging.getLogger("kapi.test.json")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        token = observability.AUDIT_ID.set("a-1")
        logger.warning("hello %s", "world")
        observability.AUDIT_ID.reset(token)
        try:
            raise ValueError("bad")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["msg"] == "hello world" and first["auditID"] == "a-1" and first["level"] == "WARNING"
    assert first["service"] == "storage" and first["logger"] == "kapi.test.json" and first["ts"].endswith("Z")
    assert "auditID" not in second and "ValueError: bad" in second["exc"]


def test_text_log_shows_audit_id(monkeypatch):
    monkeypatch.setattr(observability.STATE, "log_format", "text")
    record = logging.LogRecord("kapi.x", logging.INFO, __file__, 1, "served", (), None)
    token = observability.AUDIT_ID.set("abc")
    try:
        text = observability.log_handler().format(record)
    finally:
        observability.AUDIT_ID.reset(token)
    assert text.endswith("INFO kapi.x: [abc] served")


class _Recorder(health_pb2_grpc.HealthServicer):
    def __init__(self) -> None:
        self.audit_ids: list[str] = []

    async def Check(self, request, context):  # noqa: N802 - gRPC method name
        self.audit_ids.append(observability.AUDIT_ID.get())
        if request.service == "missing":
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such service")
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


async def test_server_metrics_and_audit_id_propagation(monkeypatch):
    monkeypatch.setattr(observability.STATE, "log_format", "json")  # client interceptors propagate x-audit-id
    server = grpc.aio.server(interceptors=observability.server_interceptors())
    recorder = _Recorder()
    health_pb2_grpc.add_HealthServicer_to_server(recorder, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    labels = {"grpc_type": "unary", "grpc_service": "grpc.health.v1.Health", "grpc_method": "Check"}
    ok_before = REGISTRY.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "OK"}) or 0
    nf_before = REGISTRY.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "NOT_FOUND"}) or 0
    channel = grpcutil.channel(f"127.0.0.1:{port}", None)
    try:
        stub = health_pb2_grpc.HealthStub(channel)
        token = observability.AUDIT_ID.set("req-42")
        try:
            await stub.Check(health_pb2.HealthCheckRequest())
            with pytest.raises(grpc.RpcError):
                await stub.Check(health_pb2.HealthCheckRequest(service="missing"))
        finally:
            observability.AUDIT_ID.reset(token)
        await stub.Check(health_pb2.HealthCheckRequest())
    finally:
        await channel.close()
        await server.stop(0)
    assert recorder.audit_ids == ["req-42", "req-42", ""]
    assert REGISTRY.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "OK"}) == ok_before + 2
    assert REGISTRY.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "NOT_FOUND"}) == \
        nf_before + 1
    assert (REGISTRY.get_sample_value("grpc_server_handling_seconds_count", labels) or 0) >= 3


def test_metrics_listener():
    port = observability.serve_metrics("127.0.0.1:0")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            text = reply.read().decode()
    finally:
        observability.STATE.metrics_server.shutdown()
    assert "process_cpu_seconds_total" in text
