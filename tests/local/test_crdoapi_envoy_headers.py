"""Envoy's own replies and a gateway's answers carry no ``Server`` and no ``x-envoy-*`` header (Go's net/http,
which serves kube-apiserver, writes neither).

The real Envoy as kapi renders it (kapi.local.envoy: ``server_header_transformation: PASS_THROUGH``, the router's
``suppress_envoy_headers``) in front of a stand-in gateway: an aiohttp app with the gateways' response hook
(services/gateway/filters/serverheader.py). No etcd or services needed.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from aiohttp import web

from kapi.local import envoy
from kapi.local.pki import Pki, ensure_pki
from services.gateway.filters import serverheader
from tests.local.envoyfront import envoy_front, standin_gateway


@dataclass
class Front:
    """A running Envoy: its listener ``port`` on 127.0.0.1 and the PKI."""

    port: int
    pki: Pki


def _gateway(pki: Pki) -> tuple[int, threading.Event]:
    """The stand-in gateway: ``/readyz`` and ``/version`` answer 200, ``/missing`` 404, ``/stream`` a chunked
    stream, ``/reset`` closes the connection before any header (Envoy answers 503)."""

    async def ok(request: web.Request) -> web.Response:
        return web.json_response({"major": "1", "minor": "37"})

    async def missing(request: web.Request) -> web.Response:
        return web.json_response({"kind": "Status", "code": 404}, status=404)

    async def stream(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        await resp.prepare(request)
        await resp.write(b'{"type":"ADDED","object":{}}\n')
        return resp

    async def reset(request: web.Request) -> web.Response:
        assert request.transport is not None
        request.transport.abort()
        raise asyncio.CancelledError

    return standin_gateway(pki, [("/readyz", ok), ("/version", ok), ("/missing", missing), ("/stream", stream),
                                 ("/reset", reset)], [serverheader.on_response_prepare])


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    state = tmp_path_factory.mktemp("crdoapi-envoy")
    pki = ensure_pki(state, port=None)
    gateway_port, stop = _gateway(pki)
    try:
        with envoy_front(state, pki, gateway_port) as (port, _):
            yield Front(port=port, pki=pki)
    finally:
        stop.set()


def _exchange(front: Front, request: bytes) -> bytes:
    """Send raw HTTP/1.1 ``request`` bytes; the response head (status line and headers) Envoy answers."""
    context = ssl.create_default_context(cafile=str(front.pki.ca_cert))
    context.load_cert_chain(str(front.pki.admin_cert), str(front.pki.admin_key))
    context.set_alpn_protocols(["http/1.1"])
    out = b""
    with context.wrap_socket(socket.create_connection(("127.0.0.1", front.port), timeout=10),
                             server_hostname="localhost") as sock:
        sock.sendall(request)
        while b"\r\n\r\n" not in out and (data := sock.recv(65536)):
            out += data
    return out.partition(b"\r\n\r\n")[0]


def _proxy_headers(head: bytes) -> list[bytes]:
    """The ``Server`` and ``x-envoy-*`` header lines of a response head."""
    return [line for line in head.split(b"\r\n")[1:]
            if line.lower().startswith(b"server:") or line.lower().startswith(b"x-envoy-")]


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n", b"200"),
    (b"GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n", b"404"),
    (b"GET /stream?watch=1 HTTP/1.1\r\nHost: localhost\r\n\r\n", b"200"),
    # Envoy's local replies: a declared body over 3 MiB, a method its HTTP/1.1 parser refuses, a reset gateway,
    # headers over 1 MiB
    (b"POST /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4194304\r\n\r\n", b"413"),
    (b"FOO /version HTTP/1.1\r\nHost: localhost\r\n\r\n", b"400"),
    (b"GET /reset HTTP/1.1\r\nHost: localhost\r\n\r\n", b"503"),
    (b"GET /version HTTP/1.1\r\nHost: localhost\r\nx-big: " + b"a" * 1_100_000 + b"\r\n\r\n", b"431"),
], ids=["get", "404", "watch", "413", "400", "503", "431"])
def test_no_server_or_envoy_headers(front: Front, request_bytes: bytes, status: bytes) -> None:
    head = _exchange(front, request_bytes)
    assert head.split(b" ")[1] == status, head
    assert _proxy_headers(head) == [], head


def test_rendered_config_drops_server_and_envoy_headers() -> None:
    """The rendered config asks Envoy for exactly that: no Server header of its own, no x-envoy-* headers."""
    tls = envoy.TlsFiles(ca="ca", serving_cert="c", serving_key="k", client_cert="fc", client_key="fk")
    hcm = envoy.render(gateways=["127.0.0.1:1"], tls=tls)["static_resources"]["listeners"][0]["filter_chains"][0][
        "filters"][0]["typed_config"]
    assert hcm["server_header_transformation"] == "PASS_THROUGH"
    assert [f["typed_config"].get("suppress_envoy_headers") for f in hcm["http_filters"]] == [True]
