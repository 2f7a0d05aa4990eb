"""The gRPC server interceptor keeps one wrapped handler per method for calls without an audit ID; a call with
one still runs under its own ID, and every call is counted (kapi/observability.py ServerInterceptor)."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from kapi import grpcutil, observability
from tests.test_observability import _Recorder


async def test_calls_with_and_without_an_audit_id_alternate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(observability.STATE, "log_format", "json")  # client interceptors propagate x-audit-id
    server = grpc.aio.server(interceptors=observability.server_interceptors())
    recorder = _Recorder()
    health_pb2_grpc.add_HealthServicer_to_server(recorder, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    labels = {"grpc_type": "unary", "grpc_service": "grpc.health.v1.Health", "grpc_method": "Check",
              "grpc_code": "OK"}
    before = REGISTRY.get_sample_value("grpc_server_handled_total", labels) or 0
    channel = grpcutil.channel(f"127.0.0.1:{port}", None)
    try:
        stub = health_pb2_grpc.HealthStub(channel)
        for audit_id in ("", "", "req-1", "", "req-2", ""):
            token = observability.AUDIT_ID.set(audit_id)
            try:
                await stub.Check(health_pb2.HealthCheckRequest())
            finally:
                observability.AUDIT_ID.reset(token)
    finally:
        await channel.close()
        await server.stop(0)
    assert recorder.audit_ids == ["", "", "req-1", "", "req-2", ""]
    assert REGISTRY.get_sample_value("grpc_server_handled_total", labels) == before + 6
