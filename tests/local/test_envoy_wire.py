"""The real Envoy on the wire, as kapi renders it (kapi.local.envoy), in front of a stand-in gateway.

What a client sees from Envoy itself, where kube-apiserver is Go's net/http: HTTP/1.0 requests are served
(not Envoy's default 426), header lists up to Go's 1 MiB pass over HTTP/1.1 and HTTP/2 whatever their number of
fields, a larger one is refused at once, and HTTP/2 SETTINGS advertise Go's MAX_HEADER_LIST_SIZE. The stand-in
gateway is an aiohttp app with the gateways' TLS identity and HTTP parser limits (services/gateway/server.py
PARSER_LIMITS), so these tests need no etcd or services.
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h2.events
import h2.settings
import pytest
from aiohttp import web
from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

from kapi.local import envoy
from kapi.local.pki import Pki, ensure_pki
from tests import h2util
from tests.local.envoyfront import envoy_front, standin_gateway

VERSION = {"major": "1", "minor": "37"}


@dataclass
class Front:
    """A running Envoy: its listener ``port`` on 127.0.0.1, the PKI, and the stand-in gateway's ``seen`` Hosts."""

    port: int
    pki: Pki
    seen: list[str]
    admin: str


def _gateway(pki: Pki, seen: list[str]) -> tuple[int, threading.Event]:
    """Start the stand-in gateway (HTTPS, the gateway certificate, the gateways' parser limits) in a thread.

    ``GET /headers`` answers ``{"count": <fields named x-h-*>, "big": <length of x-big>}`` as the gateway read them.
    """
    async def version(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Host", ""))
        return web.json_response(VERSION)

    async def readyz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def headers(request: web.Request) -> web.Response:
        return web.json_response({"count": sum(1 for name in request.headers if name.lower().startswith("x-h-")),
                                  "big": len(request.headers.get("x-big", ""))})

    return standin_gateway(pki, [("/version", version), ("/readyz", readyz), ("/headers", headers)])


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    state = tmp_path_factory.mktemp("envoy-wire")
    pki = ensure_pki(state, port=None)
    seen: list[str] = []
    gateway_port, stop = _gateway(pki, seen)
    try:
        with envoy_front(state, pki, gateway_port) as (port, admin):
            yield Front(port=port, pki=pki, seen=seen, admin=admin)
    finally:
        stop.set()


def _tls(front: Front, alpn: str) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=str(front.pki.ca_cert))
    context.load_cert_chain(str(front.pki.admin_cert), str(front.pki.admin_key))
    context.set_alpn_protocols([alpn])
    raw = socket.create_connection(("127.0.0.1", front.port), timeout=10)
    return context.wrap_socket(raw, server_hostname="localhost")


def _exchange(front: Front, request: bytes) -> tuple[bytes, float]:
    """Send raw HTTP/1.x ``request`` bytes; (everything until Envoy closes the connection, seconds taken)."""
    start = time.monotonic()
    out = b""
    with _tls(front, "http/1.1") as sock:
        sock.sendall(request)
        while data := sock.recv(65536):
            out += data
    return out, time.monotonic() - start


def test_http10_request_is_served_and_the_connection_closes(front: Front) -> None:
    """Go's net/http serves HTTP/1.0 and closes after the response (no keep-alive asked); Envoy's default is a
    426 Upgrade Required. ``curl --http1.0 https://.../version`` against kube-apiserver answers the version."""
    out, _ = _exchange(front, b"GET /version HTTP/1.0\r\nHost: example.test\r\n\r\n")  # recv returns b"": closed
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 OK\r\n"), out[:300]
    assert b"transfer-encoding" not in head.lower()  # HTTP/1.0 has no chunked coding
    assert json.loads(body) == VERSION
    assert front.seen[-1] == "example.test"


def test_http10_request_without_host_is_served(front: Front) -> None:
    """Go accepts an HTTP/1.0 request without Host (only HTTP/1.1 requires one): Envoy fills in localhost."""
    out, _ = _exchange(front, b"GET /version HTTP/1.0\r\n\r\n")
    assert out.startswith(b"HTTP/1.0 200 OK\r\n"), out[:300]
    assert front.seen[-1] == envoy.DEFAULT_HTTP10_HOST


