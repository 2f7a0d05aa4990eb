"""Envoy's bootstrap configuration, rendered from one function for the launcher and for compose.

Envoy is the API endpoint (docs/architecture.md, "The request path"): it terminates TLS
with ``apiserver.crt``, requests (does not require) a client certificate
validated against the cluster CA, forwards the verified certificate to the
gateways in ``x-forwarded-client-cert`` (``SANITIZE_SET``: a client's own
header is dropped), and balances round robin over the gateways, which it
reaches over HTTP/1.1 + TLS with the ``front-proxy-client`` identity.

Watches are long requests: the route timeout, route idle timeout and the
stream idle timeout are disabled (a gateway sends a bookmark or event well
within a minute, and a client ends a watch with its own ``timeoutSeconds``),
and the circuit-breaker limits are raised so thousands of concurrent watches
fit. Active health checks on ``/readyz`` every second (also without traffic)
plus outlier detection on connection failures take a dead gateway out of
rotation within about a second (also one that is shutting down, or whose
storage cannot reach etcd while the others' can: ``/readyz`` fails). When
fewer than half the gateways pass ``/readyz`` (etcd unreachable for all of
them), Envoy's panic routing sends requests to every gateway anyway, as a
client of kube-apiserver would still reach it: ``/version``, discovery and
the health endpoints answer from memory, and each request that needs etcd
fails on its own (504). A gateway's HTTP answer, a 5xx too, is kube's answer
and never ejects it (only connection failures and resets do). Connection
failures are retried on another gateway (safe for every method: nothing
reached a gateway), and resets are retried for GET only.
What Envoy answers itself (503 when no gateway can take the request, 413,
...) is a Kubernetes ``Status`` JSON, not Envoy's plain text; headers over
Go's 1 MiB on HTTP/1.x are Go's plain-text 431 (over HTTP/2 Envoy resets the
stream). As in Go, which counts only bytes, any number of header fields within that 1 MiB passes (Envoy's
default is 100), and over HTTP/2 Envoy advertises Go's SETTINGS_MAX_HEADER_LIST_SIZE. HTTP/1.0 requests are
served as Go's net/http serves them.

gRPC (the public API, ``kapi.api.v1``, docs/grpc.md) shares the listener:
a route matching ``content-type: application/grpc`` sends it over HTTP/2 +
TLS (the same ``front-proxy-client`` identity) to each gateway's
``--grpc-listen-address``, health-checked through the gateway's HTTPS
``/readyz`` (with the same panic routing). One port means one certificate, one client-certificate check
and one address for clients; HTTP/2 tells the two apart by content type.

``python -m kapi.local.envoy [--check]`` regenerates (or checks) ``deploy/envoy.yaml``,
the compose rendering of :func:`render`.
"""

from __future__ import annotations

import argparse
import copy
import ipaddress
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kapi.limits import MAX_BODY_BYTES, MAX_HEADER_BYTES  # the gateways' limits too

HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
ROUTER = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
DOWNSTREAM_TLS = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext"
UPSTREAM_TLS = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext"
HTTP_OPTIONS = "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
MAX_CONNECTIONS_MONITOR = ("type.googleapis.com/envoy.extensions.resource_monitors."
                           "downstream_connections.v3.DownstreamConnectionsConfig")

CLUSTER = "gateways"
GRPC_CLUSTER = "gateways-grpc"  # the gateways' public gRPC API ports (HTTP/2)
# Circuit-breaker limits: every open watch is one active request (and, over HTTP/1.1, one upstream connection).
LIMIT = 100_000
DEFAULT_HTTP10_HOST = "localhost"  # the Host of an HTTP/1.0 request that names none
# Envoy's panic threshold (percent of gateways passing /readyz): below it, route to all (Envoy's default, 50).
PANIC_THRESHOLD = 50.0
GATEWAY_SAN = "gateway"  # only gateway.crt carries this DNS name among the serving certificates

REPO = Path(__file__).resolve().parents[2]
DEPLOY_CONFIG = REPO / "deploy" / "envoy.yaml"


