"""kapi.local.envoy: the one Envoy configuration used locally and in compose.

See docs/architecture.md, "The request path".
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kapi.local import binaries, envoy
from kapi.local.pki import ensure_pki


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> envoy.TlsFiles:
    pki = ensure_pki(tmp_path_factory.mktemp("state"), port=None)
    return envoy.TlsFiles(ca=str(pki.ca_cert), serving_cert=str(pki.apiserver_cert),
                          serving_key=str(pki.apiserver_key), client_cert=str(pki.front_proxy_cert),
                          client_key=str(pki.front_proxy_key))


@pytest.fixture(scope="module")
def config(tls: envoy.TlsFiles) -> dict[str, Any]:
    return envoy.render(gateways=["127.0.0.1:10001", "127.0.0.1:10002"], tls=tls, port=7443)


def hcm(config: dict[str, Any]) -> dict[str, Any]:
    listener = config["static_resources"]["listeners"][0]
    return listener["filter_chains"][0]["filters"][0]["typed_config"]


def cluster(config: dict[str, Any]) -> dict[str, Any]:
    return config["static_resources"]["clusters"][0]


def sockets(c: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["endpoint"]["address"]["socket_address"] for e in c["load_assignment"]["endpoints"][0]["lb_endpoints"]]


def test_listener_tls_requests_but_does_not_require_client_certificates(config: dict[str, Any],
                                                                         tls: envoy.TlsFiles) -> None:
    listener = config["static_resources"]["listeners"][0]
    assert listener["address"]["socket_address"] == {"address": "127.0.0.1", "port_value": 7443}
    context = listener["filter_chains"][0]["transport_socket"]["typed_config"]
    assert context["require_client_certificate"] is False
    common = context["common_tls_context"]
    assert common["alpn_protocols"] == ["h2", "http/1.1"]
    assert common["validation_context"]["trusted_ca"]["filename"] == tls.ca
    assert common["tls_certificates"][0]["certificate_chain"]["filename"] == tls.serving_cert


def test_client_certificate_forwarding_and_timeouts(config: dict[str, Any]) -> None:
    h = hcm(config)
    assert h["codec_type"] == "AUTO"
    # upgrades are off but on the connect subresources' routes (test_only_connect_subresources_upgrade)
    assert {(u["upgrade_type"], u["enabled"]) for u in h["upgrade_configs"]} == {("websocket", False),
                                                                                 ("spdy/3.1", False)}
    assert h["forward_client_cert_details"] == "SANITIZE_SET"
    assert h["set_current_client_cert_details"] == {"subject": True, "cert": True, "dns": True, "uri": True,
                                                  "chain": True}
    assert h["stream_idle_timeout"] == "0s"  # disabled: watches idle between 60 s bookmarks


def test_routes_never_cut_watches_and_retry_safely(config: dict[str, Any]) -> None:
    routes = hcm(config)["route_config"]["virtual_hosts"][0]["routes"]
    unknown_method, pods, proxies, too_large, *watches, get, rest = routes
    # ?watch=0 / ?watch=false stay plain GETs; ?watch=<other> and /watch/ paths may upgrade to WebSocket
    assert len(watches) == 4
    for plain in watches[:2]:
        assert plain["match"]["query_parameters"][0]["name"] == "watch" and "upgrade_configs" not in plain["route"]
    for upgrading in watches[2:]:
        assert {u["upgrade_type"] for u in upgrading["route"]["upgrade_configs"]} == {"websocket", "spdy/3.1"}
        assert upgrading["match"]["headers"] == [{"name": ":method", "string_match": {"exact": "GET"}}]
    # a method token HTTP/1.1 has no use for (HTTP/2 clients may send any) is a 405 Status from Envoy
    assert unknown_method["match"]["headers"][0]["invert_match"] is True
    assert unknown_method["direct_response"]["status"] == 405
    for connect in (pods, proxies):
        assert connect["route"]["retry_policy"]["retry_on"] == "connect-failure"
    # a declared body over kube's 3 MiB is refused before it is read (a 413 Status via the local reply mapper)
    assert too_large["match"]["headers"][0]["range_match"]["start"] == 3 * 1024 * 1024 + 1
    assert too_large["direct_response"]["status"] == 413
    routes = [pods, proxies, *watches, get, rest]
    assert get["match"] == {"prefix": "/", "headers": [{"name": ":method", "string_match": {"exact": "GET"}}]}
    assert rest["match"] == {"prefix": "/"}
    for r in routes:
        assert r["route"]["cluster"] == "gateways"
        assert r["route"]["timeout"] == "0s"
        assert r["route"]["idle_timeout"] == "0s"
        assert r["route"]["retry_policy"]["num_retries"] == 2
    assert get["route"]["retry_policy"]["retry_on"] == "connect-failure,reset"
    # A reset may come after a non-idempotent request reached a gateway: only GETs retry on it.
    assert rest["route"]["retry_policy"]["retry_on"] == "connect-failure"


def test_upstream_cluster(config: dict[str, Any], tls: envoy.TlsFiles) -> None:
    c = cluster(config)
    assert c["type"] == "STATIC" and c["lb_policy"] == "ROUND_ROBIN"
    assert sockets(c) == [{"address": "127.0.0.1", "port_value": 10001}, {"address": "127.0.0.1", "port_value": 10002}]
    upstream = c["transport_socket"]["typed_config"]
    assert upstream["sni"] == "localhost"
    assert upstream["common_tls_context"]["tls_certificates"][0]["certificate_chain"]["filename"] == tls.client_cert
    assert upstream["common_tls_context"]["validation_context"]["trusted_ca"]["filename"] == tls.ca
    options = c["typed_extension_protocol_options"]["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]
    assert options["explicit_http_config"] == {"http_protocol_options": {}}  # HTTP/1.1 to the gateways
    check = c["health_checks"][0]
    assert check["http_health_check"]["path"] == "/readyz"
    assert check["interval"] == "1s" and check["no_traffic_interval"] == "1s"
    assert check["unhealthy_threshold"] in (1, 2) and check["healthy_threshold"] == 1
    assert c["outlier_detection"]["consecutive_5xx"] > 0
    limits = c["circuit_breakers"]["thresholds"][0]
    assert min(limits["max_connections"], limits["max_pending_requests"], limits["max_requests"]) >= 100_000


def test_admin_is_loopback_only(config: dict[str, Any]) -> None:
    assert config["admin"]["address"]["socket_address"]["address"] == "127.0.0.1"
    assert envoy.render_compose()["admin"]["address"]["socket_address"]["address"] == "127.0.0.1"


def test_compose_rendering_uses_dns_names() -> None:
    c = cluster(envoy.render_compose())
    assert c["type"] == "STRICT_DNS"
    assert sockets(c) == [{"address": "gateway-1", "port_value": 6443}, {"address": "gateway-2", "port_value": 6443}]


@pytest.mark.parametrize("bad", [[], ["nohost"], ["host:port"]])
def test_bad_gateway_addresses(tls: envoy.TlsFiles, bad: list[str]) -> None:
    with pytest.raises(ValueError):
        envoy.render(gateways=bad, tls=tls)


def test_deploy_config_is_up_to_date() -> None:
    assert envoy.DEPLOY_CONFIG.read_text() == envoy.compose_text(), "run: python -m kapi.local.envoy"
    assert envoy.main(["--check"]) == 0


def test_args_disable_hot_restart() -> None:
    assert "--disable-hot-restart" in envoy.args("/x.yaml")


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binaries.envoy()), "--mode", "validate", "-c", str(path), "--disable-hot-restart",
                           "--log-level", "warning"], capture_output=True, text=True, timeout=60)


def test_real_envoy_accepts_the_config(config: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "envoy.yaml"
    path.write_text(envoy.dump(config))
    result = validate(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK" in result.stdout + result.stderr


def test_real_envoy_accepts_the_compose_config(tls: envoy.TlsFiles, tmp_path: Path) -> None:
    # Same file with the container paths pointed at real files (Envoy loads certificates while validating).
    text = envoy.DEPLOY_CONFIG.read_text()
    state = str(Path(tls.ca).parent.parent)
    path = tmp_path / "envoy.yaml"
    path.write_text(text.replace(envoy.COMPOSE_STATE + "/", state + "/"))
    assert yaml.safe_load(path.read_text())["static_resources"]["clusters"][0]["type"] == "STRICT_DNS"
    result = validate(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_local_replies_are_kubernetes_status(config: dict[str, Any]) -> None:
    hcm = config["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]["typed_config"]
    replies = hcm["local_reply_config"]
    assert replies["body_format"]["json_format"]["kind"] == "Status"
    by_status = [m for m in replies["mappers"] if "status_code_filter" in m["filter"]
                 and m["body_format_override"].get("content_type") == "application/json"]  # 431: Go's plain text
    by_code = {m["filter"]["status_code_filter"]["comparison"]["value"]["default_value"]:
               m["body_format_override"]["text_format"] for m in by_status}
    # kube's Status bytes: Go's field order and json.Encoder's newline (Envoy's json_format would sort the keys)
    assert by_code[503] == ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
                            '"%LOCAL_REPLY_BODY%","reason":"ServiceUnavailable","code":%RESPONSE_CODE%}\n')
    assert '"reason":"RequestEntityTooLarge","code":%RESPONSE_CODE%}' in by_code[413]
    retry = {m["filter"]["status_code_filter"]["comparison"]["value"]["default_value"]: m.get("headers_to_add")
             for m in by_status}
    assert retry[503] == [{"header": {"key": "Retry-After", "value": "1"},
                           "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"}]  # client-go retries it
    assert retry[413] is None
    assert hcm["max_request_headers_kb"] == 1024  # Go's 1 MiB of request headers


@pytest.mark.parametrize(("path", "upgrades"), [
    ("/api/v1/namespaces/n/pods/p/exec", True),
    ("/api/v1/namespaces/n/pods/p/attach", True),
    ("/api/v1/namespaces/n/pods/p/portforward", True),
    ("/api/v1/namespaces/n/pods/p/proxy/a/b", True),
    ("/api/v1/namespaces/n/services/s/proxy", True),
    ("/api/v1/nodes/n/proxy/metrics", True),
    ("/api/v1/namespaces/n/configmaps", False),
    ("/api/v1/namespaces/n/pods/p", False),
    ("/api/v1/namespaces/n/pods/p/log", False),
    ("/apis/apps/v1/namespaces/n/deployments/d/exec", False),
])
def test_only_connect_subresources_upgrade(config: dict[str, Any], path: str, upgrades: bool) -> None:
    """A POST saying ``Upgrade: websocket`` elsewhere had its body held until the request timed out (issue 19)."""
    import re

    routes = hcm(config)["route_config"]["virtual_hosts"][0]["routes"]
    route = next(r for r in routes if "route" in r and ("safe_regex" not in r["match"] or re.fullmatch(
        r["match"]["safe_regex"]["regex"], path)))
    enabled = {u["upgrade_type"]: u["enabled"] for u in route["route"].get("upgrade_configs", [])}
    assert (enabled == {"websocket": True, "spdy/3.1": True}) == upgrades


def test_an_upgrade_envoy_refuses_is_a_400_status(config: dict[str, Any]) -> None:
    mapper = hcm(config)["local_reply_config"]["mappers"][1]  # [0]: gRPC calls (test_grpc_route_and_cluster)
    assert mapper["filter"]["status_code_filter"]["comparison"]["value"]["default_value"] == 403
    assert mapper["status_code"] == 400
    assert '"reason":"BadRequest","code":%RESPONSE_CODE%}' in mapper["body_format_override"]["text_format"]


def test_grpc_route_and_cluster(tls: envoy.TlsFiles) -> None:
    # The public gRPC API shares the listener: content-type application/grpc goes to the gateways' gRPC ports
    # over HTTP/2, with the front-proxy identity, each health-checked on its gateway's HTTPS /readyz.
    config = envoy.render(gateways=["127.0.0.1:10001", "127.0.0.1:10002"], tls=tls, port=7443,
                          grpc_gateways=["127.0.0.1:20001", "127.0.0.1:20002"])
    routes = hcm(config)["route_config"]["virtual_hosts"][0]["routes"]
    assert routes[1]["match"] == {"prefix": "/", "grpc": {}}  # [0]: unknown methods (405)
    assert routes[1]["route"]["cluster"] == envoy.GRPC_CLUSTER and routes[1]["route"]["timeout"] == "0s"
    assert routes[1]["route"]["retry_policy"]["retry_on"] == "connect-failure"
    http, grpc_cluster = config["static_resources"]["clusters"]
    assert grpc_cluster["name"] == envoy.GRPC_CLUSTER and sockets(grpc_cluster) == [
        {"address": "127.0.0.1", "port_value": 20001}, {"address": "127.0.0.1", "port_value": 20002}]
    health_ports = [e["endpoint"]["health_check_config"]["port_value"]
                    for e in grpc_cluster["load_assignment"]["endpoints"][0]["lb_endpoints"]]
    assert health_ports == [10001, 10002]
    assert grpc_cluster["health_checks"][0]["http_health_check"] == {"path": "/readyz", "codec_client_type": "HTTP1"}
    options = grpc_cluster["typed_extension_protocol_options"]["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]
    assert "http2_protocol_options" in options["explicit_http_config"]
    assert grpc_cluster["transport_socket"] == http["transport_socket"]
    assert "health_check_config" not in str(http)  # the HTTPS cluster is unchanged
    # Envoy's own answer to a gRPC call (no healthy gateway) keeps its text as grpc-message, not a Status JSON:
    # the first mapper, before the status-code ones
    first = hcm(config)["local_reply_config"]["mappers"][0]
    assert first["filter"]["header_filter"]["header"] == {"name": "content-type",
                                                          "string_match": {"prefix": "application/grpc"}}
    assert first["body_format_override"] == {"text_format": "%LOCAL_REPLY_BODY%"}
    with pytest.raises(ValueError):
        envoy.render(gateways=["127.0.0.1:10001"], tls=tls, grpc_gateways=["127.0.0.1:1", "127.0.0.1:2"])
    assert len(envoy.render(gateways=["127.0.0.1:10001"], tls=tls)["static_resources"]["clusters"]) == 1