def test_http10_keep_alive_keeps_the_connection(front: Front) -> None:
    with _tls(front, "http/1.1") as sock:
        for _ in range(2):
            sock.sendall(b"GET /version HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n")
            out = b""
            while b"\r\n\r\n" not in out or not out.rstrip().endswith(b"}"):
                data = sock.recv(65536)
                assert data, out  # not closed while keep-alive was asked
                out += data
            assert out.startswith(b"HTTP/1.0 200 OK\r\n"), out[:300]
            assert b"keep-alive" in out.partition(b"\r\n\r\n")[0].lower()


def test_curl_http10(front: Front) -> None:
    import shutil

    curl = shutil.which("curl")
    assert curl is not None, "curl (the machine's, /usr/bin/curl on Debian 12) is this test's real HTTP/1.0 client"
    result = subprocess.run([curl, "-sS", "--http1.0", "-i", "--cacert", str(front.pki.ca_cert),
                             f"https://localhost:{front.port}/version"], capture_output=True, timeout=20)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"HTTP/1.0 200 OK\r\n"), result.stdout[:300]
    assert json.loads(result.stdout.partition(b"\r\n\r\n")[2]) == VERSION


def test_linear_huffman_is_hpacks_encoding() -> None:
    data = bytes(range(256)) * 3
    assert h2util.LinearHuffman().encode(data) == HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH).encode(data)
    assert h2util.LinearHuffman().encode(b"") == b""


def _h2_get(front: Front, headers: list[tuple[str, str]], path: str = "/version") -> tuple[list[Any], float]:
    """GET ``path`` over HTTP/2 with extra ``headers``; (the stream's h2 events until it ends, seconds taken)."""
    start = time.monotonic()
    events: list[Any] = []
    with _tls(front, "h2") as sock:
        conn = h2util.client()
        conn.initiate_connection()
        conn.send_headers(1, [(":method", "GET"), (":path", path), (":scheme", "https"),
                              (":authority", "localhost"), *headers], end_stream=True)
        sock.sendall(conn.data_to_send())
        done = (h2.events.StreamEnded, h2.events.StreamReset, h2.events.ConnectionTerminated)
        while not any(isinstance(e, done) for e in events):
            data = sock.recv(65536)
            if not data:
                break
            events.extend(conn.receive_data(data))
            sock.sendall(conn.data_to_send())
    return events, time.monotonic() - start


def _status(events: list[Any]) -> bytes | None:
    return next((dict(e.headers)[b":status"] for e in events if isinstance(e, h2.events.ResponseReceived)), None)


def _body(events: list[Any]) -> bytes:
    return b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived))


def _h1_get(front: Front, headers: list[tuple[str, str]], path: str = "/version") -> tuple[bytes, bytes, float]:
    """GET ``path`` over HTTP/1.1 with extra ``headers`` (then close); (status line and headers, body, seconds)."""
    fields = b"".join(f"{name}: {value}\r\n".encode() for name, value in headers)
    out, seconds = _exchange(front, f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n".encode()
                             + fields + b"\r\n")
    head, _, body = out.partition(b"\r\n\r\n")
    return head, body, seconds


# Go's net/http has no limit on the number of header fields, only on their bytes (1 MiB): Envoy's default refuses
# over 100 fields (431 on HTTP/1.1, a reset stream on HTTP/2) and aiohttp's over 128 (a plain-text 400).
MANY_FIELDS = {"500-fields": [(f"x-h-{i}", "v") for i in range(500)],
               "20000-fields": [(f"x-h-{i}", "v" * 10) for i in range(20_000)]}
ONE_BIG_FIELD = [("x-big", "a" * 900_000)]


@pytest.mark.parametrize("headers", MANY_FIELDS.values(), ids=MANY_FIELDS.keys())
def test_http11_many_header_fields_reach_the_gateway(front: Front, headers: list[tuple[str, str]]) -> None:
    head, body, seconds = _h1_get(front, headers, "/headers")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n"), head[:300] + body[:300]
    assert json.loads(body) == {"count": len(headers), "big": 0}
    assert seconds < 3


@pytest.mark.parametrize("headers", MANY_FIELDS.values(), ids=MANY_FIELDS.keys())
def test_http2_many_header_fields_reach_the_gateway(front: Front, headers: list[tuple[str, str]]) -> None:
    events, seconds = _h2_get(front, headers, "/headers")
    assert _status(events) == b"200", events[:5]
    assert json.loads(_body(events)) == {"count": len(headers), "big": 0}
    assert seconds < 3