@dataclass(frozen=True)
class TlsFiles:
    """Paths Envoy reads: the cluster CA, its serving pair, and its client pair towards the gateways."""

    ca: str
    serving_cert: str
    serving_key: str
    client_cert: str
    client_key: str


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"expected host:port, got {address!r}")
    return host.strip("[]"), int(port)


def _socket(host: str, port: int) -> dict[str, Any]:
    return {"socket_address": {"address": host, "port_value": port}}


def _route(retry_on: str, cluster: str = CLUSTER) -> dict[str, Any]:
    return {
        "cluster": cluster,
        "timeout": "0s",  # no route timeout: watches stream for as long as the client asks
        "idle_timeout": "0s",
        "retry_policy": {
            "retry_on": retry_on,
            "num_retries": 2,
            "retry_host_predicate": [{"name": "envoy.retry_host_predicates.previous_hosts",
                                      "typed_config": {"@type": "type.googleapis.com/envoy.extensions."
                                                                "retry.host.previous_hosts.v3.PreviousHostsPredicate"}}],
            "host_selection_retry_max_attempts": 3,
        },
    }


# Envoy's own answers (no healthy gateway, a reset before headers, an oversized request) as a Kubernetes Status,
# so clients see the same JSON shape as from a gateway ("API Conventions", "Response Status Kind").
_LOCAL_REPLY_REASONS = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 408: "Timeout",
                        413: "RequestEntityTooLarge",
                        429: "TooManyRequests", 500: "InternalError", 502: "InternalError",
                        503: "ServiceUnavailable", 504: "Timeout"}


# Go's net/http body (and status text) for request headers over MaxHeaderBytes on HTTP/1.x.
HEADERS_TOO_LARGE = "431 Request Header Fields Too Large"

# Go's net/http limits the header block's bytes only, never the number of fields. Every field takes at least one
# byte of Envoy's max_request_headers_kb (it counts names and values), so with the field limit at that many bytes
# no header list within 1 MiB reaches it (Envoy's max_headers_count default is 100; its only bound is >= 1).
MAX_HEADERS_COUNT = MAX_HEADER_BYTES

# HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 6.5.2) and what Go's http2 server advertises for it: MaxHeaderBytes
# plus 10 fields' 32-byte HPACK overhead (golang.org/x/net/http2 config.go adjustHTTP1MaxHeaderSize), 1048896.
SETTINGS_MAX_HEADER_LIST_SIZE = 0x6
MAX_HEADER_LIST_SIZE = MAX_HEADER_BYTES + 10 * 32


# Paths of the connect subresources (pods exec/attach/portforward/proxy, services and nodes proxy), which may
# upgrade the connection to WebSocket or SPDY; the query string is not part of what the regex sees.
# (two regexes: RE2 programs in Envoy stay under 100 instructions).
CONNECT_PATH_REGEXES = (r"/api/v1/namespaces/[^/]+/pods/[^/]+/(exec|attach|portforward|proxy)(/.*)?",
                        r"/api/v1/(namespaces/[^/]+/services|nodes)/[^/]+/proxy(/.*)?")
UPGRADE_TYPES = ("websocket", "spdy/3.1")


def _get() -> dict[str, Any]:
    """A fresh header matcher of GET requests (shared dicts would be YAML anchors in deploy/envoy.yaml)."""
    return {"name": ":method", "string_match": {"exact": "GET"}}


# Watch requests, which may upgrade to WebSocket too; ?watch=0 and ?watch=false (any case) are lists.
NOT_WATCH_QUERIES = ({"name": "watch", "string_match": {"exact": "0"}},
                     {"name": "watch", "string_match": {"exact": "false", "ignore_case": True}})
WATCH_MATCHES = ({"prefix": "/", "query_parameters": [{"name": "watch", "present_match": True}]},
                 {"safe_regex": {"regex": r"/(api/[^/]+|apis/[^/]+/[^/]+)/watch/.*"}})


