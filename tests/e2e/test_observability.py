"""Metrics end to end on the shared stack: /metrics authorized like kube's non-resource URL."""

from __future__ import annotations


def test_metrics_for_admin_and_monitoring_group(kubectl, namespace):
    kubectl.run("-n", namespace, "create", "configmap", "m1", "--from-literal=k=v")
    kubectl.run("-n", namespace, "get", "configmaps")
    want = ['verb="POST"', 'resource="configmaps"', 'scope="namespace"', 'code="201"', 'component="apiserver"']
    for _ in range(6):  # two gateways behind Envoy: each counts its own requests
        text = kubectl.run("get", "--raw", "/metrics").stdout
        lines = [ln for ln in text.splitlines() if ln.startswith("apiserver_request_total{")]
        if any(all(w in ln for w in want) for ln in lines):
            break
    else:
        raise AssertionError(f"no POST configmaps 201 line in:\n{chr(10).join(lines)}")
    assert "# TYPE apiserver_request_total counter" in text and "_created" not in text
    assert "apiserver_request_duration_seconds_bucket{" in text and "authentication_duration_seconds" in text
    assert "apiserver_current_inflight_requests" in text
    monitor = kubectl.run("get", "--raw", "/metrics", "--as=prometheus", "--as-group=system:monitoring")
    assert "apiserver_request_total" in monitor.stdout


def test_metrics_forbidden_without_the_role(alice):
    denied = alice.run("get", "--raw", "/metrics", check=False)
    assert denied.returncode != 0 and "forbidden" in denied.stderr.lower()


def test_traces_follow_traceparent_through_every_hop(tmp_path, monkeypatch):
    """A stack with OTEL_TRACES_EXPORTER=console: the client's trace ID reaches the gateway and storage spans."""
    import json as _json
    import ssl
    import time
    import urllib.request

    from kapi.local.launcher import Stack

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    with Stack(tmp_path / "state", port=0, gateways=1, extra_flags=["--log-format=json"]) as stack:
        context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
        request = urllib.request.Request(stack.url + "/api/v1/namespaces/default/configmaps",
                                         headers={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"})
        with urllib.request.urlopen(request, context=context, timeout=30) as reply:
            audit_id = reply.headers["Audit-Id"]
            assert _json.loads(reply.read())["kind"] == "ConfigMapList"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            gateway, storage = stack.log_path("gateway-1").read_text(), stack.log_path("storage-1").read_text()
            if f"0x{trace_id}" in gateway and f"0x{trace_id}" in storage:
                break
            time.sleep(0.2)
    assert '"name": "list configmaps"' in gateway and f'"kapi.audit_id": "{audit_id}"' in gateway
    assert f"0x{trace_id}" in storage and '"kind": "SpanKind.SERVER"' in storage
