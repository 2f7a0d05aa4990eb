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