def _status_format(reason: str) -> dict[str, Any]:
    """Envoy's own answer with status ``reason`` as kube's Status bytes: Go's field order (kind, apiVersion,
    metadata, status, message, reason, code) and json.Encoder's trailing newline. A text format, because Envoy's
    ``json_format`` always sorts the keys; the message is Envoy's own fixed text or kapi's (``no healthy
    upstream``, ``upstream connect error or disconnect/reset before headers. ...``, the 413 below), none with a
    character JSON would escape. Codes without a mapper get :func:`_status_json_format`."""
    return {"text_format": '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                           '"message":"%LOCAL_REPLY_BODY%","reason":"' + reason + '","code":%RESPONSE_CODE%}\n',
            "content_type": "application/json"}


def _status_json_format(reason: str) -> dict[str, Any]:
    """The Status of a code no mapper names, JSON-escaped by Envoy whatever the message (keys sorted)."""
    return {"json_format": {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": "%LOCAL_REPLY_BODY%", "reason": reason, "code": "%RESPONSE_CODE%"},
            "content_type": "application/json"}


def local_reply_config() -> dict[str, Any]:
    """Envoy ``local_reply_config``: every reply Envoy makes itself is a ``Status`` JSON with kube's reason, but
    a gRPC call's (plain text for grpc-message) and the 431 for headers over 1 MiB (Go's plain text)."""
    # Envoy's only own 403: an upgrade on a route that allows none (kube would not upgrade it either).
    upgrade_refused = {"filter": {"status_code_filter": {"comparison": {
                           "op": "EQ", "value": {"default_value": 403, "runtime_key": "kapi.local_reply.403"}}}},
                       "status_code": 400,
                       "body": {"inline_string": "the connection can be upgraded only for the connect subresources "
                                                 "(exec, attach, portforward, proxy)"},
                       "body_format_override": _status_format("BadRequest")}
    # Headers over max_request_headers_kb on HTTP/1.x: Go's net/http answers them in plain text (server.go,
    # errTooLarge), not with a Status, and closes the connection (as Envoy does).
    headers_too_large = {"filter": {"status_code_filter": {"comparison": {
                             "op": "EQ", "value": {"default_value": 431, "runtime_key": "kapi.local_reply.431"}}}},
                         "body_format_override": {"text_format": HEADERS_TOO_LARGE,
                                                  "content_type": "text/plain; charset=utf-8"}}
    # A gRPC call Envoy answers itself (no healthy gateway) ends with grpc-status (UNAVAILABLE for 503) and
    # grpc-message, which Envoy fills from the body: the plain text there, not a Status JSON.
    grpc_call = {"filter": {"header_filter": {"header": {"name": "content-type",
                                                         "string_match": {"prefix": "application/grpc"}}}},
                 "body_format_override": {"text_format": "%LOCAL_REPLY_BODY%"}}
    return {
        "mappers": [grpc_call, upgrade_refused, headers_too_large, *({"filter": {"status_code_filter": {"comparison": {
                        "op": "EQ", "value": {"default_value": code, "runtime_key": f"kapi.local_reply.{code}"}}}},
                     "body_format_override": _status_format(reason),
                     # client-go retries a 5xx or 429 that carries Retry-After (no gateway free: try again soon)
                     **({"headers_to_add": [{"header": {"key": "Retry-After", "value": "1"},
                                             "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"}]}
                        if code in (429, 503) else {})}
                    for code, reason in _LOCAL_REPLY_REASONS.items())],
        "body_format": _status_json_format("InternalError"),
    }


def render(*, gateways: Sequence[str], tls: TlsFiles, bind_address: str = "127.0.0.1", port: int = 6443,
           admin_address: str = "127.0.0.1", admin_port: int = 0, sni: str = "localhost",
           grpc_gateways: Sequence[str] = ()) -> dict[str, Any]:
    """Envoy's bootstrap config (a dict to dump as YAML).

    ``gateways`` are host:port addresses of the gateways' HTTPS ports (IP
    addresses give a STATIC cluster, names a STRICT_DNS one);
    ``grpc_gateways`` the same gateways' gRPC API addresses, in the same
    order (empty: no gRPC route). ``port`` 0 lets
    Envoy pick the listener port (read it back from the admin API). The admin
    interface listens on ``admin_address:admin_port`` (0 = any free port).
    Raises ValueError on a malformed address.
    """
    endpoints = [_split(a) for a in gateways]
    if not endpoints:
        raise ValueError("at least one gateway address is required")
    grpc_endpoints = [_split(a) for a in grpc_gateways]
    if grpc_endpoints and len(grpc_endpoints) != len(endpoints):
        raise ValueError("grpc_gateways must name one gRPC address per gateway")
    static = all(_is_ip(host) for host, _ in endpoints)
    hcm = {
        "@type": HCM,
        "stat_prefix": "kapi",
        "codec_type": "AUTO",
        "use_remote_address": True,
        "stream_idle_timeout": "0s",  # disabled: far above the gateways' 60 s watch bookmark interval
        # kubectl exec/attach/port-forward upgrade to WebSocket or SPDY: only the connect subresources' route
        # passes an upgrade to the gateways. Elsewhere a POST or PUT saying "Upgrade" had its body held until the
        # request timed out (504 after 60 s); now Envoy refuses it at once (400, see local_reply_config).
        "upgrade_configs": [{"upgrade_type": t, "enabled": False} for t in UPGRADE_TYPES],
        "request_timeout": "0s",
        "common_http_protocol_options": {"idle_timeout": "3600s", "headers_with_underscores_action": "ALLOW",
                                         "max_headers_count": MAX_HEADERS_COUNT},
        # Go's net/http serves HTTP/1.0 (kube-apiserver answers `curl --http1.0`; the connection closes after the
        # response unless the request asks for keep-alive): Envoy's default is 426 Upgrade Required. A request
        # without Host gets DEFAULT_HTTP10_HOST (Go accepts an HTTP/1.0 request without one).
        "http_protocol_options": {"accept_http_10": True, "default_host_for_http_10": DEFAULT_HTTP10_HOST},
        # Envoy sends no SETTINGS_MAX_HEADER_LIST_SIZE of its own (oghttp2 enforces max_request_headers_kb
        # silently); Go's http2 server advertises one, so a client can see the limit before it sends.
        "http2_protocol_options": {"max_concurrent_streams": 1000,
                                   "initial_stream_window_size": 1048576,
                                   "initial_connection_window_size": 16777216,
                                   "custom_settings_parameters": [{"identifier": SETTINGS_MAX_HEADER_LIST_SIZE,
                                                                   "value": MAX_HEADER_LIST_SIZE}]},
        "local_reply_config": local_reply_config(),
        # Go's net/http sends no Server header: Envoy adds none of its own ("server: envoy"), to its local replies
        # either, and passes the gateways' (they send none: services/gateway/filters/serverheader.py).
        "server_header_transformation": "PASS_THROUGH",
        # Go's http.Server reads up to 1 MiB of request headers (DefaultMaxHeaderBytes): long OIDC tokens fit.
        "max_request_headers_kb": MAX_HEADER_BYTES // 1024,
        "forward_client_cert_details": "SANITIZE_SET",
        "set_current_client_cert_details": {"subject": True, "cert": True, "dns": True, "uri": True, "chain": True},
        "route_config": {
            "name": "kapi",
            "virtual_hosts": [{
                "name": "kapi",
                "domains": ["*"],
                "routes": [
                    # A method HTTP/1.1 has no use for (an HTTP/2 client may send any token; the gateways'
                    # HTTP/1.1 parser would answer it in plain text): 405 Status here.
                    {"match": {"prefix": "/", "headers": [{"name": ":method", "invert_match": True, "string_match": {
                        "safe_regex": {"regex": "GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|TRACE|CONNECT"}}}]},
                     "direct_response": {"status": 405, "body": {
                         "inline_string": "the server does not allow this method on the requested resource"}}},
                    # The public gRPC API (content-type application/grpc): the gateways' gRPC ports. Retried
                    # only when the call never reached a gateway (a watch or a write must not run twice).
                    *([{"match": {"prefix": "/", "grpc": {}}, "route": _route("connect-failure", GRPC_CLUSTER)}]
                      if grpc_endpoints else []),
                    # The connect subresources, the only requests that upgrade (kube's rest.Connecter).
                    *({"match": {"safe_regex": {"regex": regex}},
                       "route": {**_route("connect-failure"),
                                 "upgrade_configs": [{"upgrade_type": t, "enabled": True} for t in UPGRADE_TYPES]}}
                      for regex in CONNECT_PATH_REGEXES),
                    # A body declared larger than kube's limit is refused before it is read (413 Status): a
                    # gateway's 413 after 3 MiB reached an HTTP/2 client as a reset stream while it still sent.
                    {"match": {"prefix": "/", "headers": [{"name": "content-length", "range_match": {
                        "start": MAX_BODY_BYTES + 1, "end": 1 << 62}}]},
                     "direct_response": {"status": 413, "body": {
                         "inline_string": f"Request entity too large: limit is {MAX_BODY_BYTES}"}}},
                    # A watch may upgrade to WebSocket (kube's serveWatchHandler: wsstream.IsWebSocketRequest; a
                    # GET has no body to hold): ?watch= with any value but 0 and false (metav1's bool), or a
                    # legacy /watch/ path. (A non-watch GET stays refused: Envoy answers an upstream's 2xx to a
                    # WebSocket upgrade with an empty local reply, where Go's net/http ignores the upgrade.)
                    *({"match": {"prefix": "/", "query_parameters": [query], "headers": [_get()]},
                       "route": _route("connect-failure,reset")} for query in NOT_WATCH_QUERIES),
                    *({"match": {**match, "headers": [_get()]},
                       "route": {**_route("connect-failure,reset"),
                                 "upgrade_configs": [{"upgrade_type": t, "enabled": True} for t in UPGRADE_TYPES]}}
                      for match in WATCH_MATCHES),
                    # GETs (reads and watches) are idempotent: retry resets on another gateway too.
                    {"match": {"prefix": "/", "headers": [{"name": ":method", "string_match": {"exact": "GET"}}]},
                     "route": _route("connect-failure,reset")},
                    # Anything else only when the request never reached a gateway.
                    {"match": {"prefix": "/"}, "route": _route("connect-failure")},
                ],
            }],
        },
        # No x-envoy-* response headers (x-envoy-upstream-service-time): kube-apiserver sends none.
        "http_filters": [{"name": "envoy.filters.http.router",
                          "typed_config": {"@type": ROUTER, "suppress_envoy_headers": True}}],
    }
    listener = {
        "name": "https",
        "address": _socket(bind_address, port),
        "per_connection_buffer_limit_bytes": 4 * 1024 * 1024,
        # Without SO_REUSEPORT a second stack on the same port fails to start instead of sharing it.
        "enable_reuse_port": False,
        "filter_chains": [{
            "filters": [{"name": "envoy.filters.network.http_connection_manager", "typed_config": hcm}],
            "transport_socket": {
                "name": "envoy.transport_sockets.tls",
                "typed_config": {
                    "@type": DOWNSTREAM_TLS,
                    "require_client_certificate": False,
                    "common_tls_context": {
                        "alpn_protocols": ["h2", "http/1.1"],
                        "tls_certificates": [{"certificate_chain": {"filename": tls.serving_cert},
                                              "private_key": {"filename": tls.serving_key}}],
                        "validation_context": {"trusted_ca": {"filename": tls.ca}},
                    },
                },
            },
        }],
    }
    cluster = {
        "name": CLUSTER,
        "type": "STATIC" if static else "STRICT_DNS",
        "connect_timeout": "1s",
        "lb_policy": "ROUND_ROBIN",
        # Panic routing below PANIC_THRESHOLD percent healthy: with every gateway failing /readyz (storage cannot
        # reach etcd) Envoy still routes to all of them, as a client would reach a kube-apiserver whose /readyz
        # fails ("no healthy upstream" for /version and /livez is no answer kube gives). Health changes apply at
        # once (Envoy merges them for 1 s by default: a gateway that failed /readyz still got requests that long).
        "common_lb_config": {"healthy_panic_threshold": {"value": PANIC_THRESHOLD},
                             "update_merge_window": "0s"},
        "load_assignment": {
            "cluster_name": CLUSTER,
            "endpoints": [{"lb_endpoints": [{"endpoint": {"address": _socket(h, p)}} for h, p in endpoints]}],
        },
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                "@type": HTTP_OPTIONS,
                "common_http_protocol_options": {"idle_timeout": "300s"},
                "explicit_http_config": {"http_protocol_options": {}},
            },
        },
        "transport_socket": {
            "name": "envoy.transport_sockets.tls",
            "typed_config": {
                "@type": UPSTREAM_TLS,
                "sni": sni,
                "common_tls_context": {
                    "tls_certificates": [{"certificate_chain": {"filename": tls.client_cert},
                                          "private_key": {"filename": tls.client_key}}],
                    "validation_context": {
                        "trusted_ca": {"filename": tls.ca},
                        "match_typed_subject_alt_names": [{"san_type": "DNS", "matcher": {"exact": GATEWAY_SAN}}],
                    },
                },
            },
        },
        "health_checks": [{
            "timeout": "1s",
            "interval": "1s",
            "no_traffic_interval": "1s",
            "unhealthy_threshold": 1,
            "healthy_threshold": 1,
            "http_health_check": {"path": "/readyz"},
        }],
        # Only failures to reach a gateway (connect failure, reset, timeout: "local origin") eject it. Its 5xx
        # answers are kube's (504 while etcd does not answer, 503 while admission is away) and are detected but
        # not enforced: ejecting on them turned one slow etcd into "no healthy upstream" for every request.
        "outlier_detection": {
            "consecutive_5xx": 5,
            "enforcing_consecutive_5xx": 0,
            "consecutive_gateway_failure": 2,
            "enforcing_consecutive_gateway_failure": 0,
            "consecutive_local_origin_failure": 1,
            "split_external_local_origin_errors": True,
            "interval": "1s",
            "base_ejection_time": "2s",
            "max_ejection_percent": 100,
        },
        "circuit_breakers": {"thresholds": [{
            "priority": "DEFAULT", "max_connections": LIMIT, "max_pending_requests": LIMIT,
            "max_requests": LIMIT, "max_retries": 1000,
        }]},
    }
    if not static:
        cluster["dns_lookup_family"] = "V4_ONLY"
        cluster["dns_refresh_rate"] = "2s"
    clusters = [cluster]
    if grpc_endpoints:
        clusters.append(_grpc_cluster(cluster, grpc_endpoints, [p for _, p in endpoints]))
    return {
        "admin": {"address": _socket(admin_address, admin_port)},
        "static_resources": {"listeners": [listener], "clusters": clusters},
        # The oghttp2 HTTP/2 codec: nghttp2's HPACK decoder refuses any header field over 64 KiB (a GOAWAY with
        # COMPRESSION_ERROR, no Status) whatever max_request_headers_kb says; oghttp2 honours that 1 MiB limit as
        # Go's HTTP/2 server does (MaxHeaderListSize from DefaultMaxHeaderBytes).
        # A static layer alone takes effect (GET /runtime shows the flag true; an admin layer only lets /runtime_modify
        # change flags on a running Envoy, which nothing here does).
        "layered_runtime": {"layers": [
            {"name": "static", "static_layer": {"envoy.reloadable_features.http2_use_oghttp2": True}},
        ]},
        "overload_manager": {"resource_monitors": [{
            "name": "envoy.resource_monitors.global_downstream_max_connections",
            "typed_config": {"@type": MAX_CONNECTIONS_MONITOR, "max_active_downstream_connections": LIMIT},
        }]},
    }


