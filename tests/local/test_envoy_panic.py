"""Envoy keeps routing to live gateways when none passes /readyz (etcd unreachable for all), as a client would
still reach kube-apiserver; a gateway's own 5xx answers never eject it (kapi/local/envoy.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.local import envoy

TLS = envoy.TlsFiles(ca="/ca.crt", serving_cert="/s.crt", serving_key="/s.key", client_cert="/c.crt",
                     client_key="/c.key")


def _clusters(config: dict[str, Any]) -> list[dict[str, Any]]:
    return list(config["static_resources"]["clusters"])


@pytest.mark.parametrize("config", [
    envoy.render(gateways=["127.0.0.1:1", "127.0.0.1:2"], tls=TLS, grpc_gateways=["127.0.0.1:3", "127.0.0.1:4"]),
    envoy.render_compose(),
], ids=["launcher", "compose"])
def test_every_cluster_routes_in_panic_and_ejects_only_on_connection_failures(config: dict[str, Any]) -> None:
    clusters = _clusters(config)
    assert [c["name"] for c in clusters] == [envoy.CLUSTER, envoy.GRPC_CLUSTER]
    for c in clusters:
        assert c["common_lb_config"] == {"healthy_panic_threshold": {"value": 50.0}, "update_merge_window": "0s"}
        assert c["health_checks"][0]["http_health_check"]["path"] == "/readyz"
        outlier = c["outlier_detection"]
        assert outlier["enforcing_consecutive_5xx"] == 0 and outlier["enforcing_consecutive_gateway_failure"] == 0
        assert outlier["split_external_local_origin_errors"] is True
        assert outlier["consecutive_local_origin_failure"] == 1 and outlier["max_ejection_percent"] == 100


def test_compose_file_carries_the_panic_threshold() -> None:
    text = envoy.compose_text()
    assert text.count("healthy_panic_threshold:\n        value: 50.0\n") == 2, text
    assert text.count("enforcing_consecutive_gateway_failure: 0\n") == 2
    assert envoy.DEPLOY_CONFIG.read_text() == text  # deploy/envoy.yaml regenerated
