"""Long request lines and headers (kube-apiserver, Go net/http: up to 1 MiB of headers, any number of fields) pass
Envoy and the gateways."""

from __future__ import annotations

import json
import socket
import ssl
from urllib.parse import urlparse

import h2.events

from kapi.local.launcher import Stack
from tests import h2util
from tests.e2e.test_http_options import _request


def test_long_token_and_long_selector_are_answered_not_refused(stack: Stack, namespace: str) -> None:
    # A 20 KB bearer token (an OIDC token with many groups) is read and judged: 401, not a 400 from the HTTP layer.
    status, _, body = _request(stack, "GET", "/api/v1/namespaces", {"Authorization": "Bearer " + "x" * 20_000})
    assert status in (200, 401), body[:200]  # the admin's client certificate may win: either way, not refused
    # A 12 KB label selector in the URL.
    selector = ",".join(f"k{i}!=v{i}" for i in range(1200))
    status, _, body = _request(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps?labelSelector={selector}")
    assert status == 200, body[:200]
    assert json.loads(body)["kind"] == "ConfigMapList"


def _h2_get(stack: Stack, path: str, headers: list[tuple[str, str]]) -> tuple[list[bytes | None], bytes]:
    """GET ``path`` over HTTP/2 (the admin's client certificate) with extra ``headers``; (the :status values, body).

    The header block is HPACK-encoded with tests.h2util's linear Huffman coder (hpack's own took ~2.4 s for 200 KB).
    """
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    context.set_alpn_protocols(["h2"])
    url = urlparse(stack.url)
    assert url.hostname and url.port
    events: list[object] = []
    with socket.create_connection((url.hostname, url.port), timeout=20) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as sock:
        conn = h2util.client()
        conn.initiate_connection()
        conn.send_headers(1, [(":method", "GET"), (":path", path), (":scheme", "https"), (":authority", "localhost"),
                              *headers], end_stream=True)
        sock.sendall(conn.data_to_send())
        while not any(isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset, h2.events.ConnectionTerminated))
                      for e in events):
            data = sock.recv(65536)
            if not data:
                break
            events.extend(conn.receive_data(data))
            sock.sendall(conn.data_to_send())
    statuses = [dict(e.headers).get(b":status") for e in events if isinstance(e, h2.events.ResponseReceived)]
    return statuses, b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived))


def test_a_200_kb_header_passes_envoy_over_http2(stack: Stack) -> None:
    """nghttp2 (Envoy's default HTTP/2 codec) dropped the connection on any header field over 64 KiB; kube's
    limit is 1 MiB of headers, so Envoy runs oghttp2, which honours max_request_headers_kb."""
    statuses, body = _h2_get(stack, "/api/v1/namespaces/default", [("x-big", "a" * 200_000)])
    assert statuses == [b"200"], body[:300]
    assert json.loads(body)["metadata"]["name"] == "default"


def test_500_header_fields_pass_envoy_and_the_gateway(stack: Stack) -> None:
    """Go's net/http limits header bytes only: 500 fields are served over HTTP/1.1 and HTTP/2 (Envoy's default
    limit was 100 fields, a 431 or a reset stream; aiohttp's 128, a plain-text 400)."""
    fields = [(f"x-many-{i}", "v") for i in range(500)]
    status, _, body = _request(stack, "GET", "/api/v1/namespaces/default", dict(fields))
    assert status == 200, body[:300]
    assert json.loads(body)["metadata"]["name"] == "default"
    statuses, body = _h2_get(stack, "/api/v1/namespaces/default", fields)
    assert statuses == [b"200"], body[:300]
    assert json.loads(body)["metadata"]["name"] == "default"