def _grpc_cluster(http: dict[str, Any], endpoints: list[tuple[str, int]], health_ports: list[int]
                  ) -> dict[str, Any]:
    """The cluster of the gateways' gRPC ports: as ``http`` (TLS identity, balancing, outlier detection, limits)
    but HTTP/2 upstream, each endpoint health-checked on its gateway's HTTPS ``/readyz`` (``health_ports``), so
    a gateway leaves both clusters together (shutdown, storage cut off from etcd)."""
    cluster = copy.deepcopy(http)
    cluster["name"] = GRPC_CLUSTER
    cluster["load_assignment"] = {"cluster_name": GRPC_CLUSTER, "endpoints": [{"lb_endpoints": [
        {"endpoint": {"address": _socket(h, p), "health_check_config": {"port_value": health}}}
        for (h, p), health in zip(endpoints, health_ports, strict=True)]}]}
    cluster["typed_extension_protocol_options"] = {
        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
            "@type": HTTP_OPTIONS,
            "common_http_protocol_options": {"idle_timeout": "300s"},
            "explicit_http_config": {"http2_protocol_options": {
                "max_concurrent_streams": 1000, "initial_stream_window_size": 1048576,
                "initial_connection_window_size": 16777216}},
        },
    }
    cluster["health_checks"][0]["http_health_check"]["codec_client_type"] = "HTTP1"
    return cluster


