"""Response headers through the whole stack (Envoy and a gateway) as kube-apiserver's Go net/http writes them.

kube-apiserver sends no ``Server`` header and no ``x-envoy-*`` header; kapi's Envoy used to add ``server: envoy``
and ``x-envoy-upstream-service-time``, and the gateways ``Server: Python/3.11 aiohttp/...``
(kapi/local/envoy.py, services/gateway/filters/serverheader.py). ``Server-Timing`` (kapi's own, README) stays.
"""

from __future__ import annotations

import http.client
import ssl
from urllib.parse import urlsplit

from kapi.local.launcher import Stack


def _request(stack: Stack, method: str, path: str, headers: dict[str, str] | None = None
             ) -> tuple[int, http.client.HTTPMessage]:
    """One HTTP/1.1 request through Envoy as the admin: (status, response headers); the body is not read."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    context.check_hostname = False
    url = urlsplit(stack.url)
    conn = http.client.HTTPSConnection(url.hostname or "127.0.0.1", url.port, context=context, timeout=30)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.msg
    finally:
        conn.close()


def _proxy_headers(headers: http.client.HTTPMessage) -> list[str]:
    """The names of ``Server`` and ``x-envoy-*`` headers in a response (kube-apiserver sends none)."""
    return [name for name in headers if name.lower() == "server" or name.lower().startswith("x-envoy-")]


def test_get_has_no_server_or_envoy_headers(stack: Stack) -> None:
    status, headers = _request(stack, "GET", "/api/v1/namespaces/default")
    assert status == 200
    assert _proxy_headers(headers) == [], headers
    assert headers.get("Server-Timing"), headers  # kapi's documented timing header stays


def test_not_found_has_no_server_or_envoy_headers(stack: Stack) -> None:
    status, headers = _request(stack, "GET", "/api/v1/namespaces/crdoapi-no-such-namespace")
    assert status == 404
    assert _proxy_headers(headers) == [], headers


def test_watch_has_no_server_or_envoy_headers(stack: Stack) -> None:
    status, headers = _request(stack, "GET", "/api/v1/namespaces?watch=1&timeoutSeconds=1")
    assert status == 200 and headers.get("Content-Type") == "application/json", headers
    assert _proxy_headers(headers) == [], headers


def test_envoys_413_has_no_server_or_envoy_headers(stack: Stack) -> None:
    """A body declared over 3 MiB: Envoy's own Status reply (local_reply_config), no body sent."""
    status, headers = _request(stack, "POST", "/api/v1/namespaces",
                               {"Content-Type": "application/json", "Content-Length": str(4 * 1024 * 1024)})
    assert status == 413
    assert _proxy_headers(headers) == [], headers