def test_http11_one_900kb_field_reaches_the_gateway(front: Front) -> None:
    head, body, _ = _h1_get(front, ONE_BIG_FIELD, "/headers")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n"), head[:300] + body[:300]
    assert json.loads(body) == {"count": 0, "big": 900_000}


def test_http2_one_900kb_field_reaches_the_gateway(front: Front) -> None:
    events, _ = _h2_get(front, ONE_BIG_FIELD, "/headers")
    assert _status(events) == b"200", events[:5]
    assert json.loads(_body(events)) == {"count": 0, "big": 900_000}


def test_http2_settings_advertise_gos_max_header_list_size(front: Front) -> None:
    """Go's http2 server sends SETTINGS_MAX_HEADER_LIST_SIZE = MaxHeaderBytes + 320 (1048896) for kube-apiserver's
    1 MiB; Envoy sends none unless told to (custom_settings_parameters)."""
    with _tls(front, "h2") as sock:
        conn = h2util.client()
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        settings: dict[int, int] = {}
        while not settings:
            data = sock.recv(65536)
            assert data, "closed before SETTINGS"
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RemoteSettingsChanged):
                    settings = {int(k): v.new_value for k, v in event.changed_settings.items()}
    assert settings[h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE] == 1_048_896 == envoy.MAX_HEADER_LIST_SIZE


@pytest.mark.parametrize("headers", [
    [("x-big", "a" * 300_000)],
    [("x-big", "a" * 1_040_000)],  # one field under Go's 1 MiB (nghttp2 refused any field over 64 KiB)
    [(f"x-big-{i}", "a" * 10_000) for i in range(90)],  # 900 KB over many fields
], ids=["300KB", "1MB-one-field", "900KB-90-fields"])
def test_http2_header_list_under_1mib_is_answered_at_once(front: Front, headers: list[tuple[str, str]]) -> None:
    events, seconds = _h2_get(front, headers)
    assert _status(events) == b"200", events
    assert seconds < 3


@pytest.mark.parametrize("headers", [
    [("x-big", "a" * 1_100_000)],
    [(f"x-big-{i}", "a" * 20_000) for i in range(60)],
], ids=["one-field", "60-fields"])
def test_http2_header_list_over_1mib_is_refused_at_once(front: Front, headers: list[tuple[str, str]]) -> None:
    """Over Go's 1 MiB the stream is reset (Envoy's HTTP/2 codec cannot answer 431 as Go's http2 server does;
    docs/kube-parity.md): the client sees the error at once, it does not wait."""
    events, seconds = _h2_get(front, headers)
    resets = [e for e in events if isinstance(e, h2.events.StreamReset)]
    assert _status(events) is None and resets, events
    assert seconds < 3


def test_http11_header_list_over_1mib_is_431(front: Front) -> None:
    """Go's net/http answers headers over MaxHeaderBytes (1 MiB) with 431 and closes the connection."""
    out, seconds = _exchange(front, b"GET /version HTTP/1.1\r\nHost: localhost\r\nx-big: " + b"a" * 1_100_000
                             + b"\r\n\r\n")
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), out[:300]
    assert b"content-type: text/plain; charset=utf-8\r\n" in head and b"connection: close" in head, head
    assert body == b"431 Request Header Fields Too Large"  # Go's plain text, not a Status
    assert seconds < 3
    out, seconds = _exchange(front, b"GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nx-big: "
                             + b"a" * 1_040_000 + b"\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 OK\r\n"), out[:300]
    assert seconds < 3


def test_runtime_takes_the_oghttp2_flag(front: Front) -> None:
    """The static layer alone sets the codec flag (no admin layer needed): /runtime shows it."""
    with urllib.request.urlopen(f"http://{front.admin}/runtime", timeout=5) as reply:
        runtime = json.loads(reply.read())
    assert runtime["entries"]["envoy.reloadable_features.http2_use_oghttp2"]["final_value"] == "true"
    assert runtime["layers"] == ["static"]


def test_config_has_no_admin_layer(tmp_path: Path) -> None:
    assert "admin_layer" not in envoy.compose_text()