def dump(config: dict[str, Any]) -> str:
    """The YAML text of a rendered config (stable key order, as rendered)."""
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False)


def args(config_path: str, *, log_level: str = "info", admin_address_path: str | None = None) -> list[str]:
    """Envoy's arguments (without the binary) for ``config_path``.

    ``--disable-hot-restart`` keeps Envoy off shared memory so several stacks
    (tests, benchmarks, a dev stack) run on one machine. ``admin_address_path``
    makes Envoy write its admin address there (for admin port 0).
    """
    out = ["-c", config_path, "--disable-hot-restart", "--log-level", log_level]
    if admin_address_path:
        out += ["--admin-address-path", admin_address_path]
    return out


# Compose: container hostnames and the paths of the shared state volume.
COMPOSE_STATE = "/state"
COMPOSE_GATEWAYS = ("gateway-1:6443", "gateway-2:6443")
COMPOSE_GRPC_GATEWAYS = ("gateway-1:6444", "gateway-2:6444")  # their --grpc-listen-address
COMPOSE_CONFIG_PATH = "/etc/envoy/envoy.yaml"


def compose_tls(state: str = COMPOSE_STATE) -> TlsFiles:
    """Envoy's PKI paths inside a container that mounts the state volume at ``state``."""
    pki = f"{state}/pki"
    return TlsFiles(ca=f"{pki}/ca.crt", serving_cert=f"{pki}/apiserver.crt", serving_key=f"{pki}/apiserver.key",
                    client_cert=f"{pki}/front-proxy-client.crt", client_key=f"{pki}/front-proxy-client.key")


def render_compose() -> dict[str, Any]:
    """The config compose.yaml's Envoy runs (``deploy/envoy.yaml``): port 6443 on all interfaces."""
    return render(gateways=COMPOSE_GATEWAYS, tls=compose_tls(), bind_address="0.0.0.0", port=6443,
                  admin_address="127.0.0.1", admin_port=9901, grpc_gateways=COMPOSE_GRPC_GATEWAYS)


HEADER = "# Generated by `python -m kapi.local.envoy` from kapi/local/envoy.py (render_compose); do not edit.\n"


def compose_text() -> str:
    """The exact content of ``deploy/envoy.yaml``."""
    return HEADER + dump(render_compose())


def main(argv: Sequence[str] | None = None) -> int:
    """Write ``deploy/envoy.yaml``, or with ``--check`` exit 1 if it differs from a fresh render."""
    parser = argparse.ArgumentParser(prog="python -m kapi.local.envoy", description=main.__doc__)
    parser.add_argument("--check", action="store_true", help="Only check that deploy/envoy.yaml is up to date.")
    parser.add_argument("--output", default=str(DEPLOY_CONFIG), help="Where to write the compose config.")
    opts = parser.parse_args(argv)
    text = compose_text()
    out = Path(opts.output)
    if opts.check:
        if not out.exists() or out.read_text() != text:
            print(f"{out} is out of date: run python -m kapi.local.envoy", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
